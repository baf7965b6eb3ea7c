// Widget "tuning-policies": fixed γ, confidence threshold τ, dynamic +2/−1 and the oracle, side by side on the n-gram
// pair. Run streams the run in chunks, each call handed the runs' state (the chunks make exactly the run one call
// would), so progress shows and Stop ends it between chunks.

import { define } from "../ui/widget.js";
import { el, fixed, output, scroller, turnOff } from "../ui/controls.js";
import { param } from "../ui/url.js";

const CHUNK = 25; // tokens per policy per call: short enough that Stop answers quickly
const POLICIES = [
  ["fixed", "Fixed γ"],
  ["confidence", "Confidence τ"],
  ["dynamic", "Dynamic +2/−1"],
  ["oracle", "Oracle (upper bound on average)"],
];
const MEASURES = [
  ["tokens-per-pass", "Tokens per target pass", 3],
  ["draft-per-token", "Draft steps per emitted token", 3],
  ["discarded-fraction", "Discarded share of drafts", 3],
  ["speedup", "Speedup at cost c", 2],
];

export default define(import.meta.url, (settings) => {
  const base = settings.args || {};
  return {
    live: false, // nothing to compute until Run: the build-time run is on screen
    controls: [
      { key: "temperature", label: "Temperature", min: 0.1, max: 2, step: 0.1, value: 1, format: fixed(1) },
      { key: "top_k", label: "Top-k (0 = all tokens)", kind: "number", min: 0, max: 1000, step: 1, value: 0 },
      { key: "top_p", label: "Top-p", min: 0.05, max: 1, step: 0.05, value: 1, format: fixed(2) },
      {
        key: "gamma",
        label: "Speculation length γ (fixed; dynamic starts here)",
        min: 1,
        max: 8,
        step: 1,
        value: base.gamma ?? 4,
      },
      {
        key: "tau",
        label: "Confidence threshold τ",
        min: 0,
        max: 1,
        step: 0.05,
        value: base.tau ?? 0.5,
        format: fixed(2),
      },
      param("cost", base.cost),
      {
        key: "tokens",
        label: "Tokens per policy N",
        kind: "number",
        min: 25,
        max: 5000,
        step: 25,
        value: base.tokens ?? 300,
      },
      param("seed", base.seed, { url: false }),
    ].map((spec) => ({ ...spec, live: false })),
    metrics: [
      { name: "alpha", format: fixed(3) },
      ...POLICIES.flatMap(([key]) => MEASURES.map(([m, , digits]) => ({ name: `${key}-${m}`, format: fixed(digits) }))),
    ],
    chart: "Grouped bar chart comparing the four draft-length policies on four measures",
    view,
  };
});

