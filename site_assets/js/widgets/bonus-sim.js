// Widget "bonus-sim": how often a round ends with a bonus token. Sliders α and γ; Python simulates a few thousand
// real rounds of the agreement pair (models.agreement_pair, steps.draft + steps.speculative_round) and returns
// them beside theory.accepted_count_distribution and theory.expected_tokens. URL state: alpha, gamma, seed.

import { define } from "../ui/widget.js";
import { announce, fixed, grouped, percent } from "../ui/controls.js";
import { param } from "../ui/url.js";
import { relation } from "./relation.js";

export default define(import.meta.url, (settings) => ({
  controls: [
    param("alpha", settings.args.alpha),
    param("gamma", settings.args.gamma),
    param("seed", settings.args.seed),
  ],
  metrics: [
    {
      name: "tokens-per-pass",
      label: "Tokens per target pass (simulated)",
      format: (v, m) => `${fixed(3)(v)} ± ${fixed(3)(2 * m["tokens-per-pass-se"])}`,
    },
    { name: "tokens-per-pass-theory", label: "Expected: (1 − α^(γ+1)) / (1 − α)", format: fixed(3) },
    { name: "bonus-share", label: "Rounds ending with a bonus (simulated)", format: percent },
    { name: "bonus-share-theory", label: "Expected: α^γ", format: percent },
    { name: "alpha", label: "Per-token acceptance rate α (simulated): accepted ÷ checked", format: fixed(3) },
    { name: "alpha-theory", label: "Per-token acceptance rate α (set)", format: fixed(2) },
  ],
  charts: {
    counts:
      "Bar chart of the share of rounds by number of accepted drafts, theory as bars (the last bar: all accepted, a bonus token) and the simulated rounds as diamonds",
    curve:
      "Line chart of expected tokens per target pass against γ at this α, under the ceiling γ + 1, with the current γ marked",
  },
  view(ctx) {
    const summary = announce("sd-verdict");
    const note = relation(
      "Tokens per target pass = (1 − α^(γ+1)) / (1 − α) follows from α and γ. α counts only drafts the verifier checked; the draft acceptance rate (accepted ÷ drafted) also counts the discarded ones, so it is lower whenever drafts are discarded (γ > 1 and 0 < α < 1) and equal otherwise.",
    );
    ctx.el.append(ctx.group("sd-controls"), summary, ctx.tiles(), note, ctx.chartRow());
    return {
      paint(result) {
        const m = result.metrics;
        const g = result.counts.length - 1;
        const [fewest, most] = result.emitted;
        summary.textContent =
          `Of ${grouped(m.rounds)} simulated rounds, ${grouped(result.counts[g])} (${percent(m["bonus-share"])}) ` +
          `accepted ${g === 1 ? "their one draft" : `all ${g} drafts`} and took a bonus token from the target's row ${g + 1}; ` +
          (fewest === most
            ? `every round emitted exactly ${most} token${most === 1 ? "" : "s"}.`
            : `the rounds emitted between ${fewest} and ${most} tokens, ${fixed(2)(m["tokens-per-pass"])} on average (± is two standard errors).`);
      },
    };
  },
}));
