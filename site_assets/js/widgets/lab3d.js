// Widget "lab3d": the home page's 3D lab. Rounds along one axis, draft positions along another, and the verify
// test as height: each checked proposal stands on a stem as tall as min(1, p/q) with its uniform u as a marker,
// so "accepted" means "below the top of the stem". Corrections and bonuses float above, discarded drafts lie
// on the floor. Python (handler home.run) runs the rounds and builds the figure; this file only wires it up.
//
//   <div class="sd-widget" data-widget="lab3d">
//   <script type="application/json">{"handler": "home.run", "args": {"gamma": 4, "alpha": 0.8, ..., "rounds": 16}}</script>
//   </div>
//
// Controls: "Speculation length γ", "Agreement rate α", "Draft cost c", "Seed" (URL state gamma, alpha, cost, seed).
// Buttons replay the run one half-step at a time (drafted, then checked): Run (Stop), Step, Reset. The chart,
// the table, the summary and the cards always describe the same rounds: those checked so far.

const PACE_MS = 260; // between replay frames, so the eye can follow a round from drafted to checked

const percent = (v) => `${(v * 100).toFixed(1)}%`;
const times = (v) => `${v.toFixed(2)}×`;
const plain = (v) => v.toFixed(2);

const CARDS = [
  {
    name: "target-calls-saved",
    label: "Sequential target calls replaced by one check",
    note: "tokens per target pass, minus the one a plain pass gives",
    format: plain,
  },
  {
    name: "relative-latency",
    label: "Relative latency under the draft cost",
    note: "speculative time ÷ plain time, in target passes",
    format: times,
  },
  {
    name: "discarded-fraction",
    label: "Drafts discarded after the first rejection",
    note: "share of all drafted tokens thrown away unchecked",
    format: percent,
  },
];

function element(tag, className, text) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
}

