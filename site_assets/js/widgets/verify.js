// Widget "verify": Step 2 of a round. Two kinds, chosen by the settings' "kind":
//
// - "round" (default): one real round of the n-gram pair. The draft proposes γ words (the same words as the Draft
//   page for the same prompt and seed), ONE target pass scores all γ + 1 prefixes, and steps.speculative_round
//   checks each word left to right: accepted when its uniform u falls below min(1, p/q). The chart places each u
//   against its threshold; a table lists the numbers. Handler verify.ngram.
//
//     <div class="sd-widget" data-widget="verify">
//     <script type="application/json">{"handler": "verify.ngram", "args": {"prompt": "...", "gamma": 4, "seed": 7},
//       "prompts": ["...", "..."]}</script>
//     </div>
//
// - "rates": what a serving log reports, the draft acceptance rate (accepted / drafted), against the per-token
//   acceptance rate α and α^γ. Handler verify.rates.

import { define } from "../ui/widget.js";
import { fixed } from "../ui/controls.js";
import { prob, promptView, roundArgs, roundControls, roundPanel } from "./ngram-prompt.js";
import { relation } from "./relation.js";

const VERDICT = { accepted: "accepted", rejected: "rejected", discarded: "discarded (never checked)" };

function quoted(word) {
  return `“${word}”`;
}

// One sentence that says what the round did, from the numbers Python returned.
function summary(result) {
  const pos = result.positions;
  const accepted = pos.filter((p) => p.outcome === "accepted");
  const rejected = pos.find((p) => p.outcome === "rejected");
  const discarded = pos.filter((p) => p.outcome === "discarded").length;
  const parts = [`Drafted ${pos.length}, accepted ${accepted.length}.`];
  if (rejected) {
    parts.push(
      `Rejected ${quoted(rejected.word)} at position ${rejected.index + 1} (u = ${rejected.u.toFixed(3)} ≥ min(1, p/q) = ${rejected.threshold.toFixed(3)})` +
        (discarded ? `, so the ${discarded} draft${discarded === 1 ? "" : "s"} after it ${discarded === 1 ? "was" : "were"} discarded unchecked.` : "."),
    );
    parts.push(`The correction ${quoted(result.final.word)} was drawn from norm(max(0, p − q)) at that position.`);
  } else {
    parts.push(`All ${pos.length} passed, so the bonus ${quoted(result.final.word)} came from the target's last row, computed in the same pass.`);
  }
  parts.push(`${result.metrics["tokens-emitted"]} token${result.metrics["tokens-emitted"] === 1 ? "" : "s"} for one target pass.`);
  return parts.join(" ");
}

function tokenStream(result) {
  const out = document.createElement("span");
  out.className = "sd-dv-drafts";
  const chip = (word, kind, title) => {
    const span = document.createElement("span");
    span.className = `sd-token sd-token--${kind}`;
    span.textContent = word;
    span.title = title;
    out.append(span, " ");
  };
  for (const pos of result.positions) {
    chip(pos.word, pos.outcome, `${VERDICT[pos.outcome]}: p = ${prob(pos.p)}, q = ${prob(pos.q)}`);
    if (pos.outcome === "rejected") chip(result.final.word, "correction", "correction, drawn from the residual");
  }
  if (result.final.kind === "bonus") chip(result.final.word, "bonus", "bonus, drawn from the target's last row");
  return out;
}

