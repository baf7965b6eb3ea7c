// Widget "drafters-typical": the exact rule beside Medusa's typical acceptance, same bigram drafts and seed. Python
// (web/drafters.py) returns acceptance per draft position for both rules, the first token's law after the passage
// under each, and the lossy rule's exact distance from the target (tv-distance).
//
//   <div class="sd-widget" data-widget="drafters-typical">
//   <template data-sd-settings>{"handler": "drafters.typical", "args": {"epsilon": 0.01, "delta": 0.02, "gamma": 4, "tokens": 160, "seed": 0, "passage": "ordinary"}}</template>
//   </div>

import { define } from "../ui/widget.js";
import { el, fixed } from "../ui/controls.js";

export default define(import.meta.url, (settings) => ({
  controls: [
    { key: "epsilon", label: "Threshold ε", min: 0, max: 0.2, step: 0.005, value: settings.args.epsilon, format: fixed(3) },
    { key: "delta", label: "Entropy factor δ", min: 0, max: 0.5, step: 0.01, value: settings.args.delta, format: fixed(2) },
    { key: "gamma", label: "Speculation length γ", min: 1, max: 8, step: 1, value: settings.args.gamma },
  ],
  metrics: [
    { name: "accept-rate-typical", label: "Draft acceptance rate, typical acceptance", format: fixed(3) },
    { name: "accept-rate-exact", label: "Draft acceptance rate, exact rule", format: fixed(3) },
    { name: "tokens-per-pass-typical", label: "Tokens per target pass, typical acceptance", format: fixed(3) },
    { name: "tokens-per-pass-exact", label: "Tokens per target pass, exact rule", format: fixed(3) },
    { name: "tv-distance", label: "Distance from the target, typical (TV, exact)", format: fixed(3) },
    { name: "tv-distance-exact", label: "Distance from the target, exact rule", format: (v) => (v < 5e-13 ? "0 (to rounding)" : v.toExponential(1)) },
  ],
  view(ctx) {
    const verdict = el("p", "sd-verdict sd-verdict--bad sd-verdict--strong");
    verdict.setAttribute("role", "status");
    verdict.setAttribute("aria-live", "polite");
    const positions = ctx.chart("Line chart: share of checked drafts accepted at each draft position, exact rule against typical acceptance");
    const law = ctx.chart("Grouped bar chart: the first token's probability after the passage, target p against what typical acceptance emits");
    const charts = el("div", "sd-charts");
    charts.append(positions, law);
    ctx.el.append(ctx.group("sd-controls"), verdict, ctx.tiles(), charts);
    return {
      paint(result) {
        const m = result.metrics;
        ctx.render(positions, result.figures.positions);
        ctx.render(law, result.figures.law);
        ctx.setMetrics(m);
        const more = m["accept-rate-typical"] > m["accept-rate-exact"];
        verdict.textContent =
          `Typical acceptance keeps ${(100 * m["accept-rate-typical"]).toFixed(1)}% of the drafts (${more ? "more" : "fewer"} than the exact rule's ${(100 * m["accept-rate-exact"]).toFixed(1)}%), ` +
          `but its output is at distance ${fixed(3)(m["tv-distance"])} from the target's: it is lossy. The exact rule's distance is 0.`;
      },
    };
  },
}));
