// Widget "bonus-sim": how often a round ends with a bonus token. Sliders α and γ; Python simulates a few thousand
// real rounds of the agreement pair (models.agreement_pair, steps.draft + steps.speculative_round) and returns
// them beside theory.accepted_count_distribution and theory.expected_tokens. URL state: alpha, gamma, seed.
//
//   <div class="sd-widget" data-widget="bonus-sim">
//   <script type="application/json">{"handler": "bonus.simulate", "args": {"alpha": 0.8, "gamma": 4, "rounds": 2000, "seed": 0}}</script>
//   </div>

import { relation } from "./relation.js";

const SPEC = {
  alpha: { min: 0, max: 1, step: 0.01, value: 0.8 },
  gamma: { min: 1, max: 8, step: 1, value: 4 },
  seed: { min: 0, max: 2 ** 31 - 1, step: 1, value: 0 },
};

const fixed = (digits) => (v) => Number(v).toFixed(digits);
const percent = (v) => `${(100 * v).toFixed(1)}%`;

SDLab.register("bonus-sim", {
  mount(el, ctx) {
    const rounds = ctx.settings.args?.rounds ?? 2000;
    const start = ctx.url.read(SPEC);
    const alpha = ctx.slider({ key: "alpha", label: "Agreement rate α", ...SPEC.alpha, value: start.alpha, format: fixed(2) });
    const gamma = ctx.slider({ key: "gamma", label: "Speculation length γ", ...SPEC.gamma, value: start.gamma });
    const seed = ctx.number({ key: "seed", label: "Seed", ...SPEC.seed, value: start.seed });
    const controls = document.createElement("div");
    controls.className = "sd-cbe-controls";
    controls.append(alpha.root, gamma.root, seed.root);

    const summary = document.createElement("p");
    summary.className = "sd-cbe-verdict";
    summary.setAttribute("role", "status");
    summary.setAttribute("aria-live", "polite");

    const metrics = ctx.metrics([
      { name: "tokens-per-pass", label: "Tokens per target pass (simulated)" },
      { name: "tokens-per-pass-theory", label: "Expected: (1 − α^(γ+1)) / (1 − α)" },
      { name: "bonus-share", label: "Rounds ending with a bonus (simulated)" },
      { name: "bonus-share-theory", label: "Expected: α^γ" },
      { name: "alpha", label: "Per-token acceptance rate α (simulated): accepted ÷ checked" },
      { name: "alpha-theory", label: "Per-token acceptance rate α (set)" },
    ]);
    const note = relation(
      "Tokens per target pass = (1 − α^(γ+1)) / (1 − α) follows from α and γ. α counts only drafts the verifier checked; the draft acceptance rate (accepted ÷ drafted) also counts the discarded ones, so it is lower.",
    );
    const charts = document.createElement("div");
    charts.className = "sd-cbe-charts";
    const counts = ctx.chart(
      "Bar chart of the share of rounds by number of accepted drafts, theory as bars (the last bar: all accepted, a bonus token) and the simulated rounds as diamonds",
    );
    const curve = ctx.chart("Line chart of expected tokens per target pass against γ at this α, under the ceiling γ + 1, with the current γ marked");
    charts.append(counts, curve);
    el.append(controls, summary, metrics, note, charts);

    const paint = (result) => {
      const m = result.metrics;
      ctx.render(counts, result.figures.counts);
      ctx.render(curve, result.figures.curve);
      ctx.setMetrics(m, {
        "tokens-per-pass": (v) => `${fixed(3)(v)} ± ${fixed(3)(2 * m["tokens-per-pass-se"])}`,
        "tokens-per-pass-theory": fixed(3),
        "bonus-share": percent,
        "bonus-share-theory": percent,
        alpha: fixed(3),
        "alpha-theory": fixed(2),
      });
      const g = result.counts.length - 1;
      summary.textContent =
        `Of ${m.rounds.toLocaleString("en")} simulated rounds, ${result.counts[g].toLocaleString("en")} (${percent(m["bonus-share"])}) ` +
        `accepted all ${g} drafts and took a bonus token from the target's row ${g + 1}; ` +
        `every round emitted between 1 and ${g + 1} tokens, ${fixed(2)(m["tokens-per-pass"])} on average (± is two standard errors).`;
    };
    if (ctx.initial) paint(ctx.initial);

    const update = ctx.latest("bonus.simulate", (result, sent) => {
      paint(result);
      ctx.url.write({ alpha: sent.alpha, gamma: sent.gamma, seed: sent.seed });
    });
    const send = () =>
      update({ alpha: alpha.value, gamma: gamma.value, rounds, seed: Math.min(Math.max(0, Math.floor(seed.value) || 0), SPEC.seed.max) });
    alpha.input.addEventListener("input", send);
    gamma.input.addEventListener("input", send);
    seed.input.addEventListener("change", send);
    ctx.ready.then(send, () => {});
  },
});
