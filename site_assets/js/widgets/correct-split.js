// Widget "correct-split": one position where a draft token may be rejected: p, q, min(p, q), the residual, and a
// "proof" chart where accepted mass and correction mass add up to p(x). "Sample 10,000 rounds" runs the real steps
// in the worker and compares the emitted tokens with p.

import { define } from "../ui/widget.js";
import { announce, el, fixed, grouped, pValue, turnOff, verdictText } from "../ui/controls.js";
import { param } from "../ui/url.js";

const PRESETS = [
  ["worked", "Our example"],
  ["disjoint", "Disjoint supports"],
  ["equal", "p = q"],
  ["one-hot", "One-hot draft"],
];
const DEFAULTS = { temperature: 1, shift: 0, blend: 0 };
const SAMPLES = 10_000;
const PAIR = ["preset", "temperature", "shift", "blend"];
const temperatureText = (v) => (v < 1 ? `${fixed(2)(v)} (sharper)` : v > 1 ? `${fixed(2)(v)} (flatter)` : "1 (as is)");

export default define(import.meta.url, (settings) => {
  const args = { preset: "worked", ...DEFAULTS, ...settings.args };
  return {
    controls: [
      {
        key: "preset",
        label: "Starting pair",
        kind: "choice",
        options: PRESETS,
        value: args.preset,
        url: true,
        onChange: (ctx) => ctx.set(DEFAULTS, { quiet: true }),
      },
      {
        key: "temperature",
        label: "Draft temperature",
        min: 0.25,
        max: 4,
        step: 0.25,
        value: args.temperature,
        format: temperatureText,
        url: true,
      },
      {
        key: "shift",
        label: "Draft shift (tokens)",
        min: -2,
        max: 2,
        step: 1,
        value: args.shift,
        format: (v) => (v > 0 ? `+${v}` : String(v)),
        url: true,
      },
      {
        key: "blend",
        label: "Blend draft toward target",
        min: 0,
        max: 1,
        step: 0.05,
        value: args.blend,
        format: (v) => `${Math.round(v * 100)}%`,
        url: true,
      },
      param("seed", 0, { url: false, live: false }), // only Sample uses it
    ],
    args: (v) => Object.fromEntries(PAIR.map((key) => [key, v[key]])),
    metrics: [
      { name: "beta", label: "β = Σ min(p, q): P(a draft token is accepted)", format: fixed(3) },
      { name: "reject-rate", label: "Rejection probability 1 − β", format: fixed(3) },
      { name: "draft-tv", label: "TV(p, q) = 1 − β", format: fixed(3) },
      {
        name: "identity-gap",
        label: "Largest |stack − p(x)|",
        format: (v) => (v === 0 ? "0 (exact)" : Number(v).toExponential(1)),
      },
      { name: "tv-distance", label: "TV(emitted, p)", format: fixed(4) },
      { name: "tv-noise", label: "Typical TV from noise alone", format: fixed(4) },
      { name: "p-value", label: "χ² p-value", format: pValue },
      {
        name: "correction-share",
        label: "Rounds ending in a correction",
        format: (v, m) => `${fixed(3)(v)} (theory ${fixed(3)(m["correction-share-theory"])})`,
      },
      { name: "exact", label: "Output = target?", format: verdictText },
    ],
    charts: {
      dists: "Grouped bar chart of the target p, the draft q, the accepted mass min(p, q) and the residual, per token",
      proof:
        "Stacked bar chart per token: the mass emitted through an accepted draft, min(p, q), stacked on the mass emitted through a correction, (1 − β) times the residual; a marker shows p(x) at the top of each stack",
    },
    view,
  };
});

