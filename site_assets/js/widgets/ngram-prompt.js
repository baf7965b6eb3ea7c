// Shared controls of the Draft and Verify widgets (not a widget itself: it registers nothing). Both run the
// n-gram pair on Pride and Prejudice from a prompt, so both offer the same prompt picker, sampling knobs and seed.
// Numbers shown here come from Python; this file only formats them.

// The first live call trains the n-gram models in the worker (a fraction of a second): say so meanwhile.
export const LOADING_MODEL = "Loading the language model (Pride and Prejudice n-grams)…";

let uid = 0;

// A labelled <select> of preset prompts plus a labelled text box; picking a preset fills the box.
export function promptControls(ctx, { prompts, value }) {
  const id = `sd-${ctx.name}-prompt-${++uid}`;
  const root = document.createElement("div");
  root.className = "sd-dv-prompt";
  root.innerHTML =
    `<div class="sd-control sd-control--select"><label for="${id}-pick">Prompt</label><select id="${id}-pick"></select></div>` +
    `<div class="sd-control sd-control--text sd-dv-text-control"><label for="${id}-text">Or type your own</label>` +
    `<input type="text" id="${id}-text" name="prompt" maxlength="400" spellcheck="false" autocomplete="off"></div>`;
  const select = root.querySelector("select");
  const input = root.querySelector("input");
  for (const text of prompts) select.append(new Option(text, text));
  select.append(new Option("(your own text)", ""));
  input.value = value;
  const sync = () => (select.value = prompts.includes(input.value) ? input.value : "");
  sync();
  select.addEventListener("change", () => {
    if (select.value) input.value = select.value;
    input.dispatchEvent(new Event("change", { bubbles: true }));
  });
  input.addEventListener("input", sync);
  return {
    root,
    select,
    input,
    get value() {
      return input.value;
    },
    set value(text) {
      input.value = text;
      sync();
    },
  };
}

// Temperature, top-k and top-p, applied to both models (as a serving system applies one request's settings).
export function samplingControls(ctx, args) {
  const temperature = ctx.slider({
    key: "temperature",
    label: "Temperature",
    min: 0,
    max: 2,
    step: 0.05,
    value: args.temperature ?? 1,
    format: (v) => (v === 0 ? "0 (greedy)" : v.toFixed(2)),
  });
  const topK = ctx.number({ key: "top_k", label: "Top-k (0 = all words)", min: 0, max: 1000, step: 1, value: args.top_k ?? 0 });
  const topP = ctx.slider({
    key: "top_p",
    label: "Top-p",
    min: 0.05,
    max: 1,
    step: 0.05,
    value: args.top_p ?? 1,
    format: (v) => (v === 1 ? "1 (all)" : v.toFixed(2)),
  });
  return {
    controls: [temperature, topK, topP],
    read: () => ({ temperature: temperature.value, top_k: Math.max(0, Math.round(topK.value) || 0), top_p: topP.value }),
    set(values) {
      temperature.value = values.temperature ?? 1;
      topK.value = values.top_k ?? 0;
      topP.value = values.top_p ?? 1;
    },
  };
}

// The prompt as the models read it: one box per byte-level BPE piece ("▁" is a leading space). A rare word takes
// several pieces; nothing is unknown. The handler sends the last 32 pieces.
export function promptView(pieces, total) {
  const span = document.createElement("span");
  span.className = "sd-dv-context";
  if (total > pieces.length) span.append("… ");
  for (const text of pieces) {
    const piece = document.createElement("span");
    piece.className = "sd-dv-piece";
    piece.textContent = text;
    span.append(piece);
  }
  return span;
}

// Probabilities: three decimals, or a short exponent when tiny (a rare word's q can be 1e-5).
export function prob(x) {
  if (x === null || x === undefined) return "—";
  if (x === 0) return "0";
  return x >= 0.001 ? x.toFixed(3) : x.toExponential(1);
}

export function seedRange(value) {
  return { min: 0, max: 2 ** 31 - 1, step: 1, value };
}

const ROUND_DEFAULTS = { prompt: "", gamma: 4, temperature: 1, top_k: 0, top_p: 1, seed: 0 };

// The panel both n-gram widgets share: prompt, γ, sampling knobs and seed, Step (next seed) and Reset buttons, and
// a status line. `connect(handler, paint)` wires every control to one handler call (newest settings win), keeps
// gamma and seed in the URL, and makes the first live call once Python is ready.
export function roundPanel(ctx, { stepTitle }) {
  const start = { ...ROUND_DEFAULTS, ...(ctx.settings.args || {}) };
  const fromUrl = ctx.url.read({ gamma: { min: 1, max: 8, step: 1, value: start.gamma }, seed: seedRange(start.seed) });
  const prompt = promptControls(ctx, { prompts: ctx.settings.prompts || [start.prompt], value: start.prompt });
  const gamma = ctx.slider({ key: "gamma", label: "Speculation length γ", min: 1, max: 8, step: 1, value: fromUrl.gamma });
  const sampling = samplingControls(ctx, start);
  const seed = ctx.number({ key: "seed", label: "Seed", ...seedRange(fromUrl.seed) });
  const controls = document.createElement("div");
  controls.className = "sd-dv-controls";
  controls.append(prompt.root, gamma.root, ...sampling.controls.map((c) => c.root), seed.root);

  let send = () => {};
  const stepButton = ctx.button("Step", () => {
    seed.value = (Math.round(seed.value) || 0) + 1;
    send();
  });
  stepButton.classList.add("md-button--primary");
  stepButton.title = stepTitle;
  const resetButton = ctx.button("Reset", () => {
    prompt.value = start.prompt;
    gamma.value = start.gamma;
    sampling.set(start);
    seed.value = start.seed;
    send();
  });
  const buttons = document.createElement("div");
  buttons.className = "sd-dv-buttons";
  buttons.append(stepButton, resetButton);

  const status = document.createElement("p");
  status.className = "sd-dv-status";
  status.setAttribute("role", "status");
  status.setAttribute("aria-live", "polite");

  function connect(handler, paint) {
    let loaded = false;
    const update = ctx.latest(handler, (result, args) => {
      loaded = true;
      paint(result, args);
    });
    send = () => {
      const args = { prompt: prompt.value, gamma: gamma.value, ...sampling.read(), seed: Math.max(0, Math.round(seed.value) || 0) };
      ctx.url.write({ gamma: args.gamma, seed: args.seed });
      if (!loaded) status.textContent = LOADING_MODEL;
      update(args);
    };
    for (const input of [gamma.input, ...sampling.controls.map((c) => c.input)]) input.addEventListener("input", () => send());
    seed.input.addEventListener("change", () => send());
    prompt.input.addEventListener("change", () => send());
    ctx.ready.then(() => send(), () => {});
  }

  return { start, controls, buttons, status, connect };
}
