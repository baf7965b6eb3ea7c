// Widget "draft": Step 1 of a round. Kind "ngram" (default, handler draft.ngram): the bigram draft of Pride and
// Prejudice proposes γ words after the reader's prompt, each with q(x), the draft's top candidates and, as a preview
// of Verify, the trigram target's p(x). Kind "risk" (draft.risk): α^γ against the speedup of Thm 3.8 as γ grows.

import { define } from "../ui/widget.js";
import { el, fixed, times } from "../ui/controls.js";
import { param } from "../ui/url.js";
import { prob, roundWidget } from "./ngram-prompt.js";

function drafted(result) {
  const span = el("span", "sd-dv-drafts");
  for (const pos of result.positions) {
    const chip = el(
      "span",
      "sd-token sd-token--drafted",
      pos.word,
      el("small", "", ` q ${prob(pos.q)} · p ${prob(pos.p)}`),
    );
    chip.title = `draft position ${pos.index + 1}: q(${pos.word}) = ${prob(pos.q)}, target p(${pos.word}) = ${prob(pos.p)}`;
    span.append(chip, " ");
  }
  return span;
}

// Two panels to a row leave each ~100 px on a phone, where their titles ran into each other and their ticks stood
// on end: below 560 px the panels stand one to a row, as wide as the chart, each as tall as before (the figure's
// meta gives the panel's and the gap's heights in pixels, specdec_core/web/draft.py).
function oneColumn(figure, width) {
  const { panel_px: panel, gap_px: gap } = figure?.layout?.meta || {};
  const notes = figure?.layout?.annotations || [];
  if (!panel || !width || width >= 560 || notes.length < 2) return figure;
  const out = structuredClone(figure);
  const lay = out.layout;
  const before = lay.height - lay.margin.t - lay.margin.b;
  const plot = notes.length * panel + (notes.length - 1) * gap;
  lay.height = plot + lay.margin.t + lay.margin.b;
  lay.legend.y = 1 + ((lay.legend.y - 1) * before) / plot; // the same pixels above the first panel's title
  lay.annotations.forEach((note, i) => {
    const top = 1 - (i * (panel + gap)) / plot;
    const n = i ? String(i + 1) : "";
    lay[`xaxis${n}`].domain = [0, 1];
    lay[`yaxis${n}`].domain = [top - panel / plot, top];
    Object.assign(note, { x: 0, y: top });
  });
  return out;
}

// The build-time draft keeps its note until a live one comes.
function say(result, args, live) {
  if (!result) return "This draft was computed when the site was built; Python is loading in the background.";
  if (!live) return null;
  const n = result.positions.length;
  return (
    `Drafted ${n} token${n === 1 ? "" : "s"} with seed ${args.seed}: ${n} sequential call${n === 1 ? "" : "s"} to the cheap bigram model, ` +
    `none to the target. Press Step to draft again with the next seed.`
  );
}

const ngram = (settings) =>
  roundWidget(settings, {
    metrics: [
      { name: "draft-steps", label: "Sequential draft steps" },
      { name: "beta", label: "Mean β over the γ positions, β = Σ min(p, q)", format: fixed(3) },
      { name: "all-accepted-prob", label: "P(target keeps all γ) = Π min(1, p/q)", format: prob },
      { name: "alpha-to-gamma", label: "α^γ with α = mean β", format: prob },
    ],
    chart:
      "Per draft position, a horizontal bar chart of the draft model's most likely next tokens by q, the drafted token highlighted, with the target's p for the same tokens as diamonds",
    stepTitle: "Draft again with the next seed",
    textLabel: "The prompt and the drafted tokens",
    note: "β is one position's chance of passing; the per-token acceptance rate α is β's average over positions, here estimated by the mean β of these γ.",
    words: drafted,
    say,
    fit: oneColumn,
  });

const risk = (settings) => ({
  controls: [param("alpha", settings.args?.alpha), param("cost", settings.args?.cost)],
  metrics: [
    { name: "optimal-gamma", label: "Best γ (1–8; 0 = do not speculate)" },
    { name: "speedup", label: "Speedup at the best γ", format: times },
    {
      name: "all-accepted-prob",
      label: "P(all accepted) at the best γ",
      format: (v) => (v === null ? "— (nothing drafted)" : fixed(3)(v)),
    },
  ],
  chart:
    "Bars: the probability that all γ drafted tokens are accepted, α to the power γ, for γ from 1 to 8; line: the expected speedup at draft cost c, with the best γ starred",
});

export default define(import.meta.url, (settings) => (settings.kind === "risk" ? risk(settings) : ngram(settings)));
