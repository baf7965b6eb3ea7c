// Widget "drafters-compare": three lossless drafters (the bigram draft model, prompt lookup, independent heads) run
// through the engine on one passage of the novel, the trigram as the target. Python (web/drafters.py) returns the
// acceptance at each draft position, tokens per target pass, a table of all three and the first continuation of
// the chosen drafter, token by token. URL state: gamma, seed.

import { define } from "../ui/widget.js";
import { announce, el, fixed, scroller } from "../ui/controls.js";
import { param } from "../ui/url.js";

const PASSAGES = [
  ["repetitive", "Repetitive: a sentence said twice, then begun again"],
  ["ordinary", "Ordinary: the opening of chapter 2"],
];
const DRAFTERS = [
  ["model", "Draft model (bigram)"],
  ["lookup", "Prompt lookup"],
  ["heads", "Independent heads"],
];

export default define(import.meta.url, (settings) => ({
  controls: [
    { key: "passage", label: "Passage", kind: "select", options: PASSAGES, value: settings.args.passage },
    {
      key: "drafter",
      label: "Drafter shown in the tiles",
      kind: "select",
      options: DRAFTERS,
      value: settings.args.drafter,
    },
    param("gamma", settings.args.gamma),
    param("seed", settings.args.seed),
  ],
  metrics: [
    { name: "accept-rate", label: "Draft acceptance rate (accepted ÷ drafted)", format: fixed(3) },
    { name: "tokens-per-pass", label: "Tokens per target pass", format: fixed(3) },
    { name: "draft-calls-per-token", label: "Draft-model passes per emitted token", format: fixed(2) },
  ],
  charts: {
    positions: "Line chart: for each drafter, the share of checked drafts accepted at each draft position 1 to γ",
    passes:
      "Bar chart: tokens per target pass for each drafter, the chosen one in blue; the dotted line is plain decoding",
  },
  view(ctx) {
    const summary = announce("sd-verdict");
    const table = el("table", "sd-table sd-table--numeric");
    const wrap = scroller("Table of the three drafters", table);
    const sampleTitle = el("p", "sd-note");
    const sample = el("p", "sd-drafters-sample");
    ctx.el.append(ctx.group("sd-controls"), summary, ctx.tiles(), ctx.chartRow(), wrap, sampleTitle, sample);
    return {
      paint(result, args) {
        const rows = result.table;
        table.innerHTML =
          `<caption>All three drafters on this passage (${args?.tokens ?? ctx.settings.args.tokens} tokens each, continued ${result.segment} at a time); every one keeps the output distribution exact.</caption>` +
          '<thead><tr><th scope="col">Drafter</th><th scope="col">Draft acceptance rate</th><th scope="col">Tokens per target pass</th><th scope="col">Rounds that drafted</th><th scope="col">Draft-model passes per token</th></tr></thead><tbody>' +
          rows
            .map(
              (r) =>
                `<tr><th scope="row">${r.label}</th><td>${fixed(3)(r["accept-rate"])}</td><td>${fixed(3)(r["tokens-per-pass"])}</td><td>${r.rounds_with_drafts} of ${r.rounds}</td><td>${fixed(2)(r["draft-calls-per-token"])}</td></tr>`,
            )
            .join("") +
          "</tbody>";
        const chosen = rows.find((r) => r.drafter === (args?.drafter ?? ctx.settings.args.drafter)) || rows[0];
        summary.textContent =
          `${chosen.label}: ${fixed(3)(chosen["tokens-per-pass"])} tokens per target pass, ` +
          `${(100 * chosen["accept-rate"]).toFixed(1)}% of its drafts accepted; it drafted in ${chosen.rounds_with_drafts} of ${chosen.rounds} rounds. ` +
          "Whatever the drafter, the text follows the target's distribution exactly.";
        sampleTitle.textContent = `First continuation with ${chosen.label.toLowerCase()} (green: drafts the target accepted; plain: tokens the target drew itself):`;
        sample.replaceChildren(
          ...result.sample.map(([text, kind]) =>
            el("span", kind === "draft" ? "sd-token sd-token--accepted" : "sd-token", text.replace(/\n/g, "⏎")),
          ),
        );
      },
    };
  },
}));
