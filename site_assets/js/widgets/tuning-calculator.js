// Widget "tuning-calculator": the γ calculator. From α (or a figure a server reports: vLLM's draft acceptance rate, or
// the mean acceptance length), γ, the draft cost c and the operations ratio ĉ, Python (theory.py) returns tokens per
// pass, the speedup of Thm 3.8, the optimal γ, the operations factor of Thm 3.11 and the break-even α.

import { define } from "../ui/widget.js";
import { announce, fixed, times } from "../ui/controls.js";
import { param, PARAMS, writeQuery } from "../ui/url.js";

const SOURCES = [
  ["alpha", "Agreement rate α (per token)"],
  ["rate", "Draft acceptance rate (vLLM 0.11.0)"],
  ["length", "Mean acceptance length (tokens per target pass)"],
];

export default define(import.meta.url, (settings) => {
  const a = { alpha: PARAMS.alpha.value, gamma: PARAMS.gamma.value, cost: PARAMS.cost.value, ...settings.args };
  return {
    controls: [
      { key: "source", label: "I know my…", kind: "select", options: SOURCES, value: "alpha" },
      param("alpha", a.alpha),
      {
        key: "rate",
        label: "Draft acceptance rate (accepted / drafted)",
        min: 0,
        max: 1,
        step: 0.01,
        value: 0.59,
        format: fixed(2),
        hidden: true,
      },
      {
        key: "length",
        label: "Mean acceptance length",
        kind: "number",
        min: 1,
        max: 17,
        step: 0.01,
        value: 3.36,
        hidden: true,
      },
      param("gamma", a.gamma, { max: 16 }),
      param("cost", a.cost),
      // In the link, as every slider is (a reload set ĉ back to c).
      {
        key: "op_cost",
        label: "Draft operations ĉ",
        min: 0,
        max: 1,
        step: 0.01,
        value: a.cost,
        format: fixed(2),
        url: true,
        short: "ĉ",
      },
    ],
    // The rate or the length goes to Python only when it is the figure the reader gives.
    args: ({ rate, length, ...v }) => ({
      ...v,
      ...(v.source === "rate" ? { rate } : {}),
      ...(v.source === "length" ? { length } : {}),
    }),
    metrics: [
      { name: "alpha", label: "Per-token acceptance rate α used", format: fixed(3) },
      { name: "tokens-per-pass", label: "Expected tokens per target pass", format: fixed(3) },
      { name: "accept-rate", label: "Draft acceptance rate (accepted / drafted)", format: fixed(3) },
      { name: "speedup", label: "Speedup at this γ (Thm 3.8)", format: times },
      { name: "optimal-gamma", label: "Optimal γ for this α and c" },
      { name: "optimal-speedup", label: "Speedup at the optimal γ", format: times },
      { name: "operations-factor", label: "Operations factor (Thm 3.11)", format: times },
      { name: "break-even-alpha", label: "Break-even α at this γ and c", format: fixed(3) },
    ],
    charts: {
      speedup: "Line chart of the speedup against the speculation length γ, with the optimum starred",
      map: "Heatmap of the optimal γ over draft cost c and agreement rate α, with your setting marked",
    },
    view,
  };
});

function view(ctx) {
  const { source, rate, length, gamma, cost } = ctx.controls;
  // The draft's operations ratio starts at the draft cost the link asks for, unless the link gives it.
  if (!new URLSearchParams(location.search).has("op_cost")) ctx.controls.op_cost.value = cost.value;
  const verdict = announce("sd-verdict sd-verdict--strong");
  ctx.el.append(ctx.group("sd-controls"), verdict, ctx.tiles(), ctx.chartRow());
  let last = null;

  // Which acceptance figure the reader has: only its input shows, started where the current α puts it, so
  // switching shows the same point in other units.
  ctx.on(source.input, "change", () => {
    if (last && source.value === "rate") rate.value = fixed(2)(last.metrics["accept-rate"]);
    if (last && source.value === "length") length.value = fixed(2)(last.metrics["tokens-per-pass"]);
    for (const key of ["alpha", "rate", "length"]) ctx.controls[key].root.hidden = source.value !== key;
  });
  ctx.on(gamma.input, "input", () => (length.input.max = String(gamma.value + 1)));

  return {
    paint(result, args) {
      last = result;
      const m = result.metrics;
      if (result.capped) ctx.setMetric("optimal-gamma", m["optimal-gamma"], `≥ ${m["optimal-gamma"]}`);
      if (!("break-even-alpha" in m)) {
        ctx.setMetric("break-even-alpha", -1, "never (c > 1)");
        verdict.textContent = "A draft step slower than a target pass never pays, whatever α.";
      } else if (m["break-even-alpha"] >= 1) {
        verdict.textContent = `No α pays at c = ${fixed(2)(args.cost)}: a draft that is always accepted only breaks even.`;
      } else if (!result.pays && m.speedup === 1) {
        verdict.textContent = `At break-even: ${times(1)} at γ = ${args.gamma}, speculation neither gains nor loses.`;
      } else if (result.pays) {
        verdict.textContent =
          `Speculation pays: ${times(m.speedup)} at γ = ${args.gamma}` +
          (m["optimal-gamma"] !== args.gamma
            ? `; γ = ${m["optimal-gamma"]} would give ${times(m["optimal-speedup"])}.`
            : ", already the best γ.");
      } else {
        verdict.textContent = `Below break-even: α must exceed ${fixed(3)(m["break-even-alpha"])} at γ = ${args.gamma} and c = ${fixed(2)(args.cost)}.`;
      }
      // Pays or not: the rule turns green or red, and the sentence itself says which.
      verdict.classList.toggle("sd-verdict--ok", Boolean(result.pays));
      verdict.classList.toggle("sd-verdict--bad", !result.pays);
      for (const note of result.notes || []) verdict.textContent += ` (${note})`;
      // The link always carries α, the figure the formulas use (converted when the reader gave another one).
      if (args.source !== "alpha") writeQuery({ alpha: Math.round(m.alpha * 100) / 100 });
    },
  };
}
