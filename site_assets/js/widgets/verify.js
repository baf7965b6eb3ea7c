// Widget "verify": Step 2 of a round. Kind "round" (default, handler verify.ngram): γ drafted words (the Draft page's,
// for the same prompt and seed), ONE target pass scoring all γ + 1 prefixes, each word accepted when its uniform u
// falls below min(1, p/q). Kind "rates" (verify.rates): a serving log's accepted ÷ drafted against α.

import { define } from "../ui/widget.js";
import { el, fixed, scroller } from "../ui/controls.js";
import { param } from "../ui/url.js";
import { prob, roundWidget } from "./ngram-prompt.js";
import { relation } from "./relation.js";

const VERDICT = { accepted: "accepted", rejected: "rejected", discarded: "discarded (never checked)" };

function tokenStream(result) {
  const out = el("span", "sd-dv-drafts");
  const chip = (word, kind, title) =>
    out.append(Object.assign(el("span", `sd-token sd-token--${kind}`, word), { title }), " ");
  for (const pos of result.positions) {
    chip(pos.word, pos.outcome, `${VERDICT[pos.outcome]}: p = ${prob(pos.p)}, q = ${prob(pos.q)}`);
    if (pos.outcome === "rejected") chip(result.final.word, "correction", "correction, drawn from the residual");
  }
  if (result.final.kind === "bonus") chip(result.final.word, "bonus", "bonus, drawn from the target's last row");
  return out;
}

function table(result) {
  const t = el("table", "sd-table");
  t.innerHTML =
    "<caption>One target pass gives γ + 1 rows: row i scores draft i; the last row is the bonus distribution</caption>" +
    "<thead><tr><th scope=col>row: draft x</th><th scope=col>q(x)</th><th scope=col>p(x)</th>" +
    "<th scope=col>min(1, p/q)</th><th scope=col>u</th><th scope=col>verdict</th><th scope=col>target's top tokens in this row</th></tr></thead>";
  const row = (targetRow, i) => {
    const pos = result.positions[i];
    const cells = pos
      ? [
          `${i + 1}: ${pos.word}`,
          prob(pos.q),
          prob(pos.p),
          prob(pos.threshold),
          pos.u === null ? "—" : pos.u.toFixed(3),
          VERDICT[pos.outcome],
        ]
      : [
          `${i + 1}: (bonus row)`,
          "",
          "",
          "",
          "",
          result.final.kind === "bonus" ? `bonus “${result.final.word}”` : "not needed",
        ];
    const tr = el("tr", "", ...cells.map((text) => el("td", "", text)));
    // The cell wraps between tokens, never inside "1.5e-7".
    tr.append(
      el(
        "td",
        "",
        ...targetRow.top.flatMap((w, j) => [j ? " · " : "", el("span", "sd-dv-top", `${w.word} ${prob(w.p)}`)]),
      ),
    );
    if (pos) tr.dataset.outcome = pos.outcome;
    return tr;
  };
  t.append(el("tbody", "", ...result.rows.map(row)));
  return scroller("Verification table, one row per target row", t, "sd-dv-table");
}

const round = (settings) =>
  roundWidget(settings, {
    metrics: [
      { name: "accepted", label: "Drafts accepted" },
      { name: "tokens-emitted", label: "Tokens from this target pass" },
      { name: "all-accepted-prob", label: "P(all γ accepted) = Π min(1, p/q)", format: prob },
      { name: "beta", label: "Mean β over the γ positions, β = Σ min(p, q)", format: fixed(3) },
    ],
    chart:
      "For each draft position, a bar up to min(1, p/q) and a marker at its uniform u: a circle below the top of the bar means accepted, a cross above it rejected; grey bars after the first rejection were discarded without a check",
    stepTitle: "Play a new round with the next seed",
    textLabel: "The prompt and what the round emitted",
    note: "β is one position's chance of passing; the per-token acceptance rate α is its average over positions. A round's tokens per target pass is the accepted drafts plus one.",
    words: tokenStream,
    say: (result) => result?.summary ?? "", // Python's sentence on the round
    details: table,
  });

const rates = (settings) => ({
  controls: [
    {
      key: "alpha",
      label: "Per-token acceptance rate α",
      min: 0,
      max: 1,
      step: 0.01,
      value: settings.args?.alpha ?? 0.8,
      format: fixed(2),
      url: true,
    },
    param("gamma", settings.args?.gamma),
  ],
  metrics: [
    { name: "alpha", label: "Per-token acceptance rate α", format: fixed(2) },
    { name: "accept-rate", label: "Draft acceptance rate: accepted ÷ drafted", format: fixed(3) },
    { name: "all-accepted-prob", label: "P(all γ accepted) = α^γ", format: fixed(3) },
    { name: "tokens-per-pass", label: "Tokens per target pass", format: fixed(3) },
  ],
  chart:
    "Three curves against the per-token acceptance rate α: α itself, the draft acceptance rate accepted over drafted at the chosen γ, and the chance that all γ drafts are accepted, α to the power γ; dots mark the chosen α",
  note: () =>
    relation(
      "All three follow from α and γ: accepted ÷ drafted = α(1 − α^γ) / (γ(1 − α)), below α whenever a rejection can discard drafts (γ > 1 and 0 < α < 1; otherwise the two are equal), because drafts after a rejection count as drafted but are never checked, and tokens per target pass = (1 − α^(γ+1)) / (1 − α).",
    ),
});

export default define(import.meta.url, (settings) => (settings.kind === "rates" ? rates(settings) : round(settings)));
