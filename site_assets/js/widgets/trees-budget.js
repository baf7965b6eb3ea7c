// Widget "trees-budget": what a node budget buys (handler "trees.budget", specdec_core/web/trees.py). Left: tokens
// per target pass against nodes scored per pass, for a chain (k = 1, Eq. 1 of Leviathan et al.) and for full trees
// with k = 2, 3, 4 (simulated). Right: a static full tree against a best-first (dynamic) tree of the same budget.
//
// URL state: k, depth, alpha, seed (shared with the tree round above on the same page).

import { define } from "../ui/widget.js";
import { el, fixed, grouped } from "../ui/controls.js";
import { param } from "../ui/url.js";

const MODES = [
  ["true", "i.i.d. (SpecInfer)"],
  ["false", "without replacement"],
];

export default define(import.meta.url, (settings) => {
  const base = settings.args;
  return {
    controls: [
      param("alpha", base.alpha),
      param("k", base.k, { label: "Candidates per position k (second chart)" }),
      param("depth", base.depth, { label: "Tree depth (largest static tree, second chart)" }),
      { key: "replacement", label: "Children drawn", kind: "select", options: MODES, value: String(base.replacement) },
    ],
    metrics: [],
    args: (values) => ({
      ...base,
      alpha: values.alpha,
      k: values.k,
      depth: values.depth,
      replacement: values.replacement === "true" || values.replacement === true,
    }),
    charts: {
      budget:
        "Line chart of tokens per target pass against nodes scored per pass on a log axis: a chain (triangles, theory) and full trees with k = 2, 3 and 4 (circles, diamonds, squares, simulated)",
      dynamic:
        "Line chart of tokens per target pass at each node budget: the static full tree (circles) and the best-first dynamic tree (stars, dashed)",
    },
    view(ctx) {
      const note = el("p", "sd-note");
      ctx.el.append(ctx.group("sd-controls"), ctx.chartRow(), note);
      return {
        paint(result) {
          const cap = result.capped;
          note.textContent =
            `Synthetic pair at α = ${fixed(2)(result.metrics.alpha)}; each simulated point averages ${result.metrics.rounds} rounds (seed ${result.metrics.seed}).` +
            (cap
              ? ` The second chart stops at depth ${cap.depth - 1}: a full tree of depth ${cap.depth} would score ${grouped(cap.nodes)} nodes per pass, past this page's cap of ${cap.max}.`
              : "");
        },
      };
    },
  };
});
