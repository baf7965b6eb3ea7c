// Widget "exact-check": exactness in exact arithmetic. From small integer weights for p and q over three tokens and γ,
// Python (theory.py, with fractions.Fraction) returns the tables and the check of the first γ + 1 tokens: every ✓
// is a comparison Python made, not a label. The weights and γ are in the link, so a reader's counterexample can be
// shared.

import { define } from "../ui/widget.js";
import { announce, el, scroller } from "../ui/controls.js";
import { param } from "../ui/url.js";

const PRESETS = [
  ["Our example", [8, 7, 5], [1, 1, 3]],
  ["Disjoint supports", [1, 1, 0], [0, 0, 1]],
  ["p = q", [3, 2, 1], [3, 2, 1]],
  ["One-hot draft", [5, 3, 2], [0, 1, 0]],
];
const TOKENS = ["A", "B", "C"];
const WEIGHT = { kind: "number", min: 0, max: 99, step: 1, url: true };
const WEIGHTS = TOKENS.flatMap((token, i) => [
  { key: `p${i}`, label: `Target weight ${token}`, short: `target weight ${token}`, ...WEIGHT },
  { key: `q${i}`, label: `Draft weight ${token}`, short: `draft weight ${token}`, ...WEIGHT },
]);
const weights = (v, side) => TOKENS.map((_, i) => v[`${side}${i}`]);

// A table of exact fractions: the first cell of a row heads it, the last is Python's verdict on it.
function table(caption, headings) {
  const body = el("tbody");
  const head = el("tr", "", ...headings.map((h) => Object.assign(el("th", "", h), { scope: "col" })));
  const t = el(
    "table",
    "sd-table sd-table--numeric sd-table--titled sd-cbe-fractions",
    el("caption", "", caption),
    el("thead", "", head),
    body,
  );
  const row = ([first, ...cells]) => {
    const equal = cells.pop();
    const check = el("td", `sd-cbe-check sd-cbe-check--${equal ? "ok" : "bad"}`, equal ? "✓ equal" : "✗ differs");
    return el(
      "tr",
      "",
      Object.assign(el("th", "", first), { scope: "row" }),
      ...cells.map((c) => el("td", "", c)),
      check,
    );
  };
  return { wrap: scroller(caption, t), fill: (rows) => body.replaceChildren(...rows.map(row)) };
}

export default define(import.meta.url, (settings) => {
  const args = { p: [8, 7, 5], q: [1, 1, 3], gamma: 2, ...settings.args };
  return {
    // Weights, not probabilities: p(x) = weight / sum, so every value is an exact fraction.
    controls: [
      ...WEIGHTS.map((w) => ({ ...w, value: args[w.key[0]][Number(w.key[1])] })),
      param("gamma", args.gamma, { max: 3 }),
    ],
    metrics: [
      { name: "exact", label: "Every probability equal to the target's?", format: (v) => (v ? "yes ✓" : "no ✗") },
      { name: "cells-checked", label: "Table rows compared" },
      { name: "round-prefixes", label: "Prefixes of γ + 1 tokens compared" },
      { name: "beta", label: "β = Σ min(p, q), exactly" },
    ],
    view,
  };
});

function view(ctx) {
  const presets = el("div", "sd-chips");
  presets.setAttribute("role", "group");
  presets.setAttribute("aria-label", "Example weights");
  for (const [label, p, q] of PRESETS) {
    const patch = Object.fromEntries(
      TOKENS.flatMap((_, i) => [
        [`p${i}`, p[i]],
        [`q${i}`, q[i]],
      ]),
    );
    presets.append(ctx.button(label, () => ctx.set(patch)));
  }
  const verdict = announce("sd-verdict");
  const headings = [
    "token",
    "p(x)",
    "q(x)",
    "accepted draft min(p, q)",
    "correction (1 − β)·residual",
    "P(emit x), enumerated",
    "= p(x)?",
  ];
  const one = table("One position: the two routes to each token, in exact fractions", headings);
  const two = table("Exact prefix of 2 tokens across rounds (a context-dependent pair)", [
    "first two tokens",
    "speculative decoding",
    "target alone",
    "equal?",
  ]);
  ctx.el.append(
    presets,
    ctx.group(
      "sd-controls sd-controls--dense",
      WEIGHTS.map((w) => w.key),
    ),
    ctx.controls.gamma.root,
    verdict,
    ctx.tiles(),
    one.wrap,
    two.wrap,
  );

  return {
    args(v) {
      const p = weights(v, "p");
      const q = weights(v, "q");
      if (p.some(Boolean) && q.some(Boolean)) return { p, q, gamma: v.gamma };
      // No distribution, so nothing is checked: the tables and the tiles (cleared by the binding) go with it.
      verdict.textContent = "Give the target and the draft at least one positive weight each.";
      one.fill([]);
      two.fill([]);
      return null;
    },
    paint(result) {
      one.fill(result.position.map((r) => [r.token, r.p, r.q, r.accepted, r.correction, r.emitted, r.equal]));
      two.fill(result.prefix.map((r) => [r.prefix, r.speculative, r.target, r.equal]));
      const m = result.metrics;
      ctx.setMetric("beta", m.beta, `${result.beta} ≈ ${Number(m.beta).toFixed(3)}`);
      verdict.textContent = result.verdict; // every comparison Python made, and how many
    },
  };
}
