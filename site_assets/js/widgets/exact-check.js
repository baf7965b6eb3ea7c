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
  wrap.className = "sd-cbe-table-wrap";
  const t = document.createElement("table");
  t.className = "sd-cbe-fractions";
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

SDLab.register("exact-check", {
  mount(el, ctx) {
    const args = { p: [8, 7, 5], q: [1, 1, 3], gamma: 2, ...(ctx.settings.args || {}) };

    const presets = document.createElement("div");
    presets.className = "sd-cbe-presets";
    presets.setAttribute("role", "group");
    presets.setAttribute("aria-label", "Example weights");
    for (const [label, p, q] of PRESETS) {
      presets.append(
        ctx.button(label, () => {
          p.forEach((v, i) => (pInputs[i].value = v));
          q.forEach((v, i) => (qInputs[i].value = v));
          send();
        }),
      );
    }

    // Weights, not probabilities: p(x) = weight / sum, so every value is an exact fraction.
    const grid = document.createElement("div");
    grid.className = "sd-cbe-weights";
    const pInputs = [];
    const qInputs = [];
    TOKENS.forEach((token, i) => {
      const pIn = ctx.number({ key: `p${i}`, label: `Target weight ${token}`, min: 0, max: 99, step: 1, value: args.p[i] });
      const qIn = ctx.number({ key: `q${i}`, label: `Draft weight ${token}`, min: 0, max: 99, step: 1, value: args.q[i] });
      pInputs.push(pIn);
      qInputs.push(qIn);
      grid.append(pIn.root, qIn.root);
    });
    const gamma = ctx.slider({ key: "gamma", label: "Speculation length γ", min: 1, max: 4, step: 1, value: args.gamma });

    const verdict = document.createElement("p");
    verdict.className = "sd-cbe-verdict";
    verdict.setAttribute("role", "status");
    verdict.setAttribute("aria-live", "polite");
    const metrics = ctx.metrics([
      { name: "exact", label: "Every cell equal to the target?" },
      { name: "cells-checked", label: "Exact comparisons made" },
      { name: "beta", label: "β = Σ min(p, q), exactly" },
    ]);
    const one = table("One position: the two routes to each token, in exact fractions", [
      "token",
      "p(x)",
      "q(x)",
      "accepted draft min(p, q)",
      "correction (1 − β)·residual",
      "P(emit x), enumerated",
      "= p(x)?",
    ]);
    const two = table("Exact prefix of 2 tokens across rounds (a context-dependent pair)", [
      "first two tokens",
      "speculative decoding",
      "target alone",
      "equal?",
    ]);
    el.append(presets, grid, gamma.root, verdict, metrics, one.wrap, two.wrap);

    const paint = (result) => {
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
      ctx.setMetrics(m, {
        exact: (v) => (v ? "yes ✓" : "no ✗"),
        beta: () => `${result.beta} ≈ ${Number(m.beta).toFixed(3)}`,
      });
      verdict.textContent = m.exact
        ? `All ${m["cells-checked"]} probabilities equal the target's exactly, as fractions (β = ${result.beta}).`
        : `Some probabilities differ from the target's: ${m["cells-checked"]} compared.`;
    };
    if (ctx.initial) paint(ctx.initial);

    const weights = (inputs) => inputs.map((n) => Math.min(99, Math.max(0, Math.floor(n.value) || 0)));
    const update = ctx.latest("exactness.check", paint);
    const send = () => {
      const p = weights(pInputs);
      const q = weights(qInputs);
      if (!p.some(Boolean) || !q.some(Boolean)) {
        verdict.textContent = "Give the target and the draft at least one positive weight each.";
        return;
      }
      update({ p, q, gamma: gamma.value });
    };
    for (const n of [...pInputs, ...qInputs]) n.input.addEventListener("change", send);
    gamma.input.addEventListener("input", send);
    ctx.ready.then(send, () => {});
  },
});
