// Shared parts of the Draft and Verify widgets (not a widget itself): both run the n-gram pair on Pride and
// Prejudice from a prompt, with the same prompt picker, γ, sampling knobs, seed, Step and Reset.

import { announce, el } from "../ui/controls.js";
import { param } from "../ui/url.js";
import { relation } from "./relation.js";

const ROUND_DEFAULTS = { prompt: "", gamma: 4, temperature: 1, top_k: 0, top_p: 1, seed: 0 };

// A round widget: a prompt picker (a preset fills the text box), γ, the sampling knobs (applied to both models, as a
// serving system applies one request's settings), the seed, Step (the next seed) and Reset (the settings' values), a
// status line, the prompt and what came after it (`words(result)`), the chart, the tiles, a relation note and
// `details(result)`. `say(result, args, live)` is the status line's text (null: leave it).
export function roundWidget(settings, parts) {
  const start = { ...ROUND_DEFAULTS, ...settings.args };
  const prompts = settings.prompts || [start.prompt];
  const options = [...prompts.map((text) => [text, text]), ["", "(your own text)"]];
  const picked = prompts.includes(start.prompt) ? start.prompt : "";
  return {
    controls: [
      {
        key: "preset",
        label: "Prompt",
        kind: "select",
        options,
        value: picked,
        live: false,
        onChange: (ctx, v) => v && ctx.set({ prompt: v }),
      },
      // In the link, as a reader's own text is state to share (the preset picker follows it).
      {
        key: "prompt",
        label: "Or type your own",
        kind: "text",
        value: start.prompt,
        maxLength: 400,
        url: true,
        short: "prompt",
      },
      param("gamma", start.gamma),
      param("temperature", start.temperature),
      // In the link like the temperature: a shared link or a reload kept γ and the temperature, not these.
      param("top-k", start.top_k, { max: 1000 }),
      param("top-p", start.top_p),
      param("seed", start.seed),
    ],
    // What the handler takes: everything but the preset picker.
    args: ({ prompt, gamma, temperature, "top-k": top_k, "top-p": top_p, seed }) => ({
      prompt,
      gamma,
      temperature,
      top_k,
      top_p,
      seed,
    }),
    metrics: parts.metrics,
    chart: parts.chart,
    fit: parts.fit,
    view: (ctx) => roundView(ctx, parts),
  };
}

function roundView(ctx, { stepTitle, textLabel, note, words, say, details }) {
  const { preset, prompt } = ctx.controls;
  prompt.root.classList.add("sd-dv-text-control");
  // Typing a preset's words selects it; anything else (a link's own text too) is "your own text".
  const follow = () =>
    (preset.value = [...preset.input.options].some((o) => o.value === prompt.value) ? prompt.value : "");
  ctx.on(prompt.input, "input", follow);
  follow();
  const controls = ctx.group("sd-controls", ["gamma", "temperature", "top-k", "top-p", "seed"]);
  controls.prepend(el("div", "sd-controls sd-controls--row", preset.root, prompt.root));

  const step = ctx.button("Step", () => ctx.set({ seed: ctx.controls.seed.value + 1 }), "md-button--primary");
  step.title = stepTitle;
  const buttons = el(
    "div",
    "sd-buttons",
    step,
    ctx.button("Reset", () => ctx.set(ctx.start)),
  );
  const status = announce("sd-verdict", say(null, null, false));
  // The first live call trains the n-gram models in the worker (a fraction of a second): say so meanwhile.
  ctx.onStatus((python) => {
    if (python.state === "ready" && !ctx.el.dataset.sdLive)
      status.textContent = "Loading the language model (Pride and Prejudice n-grams)…";
  });
  const text = el("p", "sd-dv-text");
  text.setAttribute("aria-label", textLabel);
  const more = el("div");
  ctx.el.append(controls, buttons, status, text, ctx.charts.figure, ctx.tiles(), relation(note));
  if (details) ctx.el.append(more);
  return {
    paint(result, args) {
      text.replaceChildren(promptView(result.prompt_pieces, result.prompt_tokens), words(result));
      const said = say(result, args, Boolean(ctx.el.dataset.sdLive));
      if (said !== null) status.textContent = said;
      if (details) more.replaceChildren(details(result));
    },
  };
}

// The prompt as the models read it: one box per byte-level BPE piece ("▁" is a leading space), the last 32 of them.
// A rare word takes several pieces; nothing is unknown.
function promptView(pieces, total) {
  const span = el("span", "sd-dv-context");
  if (total > pieces.length) span.append("… ");
  for (const text of pieces) span.append(el("span", "sd-dv-piece", text));
  return span;
}

// Probabilities: three decimals, or a short exponent when tiny (a rare word's q can be 1e-5).
export function prob(x) {
  if (x === null || x === undefined) return "—";
  if (x === 0) return "0";
  return x >= 0.001 ? x.toFixed(3) : x.toExponential(1);
}
