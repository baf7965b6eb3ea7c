// Widget "cost": what a forward pass costs, and whether speculation pays at the reader's batch size. Python
// (costs.py through web/cost.py) prices plain and speculative decoding on a roofline for the chosen hardware,
// models, weight precision, batch size and context; this module shows the verdict, the tiles, the roofline and the
// speedup across batch sizes, the presets' sources, and the race: both decoders on one clock, rounds from the
// engine (cost.race), animated with requestAnimationFrame (the final state at once under prefers-reduced-motion).
// URL state: batch, context, gamma, alpha, hardware, target, draft, weights (clamped, with a notice).

import { define } from "../ui/widget.js";
import { announce, el, fixed, grouped, select, times, turnOff } from "../ui/controls.js";
import { param } from "../ui/url.js";
import { DRAFTS, HARDWARE, TARGETS } from "./presets.js";

const WEIGHTS = [
  ["16", "16-bit"],
  ["8", "8-bit"],
  ["4", "4-bit"],
];
const RACE_TOKENS = 24;
const RACE_MS = 6000; // real time the longer lane takes to play
// Milliseconds with their thousands grouped, as the page writes counts: a slow race ran to "3430802.5 ms".
const ms = (v) => {
  if (Number(v) < 10) return `${Number(v).toFixed(2)} ms`;
  const [whole, tenths] = Number(v).toFixed(1).split(".");
  return `${grouped(Number(whole))}.${tenths} ms`;
};

export default define(import.meta.url, (settings) => {
  const a = settings.args;
  return {
    controls: [
      select("hardware", "Hardware", HARDWARE, a.hardware),
      select("target", "Target model", TARGETS, a.target),
      select("draft", "Draft model", DRAFTS, a.draft),
      select("weights", "Weights", WEIGHTS, String(a.weights)),
      param("batch", a.batch),
      param("context", a.context),
      param("gamma", a.gamma),
      param("alpha", a.alpha),
    ],
    args: (v) => ({ ...v, weights: Number(v.weights) }),
    metrics: [
      { name: "speedup", label: "Speedup at this batch", format: times },
      {
        name: "ridge-tokens",
        label: "Ridge: tokens per pass where the target turns compute-bound",
        format: (v) => grouped(Math.round(v)),
      },
      { name: "compute-bound", label: "Verification pass is", format: (v) => (v ? "compute-bound" : "memory-bound") },
      { name: "plain-pass-ms", label: "Time per pass, plain (one token per sequence)", format: ms },
      { name: "verify-pass-ms", label: "Time per pass, speculative (verifies γ + 1 per sequence)", format: ms },
      { name: "draft-step-ms", label: "Time per draft step", format: ms },
      { name: "plain-token-ms", label: "Per token, plain", format: ms },
      { name: "speculative-token-ms", label: "Per token, speculative (expected)", format: ms },
      { name: "memory-gb", label: "Memory needed: weights + KV caches", format: (v) => `${Number(v).toFixed(1)} GB` },
    ],
    charts: {
      roofline:
        "Roofline: attained TFLOP/s against arithmetic intensity, log-log, with the plain pass, the verification pass and a draft step marked",
      batch:
        "Line chart of the speedup against batch size at this γ, α and context, with break-even at 1× and your batch size circled",
    },
    view,
  };
});

