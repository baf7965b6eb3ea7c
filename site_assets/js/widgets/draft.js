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

import { prob, promptView, roundPanel } from "./ngram-prompt.js";
import { relation } from "./relation.js";

function mountNgram(el, ctx) {
  const panel = roundPanel(ctx, { stepTitle: "Draft again with the next seed" });
  const { start, status } = panel;

  const text = document.createElement("p");
  text.className = "sd-dv-text";
  text.setAttribute("aria-label", "The prompt and the drafted words");

  const chart = ctx.chart(
    "Per draft position, a horizontal bar chart of the draft model's most likely next words by q, the drafted word highlighted, with the target's p for the same words as diamonds",
  );
  const metrics = ctx.metrics([
    { name: "draft-steps", label: "Sequential draft steps" },
    { name: "beta", label: "Mean β over the γ positions, β = Σ min(p, q)" },
    { name: "all-accepted-prob", label: "P(target keeps all γ) = Π min(1, p/q)" },
    { name: "alpha-to-gamma", label: "α^γ with α = mean β" },
  ]);
  const note = relation(
    "β is one position's chance of passing; the per-token acceptance rate α is β's average over positions, here estimated by the mean β of these γ.",
  );
  el.append(panel.controls, panel.buttons, status, text, chart, metrics, note);

  const paint = (result, args) => {
    text.replaceChildren(promptView(result.prompt_pieces, result.prompt_tokens));
    const drafted = document.createElement("span");
    drafted.className = "sd-dv-drafts";
    for (const pos of result.positions) {
      const chip = document.createElement("span");
      chip.className = "sd-token sd-token--drafted";
      chip.textContent = pos.word;
      const note = document.createElement("small");
      note.textContent = ` q ${prob(pos.q)} · p ${prob(pos.p)}`;
      chip.append(note);
      chip.title = `draft position ${pos.index + 1}: q(${pos.word}) = ${prob(pos.q)}, target p(${pos.word}) = ${prob(pos.p)}`;
      drafted.append(chip, " ");
    }
    text.append(drafted);
    ctx.render(chart, result.figure);
    ctx.setMetrics(result.metrics, {
      beta: (v) => v.toFixed(3),
      "all-accepted-prob": prob,
      "alpha-to-gamma": prob,
    });
    const n = result.positions.length;
    status.textContent =
      `Drafted ${n} word${n === 1 ? "" : "s"} with seed ${args.seed}: ${n} sequential calls to the cheap bigram model, ` +
      `none to the target. Press Step to draft again with the next seed.`;
  };

  if (ctx.initial) paint(ctx.initial, start);
  status.textContent = "This draft was computed when the site was built; Python is loading in the background.";
  panel.connect("draft.ngram", paint);
}

function mountRisk(el, ctx) {
  const args = { alpha: 0.8, cost: 0.05, ...(ctx.settings.args || {}) };
  const alpha = ctx.slider({ key: "alpha", label: "Agreement rate α", min: 0, max: 1, step: 0.01, value: args.alpha, format: (v) => v.toFixed(2) });
  const cost = ctx.slider({ key: "cost", label: "Draft cost c", min: 0, max: 1, step: 0.01, value: args.cost, format: (v) => v.toFixed(2) });
  const controls = document.createElement("div");
  controls.className = "sd-dv-controls";
  controls.append(alpha.root, cost.root);
  const chart = ctx.chart(
    "Bars: the probability that all γ drafted tokens are accepted, α to the power γ, for γ from 1 to 8; line: the expected speedup at draft cost c, with the best γ starred",
  );
  const metrics = ctx.metrics([
    { name: "optimal-gamma", label: "Best γ (1–8; 0 = do not speculate)" },
    { name: "speedup", label: "Speedup at the best γ" },
    { name: "all-accepted-prob", label: "P(all accepted) at the best γ" },
  ]);
  el.append(controls, chart, metrics);
  const paint = (result) => {
    ctx.render(chart, result.figure);
    ctx.setMetrics(result.metrics, { speedup: (v) => `${v.toFixed(2)}×`, "all-accepted-prob": (v) => v.toFixed(3) });
  };
  if (ctx.initial) paint(ctx.initial);
  const update = ctx.latest("draft.risk", paint);
  const send = () => update({ alpha: alpha.value, cost: cost.value });
  alpha.input.addEventListener("input", send);
  cost.input.addEventListener("input", send);
  ctx.ready.then(send, () => {});
}

SDLab.register("draft", {
  mount(el, ctx) {
    if (ctx.settings.kind === "risk") mountRisk(el, ctx);
    else mountNgram(el, ctx);
  },
});