function view(ctx) {
  // Two buttons rather than runButton's one toggle: Stop stays on screen, disabled while nothing runs.
  const runner = ctx.runner(run, (running) => {
    const [on, off] = running ? [stop, runButton] : [runButton, stop];
    turnOff(on, false);
    turnOff(off, true, on); // the keyboard's focus follows
  });
  const runButton = ctx.button("Run", () => runner.run(), "md-button--primary");
  const stop = ctx.button("Stop", () => runner.stop());
  stop.disabled = true;
  const progress = Object.assign(el("progress"), { max: 1, value: 0 });
  progress.setAttribute("aria-label", "Run progress");
  const status = el("output", "sd-tuning-progress");
  status.setAttribute("aria-live", "polite");
  status.dataset.state = "idle";
  const bar = el("div", "sd-buttons", runButton, stop, progress, status);

  // The table holds every number the chart shows, as [data-metric] cells (metric names: POLICY-MEASURE).
  const table = el("table", "sd-table sd-table--numeric");
  const head = MEASURES.map(([, label]) => `<th scope="col">${label}</th>`).join("");
  const rows = POLICIES.map(
    ([key, label]) =>
      `<tr><th scope="row">${label}</th>` +
      MEASURES.map(([m]) => `<td><output data-metric="${key}-${m}" aria-live="off">…</output></td>`).join("") +
      "</tr>",
  ).join("");
  table.innerHTML = `<caption>Per policy, over the tokens generated so far</caption><thead><tr><th scope="col">Policy</th>${head}</tr></thead><tbody>${rows}</tbody>`;
  const measured = el(
    "p",
    "sd-tuning-measured",
    "Measured per-token acceptance rate α under fixed γ: ",
    output("alpha"),
  );
  const sample = el("p", "sd-note");
  // A run takes seconds, so the controls do not start one: they say so, and say when the numbers are not theirs.
  const hint = el(
    "p",
    "sd-note",
    "These settings apply to the next Run; moving them changes nothing until you press it.",
  );
  const wrap = scroller("Per policy, over the tokens generated so far", table);
  ctx.el.append(ctx.group("sd-controls"), hint, bar, ctx.charts.figure, wrap, measured, sample);
  const say = (state, text) => {
    status.dataset.state = state;
    status.textContent = text;
  };
  // The settings the numbers on screen were measured with (the build-time run's, then each Run's). Controls moved
  // back to them say again what the status said before: "Settings changed" had stayed under numbers that were theirs.
  const SINCE = " The settings have changed since it started: press Run to measure them.";
  const CHANGED = "Settings changed: the numbers below are from the previous settings; press Run to measure these.";
  let measuredWith = JSON.stringify(ctx.start);
  let before = null; // the status the "changed" note replaced
  const moved = () => JSON.stringify(ctx.values()) !== measuredWith;
  for (const c of Object.values(ctx.controls)) {
    ctx.on(c.input, c.event, () => {
      if (runner.running()) return;
      if (!moved()) {
        if (before) say(before.state, before.text);
        else status.textContent = status.textContent.replace(SINCE, "");
        before = null;
        return;
      }
      if (!before) before = { state: status.dataset.state, text: status.textContent };
      say("changed", CHANGED);
    });
  }
  // A chunk that emitted nothing under fixed γ (its run had spent its budget) keeps the text on screen: the last
  // chunk of a 400-token run showed “”.
  const said = (result, label) => {
    const text = result.sample.slice(-240).trim();
    if (text) sample.textContent = `${label}: “${text}”`;
  };

  // Python's first call trains the n-gram models (a second or two in the browser): made as soon as Python is up,
  // it lets Run start at once. The build-time numbers stay on screen; the same seed run live gives the same ones.
  void ctx.request({
    handler: "tuning.policies",
    args: () => ({ tokens: 1, seed: 0 }),
    adopt() {
      if (status.dataset.state === "idle") status.textContent = "Python is ready: press Run for a live run.";
    },
    paint: () => {},
  });

  async function run(signal) {
    // The number fields come clamped to their ranges (and seed and top-k to whole numbers) by the binding.
    const { tokens, ...args } = ctx.values();
    const total = Math.round(tokens);
    let state = null;
    let done = 0;
    // Every chunk is shown as it comes (adopt, not paint): a run keeps the settings it started with.
    const adopt = (result, asked) => {
      state = result.state;
      done += asked.tokens;
      progress.value = done;
      ctx.render(ctx.charts.figure, result.figure);
      ctx.setMetrics(result.metrics);
      said(result, "Latest text under fixed γ");
      status.textContent = `${done} / ${total} tokens per policy`;
    };
    progress.max = total;
    progress.value = 0;
    measuredWith = JSON.stringify(ctx.values());
    before = null;
    say("running", `0 / ${total} tokens per policy`);
    try {
      while (done < total && !signal.aborted) {
        const chunk = () => ({ ...args, tokens: Math.min(CHUNK, total - done), total, state });
        await ctx.request({ handler: "tuning.policies", args: chunk, adopt, paint: () => {} });
      }
    } finally {
      // Settings moved during the run are not its settings: the end says so, as a move after it would.
      const since = moved() ? SINCE : "";
      if (done >= total) say("done", `Done: ${total} tokens per policy (seed ${args.seed}).${since}`);
      else say("stopped", `Stopped at ${done} / ${total} tokens per policy.${since}`);
    }
  }

  // A link that sets a control (the draft cost the page shares, say) left an empty chart and blank tiles, under a
  // binding's "Computing for c = 0.1…" that nothing answered before Run: the build-time run is shown instead, marked
  // as other settings' numbers.
  if (ctx.initial && moved()) ctx.paint(ctx.initial);
  return {
    paint(result) {
      said(
        result,
        `Build-time run (${ctx.start.tokens} tokens per policy, seed ${ctx.start.seed}), text under fixed γ`,
      );
      status.textContent = "Showing a build-time run; press Run for a live one.";
      if (!moved()) return;
      before = { state: status.dataset.state, text: status.textContent };
      say("changed", CHANGED);
    },
  };
}
