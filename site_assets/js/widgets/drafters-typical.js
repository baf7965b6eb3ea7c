// Widget "drafters-typical": the exact rule beside Medusa's typical acceptance, same bigram drafts and seed. Python
// (web/drafters.py) returns acceptance per draft position for both rules, the first token's law after the passage
// under each, and the lossy rule's exact distance from the target (tv-distance).

import { define } from "../ui/widget.js";
import { announce, fixed } from "../ui/controls.js";
import { param } from "../ui/url.js";

export default define(import.meta.url, (settings) => ({
  controls: [
    {
      key: "epsilon",
      label: "Threshold ε",
      min: 0,
      max: 0.2,
      step: 0.005,
      value: settings.args.epsilon,
      format: fixed(3),
      url: true, // in the link like γ: a reload or a shared link lost ε and δ
      short: "ε",
    },
    {
      key: "delta",
      label: "Entropy factor δ",
      min: 0,
      max: 0.5,
      step: 0.01,
      value: settings.args.delta,
      format: fixed(2),
      url: true,
      short: "δ",
    },
    param("gamma", settings.args.gamma),
  ],
  metrics: [
    { name: "accept-rate-typical", label: "Draft acceptance rate, typical acceptance", format: fixed(3) },
    { name: "accept-rate-exact", label: "Draft acceptance rate, exact rule", format: fixed(3) },
    { name: "tokens-per-pass-typical", label: "Tokens per target pass, typical acceptance", format: fixed(3) },
    { name: "tokens-per-pass-exact", label: "Tokens per target pass, exact rule", format: fixed(3) },
    { name: "tv-distance", label: "Distance from the target, typical (TV, exact)", format: fixed(3) },
    {
      name: "tv-distance-exact",
      label: "Distance from the target, exact rule",
      format: (v) => (v < 5e-13 ? "0 (to rounding)" : v.toExponential(1)),
    },
  ],
  charts: {
    positions:
      "Line chart: share of checked drafts accepted at each draft position, exact rule against typical acceptance",
    law: "Grouped bar chart: the first token's probability after the passage, target p against what typical acceptance emits",
  },
  view(ctx) {
    const verdict = announce("sd-verdict sd-verdict--bad sd-verdict--strong");
    ctx.el.append(ctx.group("sd-controls"), verdict, ctx.tiles(), ctx.chartRow());
    return {
      paint(result, args) {
        const m = result.metrics;
        const more = m["accept-rate-typical"] > m["accept-rate-exact"];
        // The bar is min(ε, δ·e^(−H)) and e^(−H) ≤ 1: from δ up, ε moved nothing on screen, and nothing said why.
        const inert =
          args.epsilon >= args.delta
            ? ` With ε at or above δ = ${fixed(2)(args.delta)}, the bar is δ·e^(−H) at every position (e^(−H) is at most 1), so ε changes nothing: it acts only where it is below δ·e^(−H).`
            : "";
        verdict.textContent =
          `Typical acceptance keeps ${(100 * m["accept-rate-typical"]).toFixed(1)}% of the drafts (${more ? "more" : "fewer"} than the exact rule's ${(100 * m["accept-rate-exact"]).toFixed(1)}%), ` +
          `${more ? "but" : "and"} its output is at distance ${fixed(3)(m["tv-distance"])} from the target's: it is lossy. The exact rule's distance is 0.${inert}`;
      },
    };
  },
}));
