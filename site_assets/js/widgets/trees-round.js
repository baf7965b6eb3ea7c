// Widget "trees-round": a token tree drafted and verified in one target pass, round by round (handler
// "trees.round", specdec_core/web/trees.py). Step plays one round and explains it; Run plays many in chunks,
// sending the tallies back each time; Reset starts a new tally. Every number comes from Python.
//
// URL state: k, depth, alpha, seed (clamped by the binding, which says so).

import { define } from "../ui/widget.js";
import { announce, el, fixed, grouped } from "../ui/controls.js";
import { param } from "../ui/url.js";

const PAIRS = [
  ["agreement", "Synthetic (set α)"],
  ["ngram", "n-grams (real text)"],
];
const MODES = [
  ["true", "i.i.d. (SpecInfer)"],
  ["false", "without replacement"],
];

export default define(import.meta.url, (settings) => {
  const base = settings.args;
  return {
    controls: [
      { key: "pair", label: "Model pair", kind: "select", options: PAIRS, value: base.pair },
      param("alpha", base.alpha),
      param("k", base.k),
      param("depth", base.depth),
      { key: "replacement", label: "Children drawn", kind: "select", options: MODES, value: String(base.replacement) },
      param("seed", base.seed),
    ],
    metrics: [
      { name: "tokens-per-pass", label: "Tokens per target pass", format: fixed(3) },
      { name: "tokens-per-pass-theory", label: "Full-tree theory: Σ A^j, j = 0..depth", format: fixed(3) },
      { name: "nodes-per-pass", label: "Nodes scored per pass", format: fixed(1) },
      { name: "accept-rate", label: "Draft acceptance rate: accepted ÷ drafted nodes", format: fixed(3) },
      {
        name: "tv-distance",
        label: "TV(first tokens, target)",
        format: (v, m) => `${fixed(3)(v)} (noise ≈ ${fixed(3)(m["tv-noise"])})`,
      },
      { name: "exact", label: "Output = target?", format: (v) => (v ? "consistent" : "not the target") },
    ],
    charts: {
      tree: "Tree drawing of the last round: depth across, each drafted node marked by its fate (accepted: filled circle, rejected: cross, never checked: open circle, correction: diamond, bonus: star), the verified path drawn bold",
      mask: "Heatmap of the tree-attention mask: a filled cell where the row's node may attend to the column's node (itself and its ancestors)",
    },
    view: (ctx) => view(ctx, settings),
  };
});

function view(ctx, settings) {
  const runRounds = settings.runRounds || 200;
  let state = null;
  let lastRun = null; // [played, of]: the Run whose rounds are in the tally on screen, if one is

  const runner = ctx.runButton(run, "md-button--primary");
  const progress = el("output", "sd-note sd-trees-progress");
  progress.setAttribute("aria-live", "polite");
  const buttons = el(
    "div",
    "sd-buttons",
    runner.button,
    ctx.button("Step", () => step()),
    ctx.button("Reset", () => reset()),
    progress,
  );

  const verdict = announce("sd-verdict");
  const explain = el("ol", "sd-trees-explain");
  explain.setAttribute("aria-live", "polite");
  explain.setAttribute("aria-label", "What the last round did");
  const emitted = el("p", "sd-note sd-trees-emitted");
  ctx.el.append(ctx.group("sd-controls"), buttons, ctx.tiles(), verdict, explain, emitted, ctx.chartRow());

  // α sets the synthetic pair only: with the n-gram pair the slider moved and nothing changed. It is off there,
  // and says why.
  const { pair, alpha } = ctx.controls;
  const why = el(
    "span",
    "sd-control__hint",
    "The n-gram pair's agreement comes from the text: α sets the synthetic pair.",
  );
  why.id = `${alpha.input.id}-why`;
  alpha.root.append(why);
  const hint = alpha.input.getAttribute("aria-describedby"); // the slider's own hint, kept
  const follow = () => {
    const text = pair.value === "ngram";
    alpha.input.disabled = text;
    why.hidden = !text;
    alpha.input.setAttribute("aria-describedby", [text ? why.id : "", hint || ""].join(" ").trim());
  };
  ctx.on(pair.input, pair.event, follow);
  follow();

  function paint(result) {
    const m = result.metrics;
    if (!("exact" in m)) ctx.clearMetric("exact", "not yet: see below");
    if (!("tokens-per-pass-theory" in m)) ctx.clearMetric("tokens-per-pass-theory", "— (text: no i.i.d. theory)");
    verdict.textContent = `${result.verdict.text}. ${grouped(m.rounds)} ${m.rounds === 1 ? "round" : "rounds"}, each from the same context: the first token each emits must follow the target there.`;
    verdict.classList.toggle("sd-verdict--ok", result.verdict.state === "consistent");
    verdict.classList.toggle("sd-verdict--bad", result.verdict.state === "inconsistent");
    explain.replaceChildren(...result.explain.map((line) => el("li", "", line)));
    emitted.textContent = `Last round emitted: ${result.tokens.map((t) => `“${t}”`).join(" ")}`;
    showRun();
  }

  // A Step after a Run adds to its tally; Reset or new settings start another.
  function showRun() {
    if (lastRun)
      progress.textContent = `Run: ${lastRun[0]} / ${lastRun[1]} rounds played; ${grouped(state.rounds)} in the tally`;
  }

  function run(signal) {
    const played = async (rounds, done) => {
      await ctx.request({ extra: { rounds } });
      lastRun = [done + rounds, runRounds];
      showRun();
    };
    return ctx.chunked(signal, runRounds, played, { first: 5, min: 1, max: 200 });
  }

  async function step() {
    await runner.stop();
    await ctx.request({ extra: { rounds: 1 } });
  }

  async function reset() {
    await runner.stop();
    state = null;
    lastRun = null;
    progress.textContent = "Reset: a new tally from round 1.";
    await ctx.request({ extra: { rounds: 1, fresh: true } });
  }

  return {
    args: (values, _settings, extra) => ({
      pair: values.pair,
      alpha: values.alpha,
      k: values.k,
      depth: values.depth,
      replacement: values.replacement === "true" || values.replacement === true,
      seed: Math.max(0, Math.round(values.seed) || 0),
      rounds: extra?.rounds ?? 1,
      state: extra?.fresh ? null : state,
    }),
    adopt(result) {
      if (lastRun && result.state.rounds <= state.rounds) {
        lastRun = null; // new settings: a new tally
        progress.textContent = "";
      }
      state = result.state;
    },
    paint,
  };
}