function table(result) {
  const wrap = document.createElement("div");
  wrap.className = "sd-scroll sd-dv-table";
  // It may scroll sideways on a narrow screen, so it must take keyboard focus (axe-core scrollable-region-focusable).
  wrap.tabIndex = 0;
  wrap.setAttribute("role", "region");
  wrap.setAttribute("aria-label", "Verification table, one row per target row");
  const t = document.createElement("table");
  t.className = "sd-table";
  t.innerHTML =
    "<caption>One target pass gives γ + 1 rows: row i scores draft i; the last row is the bonus distribution</caption>" +
    "<thead><tr><th scope=col>row: draft x</th><th scope=col>q(x)</th><th scope=col>p(x)</th>" +
    "<th scope=col>min(1, p/q)</th><th scope=col>u</th><th scope=col>verdict</th><th scope=col>target's top words in this row</th></tr></thead>";
  const body = document.createElement("tbody");
  result.rows.forEach((row, i) => {
    const pos = result.positions[i];
    const tr = document.createElement("tr");
    const cells = pos
      ? [`${i + 1}: ${pos.word}`, prob(pos.q), prob(pos.p), prob(pos.threshold), pos.u === null ? "—" : pos.u.toFixed(3), VERDICT[pos.outcome]]
      : [`${i + 1}: (bonus row)`, "", "", "", "", result.final.kind === "bonus" ? `bonus ${quoted(result.final.word)}` : "not needed"];
    cells.push(row.top.map((w) => `${w.word} ${prob(w.p)}`).join(" · "));
    for (const text of cells) {
      const td = document.createElement("td");
      td.textContent = text;
      tr.append(td);
    }
    if (pos) tr.dataset.outcome = pos.outcome;
    body.append(tr);
  });
  t.append(body);
  wrap.append(t);
  return wrap;
}

const round = (settings) => ({
  controls: roundControls(settings),
  args: roundArgs,
  metrics: [
    { name: "accepted", label: "Drafts accepted" },
    { name: "tokens-emitted", label: "Tokens from this target pass" },
    { name: "all-accepted-prob", label: "P(all γ accepted) = Π min(1, p/q)", format: prob },
    { name: "beta", label: "Mean β over the γ positions, β = Σ min(p, q)", format: fixed(3) },
  ],
  view(ctx) {
    const panel = roundPanel(ctx, { stepTitle: "Play a new round with the next seed" });
    const text = document.createElement("p");
    text.className = "sd-dv-text";
    text.setAttribute("aria-label", "The prompt and what the round emitted");
    const chart = ctx.chart(
      "For each draft position, a bar up to min(1, p/q) and a marker at its uniform u: a circle below the top of the bar means accepted, a cross above it rejected; grey bars after the first rejection were discarded without a check",
    );
    const details = document.createElement("div");
    const note = relation(
      "β is one position's chance of passing; the per-token acceptance rate α is its average over positions. A round's tokens per target pass is the accepted drafts plus one.",
    );
    ctx.el.append(panel.controls, panel.buttons, panel.status, text, chart, ctx.tiles(), note, details);
    return {
      paint(result) {
        text.replaceChildren(promptView(result.prompt_pieces, result.prompt_tokens), tokenStream(result));
        ctx.render(chart, result.figure);
        ctx.setMetrics(result.metrics);
        details.replaceChildren(table(result));
        panel.status.textContent = summary(result);
      },
    };
  },
});

const three = fixed(3);

const rates = (settings) => ({
  controls: [
    { key: "alpha", label: "Per-token acceptance rate α", min: 0, max: 1, step: 0.01, value: settings.args?.alpha ?? 0.8, format: fixed(2) },
    { key: "gamma", label: "Speculation length γ", min: 1, max: 8, step: 1, value: settings.args?.gamma ?? 4 },
  ],
  metrics: [
    { name: "alpha", label: "Per-token acceptance rate α", format: fixed(2) },
    { name: "accept-rate", label: "Draft acceptance rate: accepted ÷ drafted", format: three },
    { name: "all-accepted-prob", label: "P(all γ accepted) = α^γ", format: three },
    { name: "tokens-per-pass", label: "Tokens per target pass", format: three },
  ],
  view(ctx) {
    const chart = ctx.chart(
      "Three curves against the per-token acceptance rate α: α itself, the draft acceptance rate accepted over drafted at the chosen γ, and the chance that all γ drafts are accepted, α to the power γ; dots mark the chosen α",
    );
    const note = relation(
      "All three follow from α and γ: accepted ÷ drafted = α(1 − α^γ) / (γ(1 − α)), below α because drafts after a rejection count as drafted but are never checked, and tokens per target pass = (1 − α^(γ+1)) / (1 − α).",
    );
    ctx.el.append(ctx.group("sd-controls"), chart, ctx.tiles(), note);
    return {
      paint(result) {
        ctx.render(chart, result.figure);
        ctx.setMetrics(result.metrics);
      },
    };
  },
});

export default define(import.meta.url, (settings) => (settings.kind === "rates" ? rates(settings) : round(settings)));
