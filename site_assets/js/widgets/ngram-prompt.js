// Shared parts of the Draft and Verify widgets (not a widget itself). Both run the n-gram pair on Pride and
// Prejudice from a prompt, so both offer the same prompt picker, γ, sampling knobs, seed, Step and Reset.
// Numbers shown here come from Python; this file only lays them out.

import { announce, el } from "../ui/controls.js";
import { PARAMS } from "../ui/url.js";
import { relation } from "./relation.js";

// The first live call trains the n-gram models in the worker (a fraction of a second): say so meanwhile.
export const LOADING_MODEL = "Loading the language model (Pride and Prejudice n-grams)…";

const ROUND_DEFAULTS = { prompt: "", gamma: 4, temperature: 1, top_k: 0, top_p: 1, seed: 0 };

// The controls: a preset prompt picker plus a text box (picking a preset fills the box), γ and the seed in the URL,
// and temperature, top-k and top-p applied to both models (as a serving system applies one request's settings).
export function roundControls(settings) {
  const start = { ...ROUND_DEFAULTS, ...settings.args };
  const prompts = settings.prompts || [start.prompt];
  const options = [...prompts.map((text) => [text, text]), ["", "(your own text)"]];
  const picked = prompts.includes(start.prompt) ? start.prompt : "";
  return [
    { key: "preset", label: "Prompt", kind: "select", options, value: picked, live: false, onChange: (ctx, v) => v && ctx.set({ prompt: v }) },
    { key: "prompt", label: "Or type your own", kind: "text", value: start.prompt, maxLength: 400 },
    { key: "gamma", label: "Speculation length γ", ...PARAMS.gamma, value: start.gamma, url: true },
    { key: "temperature", label: "Temperature", min: 0, max: 2, step: 0.05, value: start.temperature, format: (v) => (v === 0 ? "0 (greedy)" : v.toFixed(2)) },
    { key: "top_k", label: "Top-k (0 = all words)", kind: "number", min: 0, max: 1000, step: 1, value: start.top_k },
    { key: "top_p", label: "Top-p", min: 0.05, max: 1, step: 0.05, value: start.top_p, format: (v) => (v === 1 ? "1 (all)" : v.toFixed(2)) },
    { key: "seed", label: "Seed", kind: "number", ...PARAMS.seed, value: start.seed, url: true },
  ];
}

// What the handler takes: everything but the preset picker.
export const roundArgs = ({ prompt, gamma, temperature, top_k, top_p, seed }) => ({ prompt, gamma, temperature, top_k, top_p, seed });

// A round widget's definition: the controls above, Step (the next seed) and Reset (the settings' values), a status
// line, the prompt and what came after it (`words(result)`), the chart, the tiles, a relation note, and `details`.
// `say(result, args, live)` is the status line's text (null: leave it).
export function roundWidget(settings, { metrics, chart, stepTitle, textLabel, note, words, say, details }) {
  return { controls: roundControls(settings), args: roundArgs, metrics, chart, view: (ctx) => roundView(ctx, { stepTitle, textLabel, note, words, say, details }) };
}

function roundView(ctx, { stepTitle, textLabel, note, words, say, details }) {
  const { preset, prompt } = ctx.controls;
  const promptRow = el("div", "sd-controls sd-controls--row", preset.root, prompt.root);
  prompt.root.classList.add("sd-dv-text-control");
  // Typing a preset's words selects it; anything else is "your own text".
  ctx.on(prompt.input, "input", () => (preset.value = [...preset.input.options].some((o) => o.value === prompt.value) ? prompt.value : ""));
  const controls = ctx.group("sd-controls", ["gamma", "temperature", "top_k", "top_p", "seed"]);
  controls.prepend(promptRow);

  const step = ctx.button("Step", () => ctx.set({ seed: ctx.controls.seed.value + 1 }), "md-button--primary");
  step.title = stepTitle;
  const buttons = el("div", "sd-buttons", step, ctx.button("Reset", () => ctx.set(ctx.start)));
  const status = announce("sd-verdict", say(null, null, false));
  ctx.onStatus((python) => {
    if (python.state === "ready" && !ctx.el.dataset.sdLive) status.textContent = LOADING_MODEL;
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

// The prompt as the models read it: one box per byte-level BPE piece ("▁" is a leading space). A rare word takes
// several pieces; nothing is unknown. The handler sends the last 32 pieces.
export function promptView(pieces, total) {
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
