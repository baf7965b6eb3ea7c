// Widget "exact-broken": the real round against deliberately broken ones (teaching-only functions in
// specdec_core/web/exactness.py): each one's exact output law and, on "Sample 10,000 rounds", a seeded sample's test.

import { define } from "../ui/widget.js";
import { announce, el, fixed, grouped, pValue, verdictText } from "../ui/controls.js";
import { param } from "../ui/url.js";

const SAMPLES = 10_000;
const NAMES = {
  exact: "Exact: the real steps",
  unclipped: "Accept with p/q unclipped",
  "correct-from-p": "Correction drawn from p",
  "q-over-p": "Accept with q/p",
  unnormalized: "Residual not normalised",
  "draft-temperature": "Temperature on one side only",
  "greedy-soft": "Greedy draft declared as soft q",
  "zero-draft": "Draft probability 0, honest draft",
  "zero-naive": "Draft probability 0, naive p/0",
};

const SAMPLED = ["tv-distance", "tv-noise", "p-value", "exact"];

export default define(import.meta.url, (settings) => ({
  controls: [
    {
      key: "variant",
      label: "Implementation",
      kind: "select",
      options: Object.entries(NAMES),
      value: settings.args?.variant ?? "exact",
    },
    // Only Sample uses the seed; changing it clears the sample on screen, which was drawn with another.
    param("seed", 0, { url: false }),
  ],
  args: (v, s, extra) => ({
    variant: v.variant,
    p: s.args.p,
    q: s.args.q,
    labels: s.args.labels,
    n: extra?.n ?? 0,
    seed: v.seed,
  }),
  metrics: [
    { name: "exact-tv", label: "Exact TV(output, p)" },
    { name: "tv-distance", label: "Sampled TV(output, p)", format: fixed(4) },
    { name: "tv-noise", label: "Typical TV from noise alone", format: fixed(4) },
    { name: "p-value", label: "χ² p-value", format: pValue },
    { name: "exact", label: "Sample consistent with p?", format: verdictText },
  ],
  chart:
    "Bar chart of the target p against this implementation's exact output distribution and, after sampling, its sampled frequencies",
  view(ctx) {
    const description = el("p", "sd-verdict sd-verdict--quiet");
    const sampleButton = ctx.button(`Sample ${grouped(SAMPLES)} rounds`, () => sample(), "md-button--primary");
    const row = el("div", "sd-buttons", ctx.controls.seed.root, sampleButton);
    const verdict = announce("sd-verdict");
    ctx.el.append(ctx.controls.variant.root, description, row, verdict, ctx.tiles(), ctx.charts.figure);

    // The seed is the reader's: a press draws the sample of the seed on screen, and never changes it.
    const sample = () => ctx.request({ extra: { n: SAMPLES } });

    return {
      paint(result) {
        const m = result.metrics;
        const law = (row) => row.map((x, i) => `${result.labels[i]} ${x}`).join(", ");
        description.textContent = `${result.description} Exact output law: ${law(result.law)}; target p: ${law(result.target)}.`;
        verdict.textContent = result.verdict; // the exact law's reading, then the sample's
        if (!m.samples) for (const name of SAMPLED) ctx.clearMetric(name, "not sampled"); // nothing measured yet: no number
        ctx.setMetric("exact-tv", m["exact-tv"], m["exact-equal"] ? "0 (exactly p)" : fixed(4)(m["exact-tv"]));
      },
    };
  },
}));
