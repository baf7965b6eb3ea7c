// Widget "pair": one position of verification. Target p, draft q, the accepted mass min(p, q) and the residual a
// correction is drawn from, for the settings' p and q; a slider blends the draft toward the target.
// The smallest complete widget (ui/widget.js does the rest).

import { fixed } from "../ui/controls.js";
import { define } from "../ui/widget.js";

const percent = (v) => `${Math.round(v * 100)}%`;

export default define(import.meta.url, (settings) => ({
  controls: [
    {
      key: "blend",
      label: "Draft blend toward the target",
      min: 0,
      max: 1,
      step: 0.05,
      value: settings.args.blend ?? 0,
      format: percent,
    },
  ],
  metrics: [
    // Three decimals throughout: at the ends β is 1.000 and 0.000, not "1" and "0".
    { name: "beta", label: "β = Σ min(p, q): P(a draft token is accepted)", format: fixed(3) },
    { name: "reject-rate", label: "Rejection probability 1 − β", format: fixed(3) },
    { name: "tv-distance", label: "Total variation TV(p, q)", format: fixed(3) },
  ],
  chart: "Bar chart of the target p, the draft q, min(p, q) and the residual, per token",
}));