function view(ctx) {
  const verdict = announce("sd-verdict sd-verdict--strong sd-cost-verdict");
  const memory = announce("sd-verdict sd-cost-memory");
  const sourceList = el("ul");
  const sources = el(
    "details",
    "sd-note sd-cost-sources",
    el("summary", "", "Where these numbers come from"),
    sourceList,
  );
  const race = raceView(ctx);
  ctx.el.append(
    ctx.group("sd-controls sd-cost-controls"),
    verdict,
    memory,
    ctx.tiles(),
    ctx.chartRow(),
    sources,
    race.root,
  );

  return {
    paint(result, args) {
      const m = result.metrics;
      const pays = m.speedup > 1;
      verdict.dataset.pays = String(pays);
      verdict.classList.toggle("sd-verdict--ok", pays);
      verdict.classList.toggle("sd-verdict--bad", !pays);
      const where = `At batch ${grouped(args.batch)} and ${grouped(args.context)} tokens of context`;
      const pass = `the verification pass of ${grouped(m["verify-tokens"])} tokens is ${result.bound.verify}-bound`;
      verdict.textContent = pays
        ? `${where}, speculation is ${times(m.speedup)} faster per token: ${pass}` +
          (result.bound.verify === "memory"
            ? ", so checking γ + 1 tokens costs what generating one does."
            : ", yet the tokens it saves still outweigh the drafts.")
        : `${where}, speculation is slower (${times(m.speedup)}): ${pass}, ` +
          (result.bound.verify === "memory"
            ? "so checking costs what generating one token does, but too few drafts are accepted to pay for drafting them."
            : "and every draft token the target checks now costs arithmetic time.");
      const fits = m["memory-fits"] === 1;
      memory.dataset.fits = String(fits);
      memory.classList.toggle("sd-verdict--ok", fits);
      memory.classList.toggle("sd-verdict--bad", !fits);
      memory.classList.toggle("sd-verdict--strong", !fits);
      memory.textContent = fits
        ? `Fits in memory: ${result.memory["needed-gb"].toFixed(1)} GB of ${result.memory["available-gb"].toFixed(0)} GB.`
        : `Does not fit: the weights and KV caches need ${result.memory["needed-gb"].toFixed(1)} GB, and this hardware has ${result.memory["available-gb"].toFixed(0)} GB. The times assume it fits.`;
      if (result["head-note"]) memory.textContent += ` ${result["head-note"]}`;
      sourceList.replaceChildren(
        ...result.presets.map((p) => {
          const item = el("li");
          item.append(el("strong", "", `${p.role}: ${p.name}`), ` (${p.numbers}). `, el("span", "", p.source));
          return item;
        }),
      );
      race.settingsChanged(args);
    },
    cleanup: () => race.stop(),
  };
}

// --- The race: plain and speculative decoding on one wall clock ---------------------------------------------

