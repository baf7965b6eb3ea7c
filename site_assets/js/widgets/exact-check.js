// Widget "exact-check": exactness in exact arithmetic. The reader types small integer weights for p and q over three
// tokens and picks γ; Python (theory.exact_output_distribution, exact_prefix_distribution, target_prefix_distribution,
// all with fractions.Fraction) returns the tables, and every ✓ is a comparison Python made, not a label.
//
//   <div class="sd-widget" data-widget="exact-check">
//   <script type="application/json">{"handler": "exactness.check", "args": {"p": [8, 7, 5], "q": [1, 1, 3], "gamma": 2}}</script>
//   </div>

const PRESETS = [
  ["Our example", [8, 7, 5], [1, 1, 3]],
  ["Disjoint supports", [1, 1, 0], [0, 0, 1]],
  ["p = q", [3, 2, 1], [3, 2, 1]],
  ["One-hot draft", [5, 3, 2], [0, 1, 0]],
];
const TOKENS = ["A", "B", "C"];

function cell(row, text, header = false) {
  const td = document.createElement(header ? "th" : "td");
  if (header) td.scope = "row";
  td.textContent = text;
  row.append(td);
  return td;
}

function check(row, equal) {
  const td = cell(row, equal ? "✓ equal" : "✗ differs");
  td.className = equal ? "sd-cbe-check sd-cbe-check--ok" : "sd-cbe-check sd-cbe-check--bad";
}

function table(caption, headings) {
  const wrap = document.createElement("div");
  wrap.className = "sd-scroll";
  // It may scroll sideways on a narrow screen, so it must take keyboard focus (axe-core scrollable-region-focusable).
  wrap.tabIndex = 0;
  wrap.setAttribute("role", "region");
  wrap.setAttribute("aria-label", caption);
  const t = document.createElement("table");
  t.className = "sd-table sd-table--numeric sd-table--titled sd-cbe-fractions";
  const cap = document.createElement("caption");
  cap.textContent = caption;
  const head = document.createElement("thead");
  const tr = document.createElement("tr");
  for (const h of headings) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = h;
    tr.append(th);
  }
  head.append(tr);
  const body = document.createElement("tbody");
  t.append(cap, head, body);
  wrap.append(t);
  return { wrap, body };
}

const WEIGHTS = TOKENS.flatMap((token, i) => [
  { key: `p${i}`, label: `Target weight ${token}`, kind: "number", min: 0, max: 99, step: 1 },
  { key: `q${i}`, label: `Draft weight ${token}`, kind: "number", min: 0, max: 99, step: 1 },
]);
const weights = (v, side) => TOKENS.map((_, i) => v[`${side}${i}`]);

export default (settings) => {
  const args = { p: [8, 7, 5], q: [1, 1, 3], gamma: 2, ...settings.args };
  return {
    // Weights, not probabilities: p(x) = weight / sum, so every value is an exact fraction.
    controls: [
      ...WEIGHTS.map((w) => ({ ...w, value: args[w.key[0]][Number(w.key[1])] })),
      { key: "gamma", label: "Speculation length γ", min: 1, max: 4, step: 1, value: args.gamma },
    ],
    metrics: [
      { name: "exact", label: "Every cell equal to the target?", format: (v) => (v ? "yes ✓" : "no ✗") },
      { name: "cells-checked", label: "Exact comparisons made" },
      { name: "beta", label: "β = Σ min(p, q), exactly" },
    ],
    view,
  };
};

function view(ctx) {
  const presets = document.createElement("div");
  presets.className = "sd-chips";
  presets.setAttribute("role", "group");
  presets.setAttribute("aria-label", "Example weights");
  for (const [label, p, q] of PRESETS) {
    const patch = Object.fromEntries(TOKENS.flatMap((_, i) => [[`p${i}`, p[i]], [`q${i}`, q[i]]]));
    presets.append(ctx.button(label, () => ctx.set(patch)));
  }
  const grid = ctx.group("sd-controls sd-controls--dense", WEIGHTS.map((w) => w.key));
  const verdict = document.createElement("p");
  verdict.className = "sd-verdict";
  verdict.setAttribute("role", "status");
  verdict.setAttribute("aria-live", "polite");
  const one = table("One position: the two routes to each token, in exact fractions", [
    "token",
    "p(x)",
    "q(x)",
    "accepted draft min(p, q)",
    "correction (1 − β)·residual",
    "P(emit x), enumerated",
    "= p(x)?",
  ]);
  const two = table("Exact prefix of 2 tokens across rounds (a context-dependent pair)", ["first two tokens", "speculative decoding", "target alone", "equal?"]);
  ctx.el.append(presets, grid, ctx.controls.gamma.root, verdict, ctx.tiles(), one.wrap, two.wrap);

  return {
    args(v) {
      const p = weights(v, "p");
      const q = weights(v, "q");
      if (!p.some(Boolean) || !q.some(Boolean)) {
        verdict.textContent = "Give the target and the draft at least one positive weight each.";
        return null;
      }
      return { p, q, gamma: v.gamma };
    },
    paint(result) {
      one.body.replaceChildren();
      for (const r of result.position) {
        const tr = document.createElement("tr");
        cell(tr, r.token, true);
        for (const key of ["p", "q", "accepted", "correction", "emitted"]) cell(tr, r[key]);
        check(tr, r.equal);
        one.body.append(tr);
      }
      two.body.replaceChildren();
      for (const r of result.prefix) {
        const tr = document.createElement("tr");
        cell(tr, r.prefix, true);
        cell(tr, r.speculative);
        cell(tr, r.target);
        check(tr, r.equal);
        two.body.append(tr);
      }
      const m = result.metrics;
      ctx.setMetrics(m);
      ctx.setMetric("beta", m.beta, `${result.beta} ≈ ${Number(m.beta).toFixed(3)}`);
      verdict.textContent = m.exact
        ? `All ${m["cells-checked"]} probabilities equal the target's exactly, as fractions (β = ${result.beta}).`
        : `Some probabilities differ from the target's: ${m["cells-checked"]} compared.`;
    },
  };
}
