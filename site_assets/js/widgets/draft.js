// Widget "draft": Step 1 of a round on real text. Two kinds, chosen by the settings' "kind":
//
// - "ngram" (default): the bigram draft model of Pride and Prejudice proposes γ words after the reader's prompt,
//   one at a time. Each drafted word shows q(x), the draft's top candidates at that position, and (as a preview
//   of Verify) what the trigram target thinks of it, p(x). Handler draft.ngram.
//
//     <div class="sd-widget" data-widget="draft">
//     <script type="application/json">{"handler": "draft.ngram", "args": {"prompt": "...", "gamma": 4, "seed": 7},
//       "prompts": ["...", "..."]}</script>
//     </div>
//
// - "risk": why longer drafts are riskier: α^γ against the speedup of Thm 3.8 as γ grows. Handler draft.risk.

import { define } from "../ui/widget.js";
import { el, fixed } from "../ui/controls.js";
import { prob, promptView, roundArgs, roundControls, roundPanel } from "./ngram-prompt.js";
import { relation } from "./relation.js";

const ngram = (settings) => ({
  controls: roundControls(settings),
  args: roundArgs,
  metrics: [
    { name: "draft-steps", label: "Sequential draft steps" },
    { name: "beta", label: "Mean β over the γ positions, β = Σ min(p, q)", format: fixed(3) },
    { name: "all-accepted-prob", label: "P(target keeps all γ) = Π min(1, p/q)", format: prob },
    { name: "alpha-to-gamma", label: "α^γ with α = mean β", format: prob },
  ],
  view(ctx) {
    const panel = roundPanel(ctx, { stepTitle: "Draft again with the next seed" });
    const text = el("p", "sd-dv-text");
    text.setAttribute("aria-label", "The prompt and the drafted words");
    const chart = ctx.chart(
      "Per draft position, a horizontal bar chart of the draft model's most likely next words by q, the drafted word highlighted, with the target's p for the same words as diamonds",
    );
    const note = relation(
      "β is one position's chance of passing; the per-token acceptance rate α is β's average over positions, here estimated by the mean β of these γ.",
    );
    ctx.el.append(panel.controls, panel.buttons, panel.status, text, chart, ctx.tiles(), note);
    panel.status.textContent = "This draft was computed when the site was built; Python is loading in the background.";
    return {
      paint(result, args) {
        const drafted = el("span", "sd-dv-drafts");
        for (const pos of result.positions) {
          const chip = el("span", "sd-token sd-token--drafted", pos.word);
          chip.append(el("small", "", ` q ${prob(pos.q)} · p ${prob(pos.p)}`));
          chip.title = `draft position ${pos.index + 1}: q(${pos.word}) = ${prob(pos.q)}, target p(${pos.word}) = ${prob(pos.p)}`;
          drafted.append(chip, " ");
        }
        text.replaceChildren(promptView(result.prompt_pieces, result.prompt_tokens), drafted);
        ctx.render(chart, result.figure);
        ctx.setMetrics(result.metrics);
        if (!ctx.el.dataset.sdLive) return; // the build-time draft keeps the note above
        const n = result.positions.length;
        panel.status.textContent =
          `Drafted ${n} word${n === 1 ? "" : "s"} with seed ${args.seed}: ${n} sequential calls to the cheap bigram model, ` +
          `none to the target. Press Step to draft again with the next seed.`;
      },
    };
  },
});

const risk = (settings) => ({
  controls: [
    { key: "alpha", label: "Agreement rate α", min: 0, max: 1, step: 0.01, value: settings.args?.alpha ?? 0.8, format: fixed(2) },
    { key: "cost", label: "Draft cost c", min: 0, max: 1, step: 0.01, value: settings.args?.cost ?? 0.05, format: fixed(2) },
  ],
  metrics: [
    { name: "optimal-gamma", label: "Best γ (1–8; 0 = do not speculate)" },
    { name: "speedup", label: "Speedup at the best γ", format: (v) => `${v.toFixed(2)}×` },
    { name: "all-accepted-prob", label: "P(all accepted) at the best γ", format: fixed(3) },
  ],
  view(ctx) {
    const chart = ctx.chart(
      "Bars: the probability that all γ drafted tokens are accepted, α to the power γ, for γ from 1 to 8; line: the expected speedup at draft cost c, with the best γ starred",
    );
    ctx.el.append(ctx.group("sd-controls"), chart, ctx.tiles());
    return {
      paint(result) {
        ctx.render(chart, result.figure);
        ctx.setMetrics(result.metrics);
      },
    };
  },
});

export default define(import.meta.url, (settings) => (settings.kind === "risk" ? risk(settings) : ngram(settings)));