function raceView(ctx) {
  const root = el("section", "sd-cost-race");
  root.setAttribute("aria-label", "A race on one clock");
  root.dataset.race = "idle";
  const head = el("h3", "", "A race on one clock");
  const intro = el(
    "p",
    "sd-note",
    `Both decoders generate ${RACE_TOKENS} tokens for one sequence of the batch, with the settings above. Rounds come from the real engine; each step takes the time the cost model gives it.`,
  );
  const run = ctx.button("Run", () => start(), "md-button--primary");
  const reset = ctx.button("Reset", () => clear("idle"));
  const clock = el("output", "sd-cost-race__clock", "t = 0 ms");
  clock.setAttribute("aria-label", "Race clock");
  clock.setAttribute("aria-live", "off"); // it ticks every frame; the verdict says who won
  const bar = el("div", "sd-buttons");
  bar.append(run, reset, clock);
  const lanes = { plain: lane("plain", "Plain decoding"), speculative: lane("speculative", "Speculative decoding") };
  const legend = el("p", "sd-note sd-cost-race__legend");
  legend.innerHTML =
    '<span class="sd-cost-race__key sd-cost-race__key--pass"></span> target pass ' +
    '<span class="sd-cost-race__key sd-cost-race__key--draft"></span> draft step · tokens: ' +
    '<span class="sd-token sd-token--accepted">accepted</span><span class="sd-token sd-token--rejected">rejected</span>' +
    '<span class="sd-token sd-token--discarded">discarded</span><span class="sd-token sd-token--correction">correction</span>' +
    '<span class="sd-token sd-token--bonus">bonus</span>';
  const summary = announce("sd-verdict sd-verdict--quiet");
  summary.textContent = "Press Run: both lanes start together.";
  root.append(head, intro, bar, lanes.plain.root, lanes.speculative.root, legend, summary);

  let frame = 0;
  let runs = 0;
  let raced = null; // the settings the race on screen was run with
  const reduced = () => window.matchMedia("(prefers-reduced-motion: reduce)").matches;

  function lane(name, title) {
    const root = el("div", "sd-cost-race__lane");
    root.dataset.lane = name;
    root.dataset.done = "false";
    const top = el("div", "sd-cost-race__head");
    const total = el("output", "sd-cost-race__total", "");
    total.dataset.metric = `race-${name === "plain" ? "plain" : "speculative"}-ms`;
    total.setAttribute("aria-live", "off"); // the verdict says who won
    top.append(el("strong", "", title), total);
    const track = el("div", "sd-cost-race__track");
    track.setAttribute("role", "img");
    track.setAttribute("aria-label", `${title}: its passes on the clock`);
    const tokens = el("div", "sd-cost-race__tokens");
    root.append(top, track, tokens);
    return { root, track, tokens, total, items: [], end: 0 };
  }

  function clear(state) {
    cancelAnimationFrame(frame);
    frame = 0;
    for (const l of Object.values(lanes)) {
      l.track.replaceChildren();
      l.tokens.replaceChildren();
      l.total.textContent = "";
      delete l.total.dataset.value;
      l.items = [];
      l.root.dataset.done = "false";
    }
    clock.textContent = "t = 0 ms";
    root.dataset.race = state;
    turnOff(run, false);
    if (state === "idle") summary.textContent = "Press Run: both lanes start together.";
  }

  // Every step becomes hidden DOM now; the clock reveals it when its time comes.
  function build(l, steps, scale) {
    l.end = steps.at(-1).end;
    let drafted = []; // this round's draft chips, told their fate when the verification pass ends
    for (const step of steps) {
      const seg = el("span", `sd-cost-race__seg sd-cost-race__seg--${step.kind === "draft" ? "draft" : "pass"}`);
      seg.style.left = `${(100 * step.start) / scale}%`;
      seg.hidden = true;
      l.track.append(seg);
      l.items.push({
        at: step.start,
        show: () => (seg.hidden = false),
        grow: (t) => (seg.style.width = `${(100 * (Math.min(t, step.end) - step.start)) / scale}%`),
      });
      if (step.kind === "draft") {
        const chip = el("span", "sd-token sd-token--drafted", step.word);
        chip.hidden = true;
        chip.dataset.fate = step.fate;
        l.tokens.append(chip);
        drafted.push(chip);
        l.items.push({ at: step.start, show: () => (chip.hidden = false) });
        continue;
      }
      const fates = drafted;
      drafted = [];
      const chips = step.emits
        .filter(([, kind]) => kind !== "accepted")
        .map(([word, kind]) => Object.assign(el("span", `sd-token sd-token--${kind}`, word), { hidden: true }));
      l.tokens.append(...chips);
      l.items.push({
        at: step.end,
        show: () => {
          for (const chip of fates) chip.className = `sd-token sd-token--${chip.dataset.fate}`;
          for (const chip of chips) chip.hidden = false;
        },
      });
    }
  }

  function draw(t) {
    clock.textContent = `t = ${ms(t)}`;
    for (const [name, l] of Object.entries(lanes)) {
      for (const item of l.items) {
        if (item.at <= t && !item.shown) {
          item.shown = true;
          item.show();
        }
        if (item.shown && item.grow) item.grow(t);
      }
      if (t >= l.end && l.root.dataset.done === "false") {
        l.root.dataset.done = "true";
        ctx.setMetric(`race-${name}-ms`, l.end, `finished in ${ms(l.end)}`);
      }
    }
  }

  function finish(result) {
    const m = result.metrics;
    root.dataset.race = "done";
    turnOff(run, false);
    summary.textContent =
      `${m["race-tokens"]} tokens: plain decoding took ${ms(m["race-plain-ms"])}, speculative ${ms(m["race-speculative-ms"])} ` +
      `(${times(m["race-speedup"])} on this run, ${m["race-rounds"]} rounds, ${fixed(2)(m["race-tokens-per-pass"])} tokens per target pass). ` +
      "One short run is luckier or unluckier than the expected speedup above; Run again for another.";
  }

  function play(result) {
    clear("running");
    turnOff(run, true);
    const scale = Math.max(result.plain.total, result.speculative.total);
    build(lanes.plain, result.plain.steps, scale);
    build(lanes.speculative, result.speculative.steps, scale);
    summary.textContent = "Racing…";
    if (reduced()) {
      draw(scale);
      finish(result);
      return;
    }
    const began = performance.now();
    const tick = (now) => {
      const t = Math.max(0, Math.min(scale, ((now - began) / RACE_MS) * scale)); // a frame stamped before began
      draw(t);
      if (t < scale) frame = requestAnimationFrame(tick);
      else finish(result);
    };
    frame = requestAnimationFrame(tick);
  }

  const settingsKey = (args) => JSON.stringify(args);
  async function start() {
    turnOff(run, true);
    summary.textContent = "Asking the engine for the rounds…";
    const seed = runs++;
    let asked = null;
    const result = await ctx.request({
      handler: "cost.race",
      args: (v) => (asked = { ...v, weights: Number(v.weights), tokens: RACE_TOKENS, seed }),
      paint: (r) => {
        raced = settingsKey({ ...asked, tokens: undefined, seed: undefined });
        play(r);
      },
    });
    if (result === null) turnOff(run, false); // the settings moved on before the rounds came back
  }

  return {
    root,
    stop: () => cancelAnimationFrame(frame),
    // A race belongs to the settings it ran with: new settings clear it.
    settingsChanged(args) {
      if (raced !== null && raced !== settingsKey({ ...args, tokens: undefined, seed: undefined })) {
        raced = null;
        clear("idle");
        summary.textContent = "The settings changed: press Run to race with them.";
      }
    },
  };
}
