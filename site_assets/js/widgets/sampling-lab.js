// Widget "sampling-lab": what temperature, top-k and top-p do to α on the n-gram pair, and the declared-q pitfall.
// One call of sampling.explore answers every control: α against temperature (enumerated over the prompt's contexts,
// and measured from engine rounds at this temperature), β at each context, and at the prompt's last context the
// greedy draft's output when it declares its softmax (the pitfall) or the one-hot it sampled from (the fix).
// URL state: temperature, top-p, top-k, seed.

import { define } from "../ui/widget.js";
import { announce, el, fixed, grouped, pValue } from "../ui/controls.js";
import { param } from "../ui/url.js";

const DECLARED = [
  ["softmax", "Its softmax (the pitfall)"],
  ["sampled", "The one-hot it sampled from (the fix)"],
];
const verdictOf = (v) => (v ? "consistent ✓" : "rejected ✗");

// The setting that leaves one token to sample, named where a verdict rests on it: temperature 0, top-k 1, or a
// top-p the likeliest token alone reaches (at temperature 1 and top-p 0.05 the verdict blamed temperature 0).
const oneToken = (a) =>
  a.temperature === 0 ? "At temperature 0" : a.top_k === 1 ? "With top-k 1" : `With top-p ${fixed(2)(a.top_p)},`;

export default define(import.meta.url, (settings) => {
  const args = settings.args;
  return {
    controls: [
      param("temperature", args.temperature),
      param("top-p", args.top_p),
      param("top-k", args.top_k),
      param("seed", args.seed),
      {
        key: "declared",
        label: "The greedy draft declares as q",
        kind: "choice",
        options: DECLARED,
        value: args.declared,
      },
    ],
    args: (v) => ({
      ...args,
      temperature: v.temperature,
      top_k: v["top-k"],
      top_p: v["top-p"],
      seed: v.seed,
      declared: v.declared,
    }),
    metrics: [
      {
        name: "alpha",
        label: "α measured (engine rounds) ± 2 s.e.",
        format: (v, m) => `${fixed(3)(v)} ± ${fixed(3)(2 * m["alpha-se"])}`,
      },
      { name: "alpha-exact", label: "α exact (enumerated)", format: fixed(3) },
      { name: "argmax-agree", label: "Contexts where the argmaxes agree", format: fixed(3) },
      { name: "alpha-greedy", label: "α, draft greedy with q one-hot", format: fixed(3) },
      { name: "alpha-own", label: "α, draft at temperature 1", format: fixed(3) },
      { name: "tv-distance", label: "Sampled TV(output, p)", format: fixed(4) },
      { name: "tv-noise", label: "TV from noise alone", format: fixed(4) },
      { name: "exact", label: "Sample consistent with p?", format: verdictOf },
      { name: "exact-tv", label: "Exact TV(output, p)", format: (v) => (v === 0 ? "0 (exactly p)" : fixed(4)(v)) },
    ],
    charts: {
      alpha:
        "Line chart of α against temperature for three draft settings, enumerated over the prompt's contexts, with this temperature's exact and measured α marked",
      contexts:
        "Bar chart of β at each context of the prompt at these settings, with diamonds where the two models' argmaxes agree",
    },
    view,
  };
});

function view(ctx) {
  const summary = announce("sd-verdict");
  const charts = ctx.chartRow();

  const pitfall = el("div", "sd-sampling-pitfall");
  const where = el("p", "sd-verdict sd-verdict--quiet");
  const verdict = announce("sd-verdict");
  const pitfallChart = ctx.chart(
    "Bar chart of the target's likeliest tokens at the prompt's last context: target p, this draft's exact output law, and the sampled output",
  );
  pitfall.append(
    ctx.controls.declared.root,
    where,
    verdict,
    ctx.tiles(["tv-distance", "tv-noise", "exact", "exact-tv"]),
    pitfallChart,
  );

  const alphaTiles = ctx.tiles(["alpha", "alpha-exact", "argmax-agree", "alpha-greedy", "alpha-own"]);
  ctx.el.append(
    ctx.group("sd-controls", ["temperature", "top-p", "top-k", "seed"]),
    summary,
    alphaTiles,
    charts,
    pitfall,
  );

  return {
    paint(result, a) {
      const m = result.metrics;
      ctx.render(pitfallChart, result.figures.pitfall);
      const t = a.temperature === 0 ? "0 (greedy)" : fixed(2)(a.temperature);
      summary.textContent =
        `At temperature ${t}: α measured ${fixed(3)(m.alpha)} ± ${fixed(3)(2 * m["alpha-se"])} over ${grouped(m.rounds)} engine rounds, ` +
        `exact ${fixed(3)(m["alpha-exact"])} over the prompt's last ${m.contexts} contexts.` +
        (a.temperature === 0
          ? ` At temperature 0 every β is 1 or 0: α is the share of contexts where the two argmaxes agree, ${fixed(3)(m["argmax-agree"])}.`
          : "");
      where.textContent = `After “…${result.context_text}” the draft proposes its argmax “${result.proposed}” and declares as q ${result.description}.`;
      const n = grouped(m.samples);
      const pv = pValue(m["p-value"]);
      verdict.classList.toggle("sd-verdict--bad", !m.exact);
      verdict.classList.toggle("sd-verdict--ok", Boolean(m.exact));
      if (!m.exact) {
        verdict.textContent = `${n} rounds: TV ${fixed(4)(m["tv-distance"])} from the target, far above the ${fixed(4)(m["tv-noise"])} that noise alone gives (χ² p-value ${pv}). The output is not the target: the verifier divided by a q nothing was drawn from.`;
      } else if (m["exact-tv"] === 0 && result.declared === "softmax") {
        verdict.textContent = `${n} rounds: TV ${fixed(4)(m["tv-distance"])}. ${oneToken(a)} the softmax is the one-hot itself, so the declared q is the sampled one: nothing to fix.`;
      } else if (m["tv-noise"] === 0) {
        // The target is one token: every round emits it, and there is no noise to compare with.
        verdict.textContent = `${n} rounds: TV ${fixed(4)(m["tv-distance"])}. ${oneToken(a)} the target is one token, and every round emitted it: the output is the target, with no sampling noise at all.`;
      } else {
        verdict.textContent = `${n} rounds: TV ${fixed(4)(m["tv-distance"])}, about the ${fixed(4)(m["tv-noise"])} that noise alone gives (χ² p-value ${pv}). With q the distribution it sampled from, the output is the target again.`;
      }
    },
  };
}