SDLab.register("lab3d", {
  mount(el, ctx) {
    const { handler, args: defaults } = ctx.settings;
    const P = SDLab.PARAMS;
    const state = ctx.url.read({ gamma: P.gamma, alpha: P.alpha, cost: P.cost, seed: P.seed });
    const rounds = defaults.rounds; // rounds in the run, all drawn in the chart

    // --- controls
    const gamma = ctx.slider({ key: "gamma", label: "Speculation length γ", ...P.gamma, value: state.gamma, format: (v) => `${v}` });
    const alpha = ctx.slider({ key: "alpha", label: "Agreement rate α", ...P.alpha, value: state.alpha, format: (v) => v.toFixed(2) });
    const cost = ctx.slider({ key: "cost", label: "Draft cost c", ...P.cost, value: state.cost, format: (v) => v.toFixed(2) });
    const seed = ctx.number({ key: "seed", label: "Seed", ...P.seed, value: state.seed });
    const controls = element("div", "sd-lab3d__controls");
    controls.append(gamma.root, alpha.root, cost.root, seed.root);

    // --- the scene, with the status line mirrored beside it (the one [data-sd-status] stays in the header)
    const caption = element("p", "sd-lab3d__caption");
    const status = element("span", "sd-lab3d__status");
    status.setAttribute("aria-hidden", "true"); // the header's status line already speaks to screen readers
    caption.append(status, element("span", "sd-lab3d__hint", "Drag to orbit · wheel to zoom · hover a token for its test"));
    const header = document.querySelector("[data-sd-status]");
    const mirror = () => {
      status.textContent = header?.textContent || "";
      status.dataset.state = header?.dataset.sdStatus || "loading";
    };
    const watcher = new MutationObserver(mirror);
    if (header) watcher.observe(header, { attributes: true, childList: true, characterData: true, subtree: true });
    mirror();

    const chart = ctx.chart(
      "3D chart of speculative rounds: round along x, draft position along y, and the verify test as height. " +
        "The text summary and the table below describe the same rounds.",
    );
    chart.classList.add("sd-lab3d__chart");

    // --- replay
    const run = ctx.button("Run", () => (task ? task.stop() : play()));
    const step = ctx.button("Step", () => advance());
    const reset = ctx.button("Reset", () => show(1, true));
    const latest = element("p", "sd-lab3d__latest");
    latest.setAttribute("aria-live", "polite");
    const replay = element("div", "sd-lab3d__replay");
    const buttons = element("div", "sd-lab3d__buttons");
    buttons.append(run, step, reset);
    replay.append(buttons, latest);

    // --- metrics: simulated beside theory
    const cards = element("div", "sd-lab3d__metrics");
    for (const card of CARDS) {
      const box = element("div", "sd-lab3d__metric");
      box.append(element("span", "sd-lab3d__label", card.label));
      const value = element("output", "sd-lab3d__value", "…");
      value.dataset.metric = card.name;
      value.setAttribute("aria-live", "polite");
      const theory = element("span", "sd-lab3d__theory", "theory ");
      const expected = element("output", "", "…");
      expected.dataset.metric = `${card.name}-theory`;
      theory.append(expected);
      box.append(value, theory, element("span", "sd-lab3d__note", card.note));
      cards.append(box);
    }
    const footnote = element("p", "sd-lab3d__footnote");

    // --- the same rounds as text: a live summary and a table
    const summary = element("p", "sd-lab3d__summary");
    summary.setAttribute("aria-live", "polite");
    const details = element("details", "sd-lab3d__details");
    details.append(element("summary", "", "The rounds in the chart, as a table"));
    const table = element("table", "sd-lab3d__table");
    details.append(table);

    el.append(controls, caption, chart, replay, cards, footnote, summary, details);

    // --- painting
    const values = () => ({ gamma: gamma.value, alpha: alpha.value, cost: cost.value, seed: seed.value });
    let view = { shown: rounds, pending: false }; // what the chart shows: all rounds, or a replay's progress
    let task = null;

    const paintTable = (rows) => {
      table.replaceChildren();
      const head = table.createTHead().insertRow();
      for (const title of ["Round", "Drafts, in order", "Ended with", "Tokens emitted"]) {
        const th = element("th", "", title);
        th.scope = "col";
        head.append(th);
      }
      const body = table.createTBody();
      for (const row of rows) {
        const tr = body.insertRow();
        const th = element("th", "", String(row.round));
        th.scope = "row";
        tr.append(th);
        tr.insertCell().textContent = row.drafts.join(", ");
        tr.insertCell().textContent = row.final;
        tr.insertCell().textContent = String(row.emitted);
      }
    };

    // On a narrow screen the wide scene would be cut at the sides: step the camera back, keeping its direction.
    const fit = (figure) => {
      const width = chart.clientWidth;
      const eye = figure.layout?.scene?.camera?.eye;
      if (!eye || !width || width >= 640) return figure;
      const far = structuredClone(figure);
      const k = Math.min(2.2, 640 / width);
      far.layout.scene.camera.eye = { x: eye.x * k, y: eye.y * k, z: eye.z * k };
      return far;
    };

    // One frame paints everything from one answer: the cards count the same checked rounds as the chart.
    const paint = (result, args) => {
      ctx.render(chart, fit(result.figure));
      latest.textContent = result.latest;
      summary.textContent = result.summary;
      paintTable(result.table);
      step.disabled = view.shown >= rounds && !view.pending;
      const m = result.metrics;
      for (const card of CARDS) {
        // Before the first check there is nothing to count: the card says so instead of a number.
        if (card.name in m) ctx.setMetric(card.name, m[card.name], card.format(m[card.name]));
        else ctx.setMetric(card.name, "", "—");
        ctx.setMetric(`${card.name}-theory`, m[`${card.name}-theory`], card.format(m[`${card.name}-theory`]));
      }
      const passes = m["target-passes"];
      footnote.textContent = passes
        ? `Counted over the ${passes === 1 ? "round" : `${passes} rounds`} checked so far: ` +
          `${m["tokens-emitted"]} tokens, speedup ${times(m.speedup)} (theory ${times(m["speedup-theory"])}). ` +
          `Theory assumes i.i.d. acceptance, as this model pair has (Leviathan et al. 2023, Eq. 1 and Theorem 3.8); ` +
          `a few rounds scatter around it.`
        : "No round has been checked yet: the cards fill in as the target checks each round.";
      el.dataset.args = JSON.stringify(args);
    };

    const full = ctx.latest(handler, paint);
    const refresh = () => {
      task?.stop();
      view = { shown: rounds, pending: false };
      const v = values();
      ctx.url.write(v);
      full({ ...defaults, ...v });
    };

    // A replay frame: the first rounds of the same seeded run, the newest one drafted (pending) or checked.
    const show = async (shown, pending, signal) => {
      view = { shown, pending };
      const args = { ...defaults, ...values(), shown, pending };
      paint(await ctx.call(handler, args, { signal }), args);
    };

    const advance = (signal) => {
      if (view.pending) return show(view.shown, false, signal);
      if (view.shown >= rounds) return show(1, true, signal); // Step after the last round starts over
      return show(view.shown + 1, true, signal);
    };

    const play = async () => {
      task = ctx.task();
      run.textContent = "Stop";
      const { signal } = task;
      try {
        if (view.shown >= rounds && !view.pending) await show(1, true, signal);
        while (!signal.aborted && (view.shown < rounds || view.pending)) {
          await new Promise((resolve) => setTimeout(resolve, PACE_MS));
          if (!signal.aborted) await advance(signal);
        }
      } catch (err) {
        if (err?.name !== "AbortError") throw err;
      } finally {
        task = null;
        if (el.isConnected) run.textContent = "Run";
      }
    };

    for (const control of [gamma, alpha, cost]) control.input.addEventListener("input", refresh);
    seed.input.addEventListener("change", () => {
      seed.value = Math.min(P.seed.max, Math.max(P.seed.min, Math.round(seed.value) || 0));
      refresh();
    });

    // Paint the build-time run at once when it is the run the URL asks for; then go live either way.
    const same = ["gamma", "alpha", "cost", "seed"].every((k) => defaults[k] === state[k]);
    if (ctx.initial && same) paint(ctx.initial, { ...defaults });
    ctx.ready.then(refresh, () => {});

    return () => watcher.disconnect();
  },
});