function view(ctx) {
  const splitTiles = ctx.tiles(["beta", "reject-rate", "draft-tv", "identity-gap"]);
  const sampleTiles = ctx.tiles(["tv-distance", "tv-noise", "p-value", "correction-share", "exact"]);
  // Nothing measured until a Sample, for this pair: the tiles say so (as Exactness's do), not "…" as if loading.
  const unsampled = () => {
    for (const out of sampleTiles.querySelectorAll("[data-metric]")) ctx.clearMetric(out.dataset.metric, "not sampled");
  };

  const sampleButton = ctx.button(`Sample ${grouped(SAMPLES)} rounds`, () => runSample(), "md-button--primary");
  const sampleRow = el("div", "sd-buttons", ctx.controls.seed.root, sampleButton);
  const sampleChart = ctx.chart(
    "Bar chart of the emitted-token frequencies of the sampled rounds against the target p, with two-standard-error bars",
  );
  sampleChart.hidden = true;
  const verdict = announce(
    "sd-verdict",
    "Not sampled yet: the charts above are exact; press the button to test the real algorithm.",
  );
  const sampleBox = el("div", "sd-cbe-sample", sampleRow, verdict, sampleChart, sampleTiles);
  const inert = el("p", "sd-note"); // why temperature has no effect on this pair, when it has none
  inert.dataset.sdNote = "temperature";
  inert.hidden = true;
  ctx.el.append(
    ctx.controls.preset.root,
    ctx.group("sd-controls sd-controls--values", ["temperature", "shift", "blend"]),
    inert,
    splitTiles,
    ctx.charts.dists,
    ctx.charts.proof,
    sampleBox,
  );
  unsampled();

  let current = null; // the split on screen: p, q and labels for the sampler
  const chips = ctx.controls.preset.root.querySelectorAll("button");
  // A chip is ticked only while the pair on screen is its preset (a chip resets the sliders; they bend it), from
  // the first paint on: a link may bring a bent pair.
  const tick = (key) => {
    const asIs = key === "preset" || Object.entries(DEFAULTS).every(([k, v]) => ctx.controls[k].value === v);
    for (const b of chips)
      b.setAttribute("aria-pressed", String(asIs && b.dataset.value === ctx.controls.preset.value));
  };
  tick(null);
  for (const key of PAIR) {
    ctx.on(ctx.controls[key].input, ctx.controls[key].event, () => {
      tick(key);
      // A sample belongs to the pair it was drawn for: when the pair changes, its numbers go.
      sampleChart.hidden = true;
      unsampled();
      if (verdict.dataset.sampled) verdict.textContent = "The pair changed: sample again to test it.";
    });
  }

  function paintSample(result) {
    sampleChart.hidden = false;
    ctx.render(sampleChart, result.figure);
    const m = result.metrics;
    ctx.setMetrics(m);
    verdict.dataset.sampled = "true";
    verdict.textContent = m.exact
      ? `TV ${fixed(4)(m["tv-distance"])} against a typical ${fixed(4)(m["tv-noise"])} from sampling noise alone; ` +
        `χ² p-value ${fixed(3)(m["p-value"])}: the emitted tokens are consistent with p. ` +
        "The same seed draws the same sample; another seed draws another, equally honest one."
      : `χ² p-value ${Number(m["p-value"]).toExponential(1)}: this sample looks unlike p. An exact sampler does this ` +
        "about once in a thousand seeds; try another seed before suspecting the algorithm.";
  }

  async function runSample() {
    turnOff(sampleButton, true);
    verdict.textContent = `Running ${grouped(SAMPLES)} rounds of the real algorithm…`;
    try {
      // The seed is the reader's: a press draws the sample of the seed on screen, and never changes it.
      const seed = ctx.controls.seed.value;
      const args = () => ({ p: current.p, q: current.q, labels: current.labels, n: SAMPLES, seed });
      const result = await ctx.request({ handler: "correct.sample", args, paint: paintSample });
      if (!result) verdict.textContent = "The pair changed while it was sampled: sample again to test it.";
    } catch (err) {
      verdict.textContent = "The sample failed; see the error above.";
      throw err;
    } finally {
      turnOff(sampleButton, false);
    }
  }

  return {
    paint(result) {
      current = result;
      inert.textContent = result.temperature_note;
      inert.hidden = !result.temperature_note;
    },
  };
}
