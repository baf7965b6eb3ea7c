// Widget "tuning-calculator": the γ calculator of the Tuning page. The reader gives an agreement rate α (or the
// figure a server reports: vLLM's draft acceptance rate, or the mean acceptance length), γ, the draft cost c and
// the draft's operations ratio ĉ; Python (theory.py) returns the expected tokens per pass, the speedup of Thm 3.8,
// the optimal γ, the operations factor of Thm 3.11 and the break-even α, with two charts. URL state: alpha, gamma,
// cost (clamped, with a notice).
//
//   <div class="sd-widget" data-widget="tuning-calculator">
//   <script type="application/json">{"handler": "tuning.calculator", "args": {"alpha": 0.8, "gamma": 4, "cost": 0.05}}</script>
//   </div>

const SPEC = {
  alpha: { min: 0, max: 1, step: 0.01, value: 0.8 },
  gamma: { min: 1, max: 16, step: 1, value: 4 },
  cost: { min: 0, max: 1, step: 0.01, value: 0.05 },
};

const SOURCES = [
  ["alpha", "Agreement rate α (per token)"],
  ["rate", "Draft acceptance rate (vLLM: accepted / drafted)"],
  ["length", "Mean acceptance length (tokens per target pass)"],
];

const fixed = (digits) => (v) => Number(v).toFixed(digits);
const times = (v) => `${Number(v).toFixed(2)}×`;

SDLab.register("tuning-calculator", {
  mount(el, ctx) {
    const start = ctx.url.read(SPEC);

    // Which acceptance figure the reader has; the other two inputs stay hidden.
    const sourceId = `sd-tuning-source-${Math.random().toString(36).slice(2, 8)}`;
    const sourceRoot = document.createElement("div");
    sourceRoot.className = "sd-control sd-control--select";
    sourceRoot.innerHTML = `<label for="${sourceId}">I know my…</label><select id="${sourceId}" name="source"></select>`;
    const source = sourceRoot.querySelector("select");
    for (const [value, label] of SOURCES) source.append(new Option(label, value));

    const alpha = ctx.slider({ key: "alpha", label: "Agreement rate α", ...SPEC.alpha, value: start.alpha, format: fixed(2) });
    const rate = ctx.slider({
      key: "rate",
      label: "Draft acceptance rate (accepted / drafted)",
      min: 0,
      max: 1,
      step: 0.01,
      value: 0.59,
      format: fixed(2),
    });
    const length = ctx.number({ key: "length", label: "Mean acceptance length", min: 1, max: 17, step: 0.01, value: 3.36 });
    const gamma = ctx.slider({ key: "gamma", label: "Speculation length γ", ...SPEC.gamma, value: start.gamma });
    const cost = ctx.slider({ key: "cost", label: "Draft cost c", ...SPEC.cost, value: start.cost, format: fixed(2) });
    const opCost = ctx.slider({
      key: "op_cost",
      label: "Draft operations ĉ",
      min: 0,
      max: 1,
      step: 0.01,
      value: start.cost,
      format: fixed(2),
    });
    rate.root.hidden = true;
    length.root.hidden = true;

    const controls = document.createElement("div");
    controls.className = "sd-tuning-controls";
    controls.append(sourceRoot, alpha.root, rate.root, length.root, gamma.root, cost.root, opCost.root);

    const verdict = document.createElement("p");
    verdict.className = "sd-tuning-verdict";
    verdict.setAttribute("role", "status");
    verdict.setAttribute("aria-live", "polite");

    const metrics = ctx.metrics([
      { name: "alpha", label: "Per-token acceptance rate α used" },
      { name: "tokens-per-pass", label: "Expected tokens per target pass" },
      { name: "accept-rate", label: "Draft acceptance rate (accepted / drafted)" },
      { name: "speedup", label: "Speedup at this γ (Thm 3.8)" },
      { name: "optimal-gamma", label: "Optimal γ for this α and c" },
      { name: "optimal-speedup", label: "Speedup at the optimal γ" },
      { name: "operations-factor", label: "Operations factor (Thm 3.11)" },
      { name: "break-even-alpha", label: "Break-even α at this γ and c" },
    ]);
    const charts = document.createElement("div");
    charts.className = "sd-tuning-charts";
    const curve = ctx.chart("Line chart of the speedup against the speculation length γ, with the optimum starred");
    const map = ctx.chart("Heatmap of the optimal γ over draft cost c and agreement rate α, with your setting marked");
    charts.append(curve, map);
    el.append(controls, verdict, metrics, charts);

    const formats = {
      alpha: fixed(3),
      "tokens-per-pass": fixed(3),
      "accept-rate": fixed(3),
      speedup: times,
      "optimal-speedup": times,
      "operations-factor": times,
      "break-even-alpha": fixed(3),
      "discarded-fraction": fixed(3),
    };
    let last = null;

    const paint = (result) => {
      last = result;
      ctx.render(curve, result.figures.speedup);
      ctx.render(map, result.figures.map);
      ctx.setMetrics(result.metrics, formats);
      const m = result.metrics;
      if (!("break-even-alpha" in m)) {
        ctx.setMetric("break-even-alpha", -1, "never (c > 1)");
        verdict.textContent = "A draft step slower than a target pass never pays, whatever α.";
      } else if (result.pays) {
        verdict.textContent =
          `Speculation pays: ${times(m.speedup)} at γ = ${gamma.value}` +
          (m["optimal-gamma"] !== gamma.value ? `; γ = ${m["optimal-gamma"]} would give ${times(m["optimal-speedup"])}.` : ", already the best γ.");
      } else {
        verdict.textContent = `Below break-even: α must exceed ${fixed(3)(m["break-even-alpha"])} at γ = ${gamma.value} and c = ${fixed(2)(cost.value)}.`;
      }
      verdict.dataset.pays = String(Boolean(result.pays));
      for (const note of result.notes || []) verdict.textContent += ` (${note})`;
    };
    if (ctx.initial) paint(ctx.initial);

    const args = () => {
      const a = { alpha: alpha.value, gamma: gamma.value, cost: cost.value, op_cost: opCost.value, source: source.value };
      if (source.value === "rate") a.rate = rate.value;
      if (source.value === "length") a.length = length.value;
      return a;
    };
    const update = ctx.latest("tuning.calculator", (result, sent) => {
      paint(result);
      // The link always carries α, the figure the formulas use (converted when the reader gave another one).
      const a = sent.source === "alpha" ? sent.alpha : Math.round(result.metrics.alpha * 100) / 100;
      ctx.url.write({ alpha: a, gamma: sent.gamma, cost: sent.cost });
    });
    const changed = () => update(args());

    source.addEventListener("change", () => {
      // Start the new input where the current α puts it, so switching shows the same point in other units.
      if (last && source.value === "rate") rate.value = fixed(2)(last.metrics["accept-rate"]);
      if (last && source.value === "length") length.value = fixed(2)(last.metrics["tokens-per-pass"]);
      alpha.root.hidden = source.value !== "alpha";
      rate.root.hidden = source.value !== "rate";
      length.root.hidden = source.value !== "length";
      changed();
    });
    gamma.input.addEventListener("input", () => {
      length.input.max = String(gamma.value + 1);
    });
    for (const control of [alpha, rate, gamma, cost, opCost]) control.input.addEventListener("input", changed);
    length.input.addEventListener("change", changed);
    ctx.ready.then(changed, () => {});
  },
});
