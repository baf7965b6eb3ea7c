// Form controls with visible labels, metric tiles, and small DOM helpers. A control is data:
//   {key, label, hint, kind, value, min, max, step, choices, format, options, rows, url, live, hidden, onChange}
// kind: "range" (default; `choices` makes it step through those values, `format` says the value beside it),
// "number" (committed on a paste and when typing pauses, as a textarea), "select" and "choice" (toggle buttons;
// `options` [[value, label], ...]), "text", "textarea" (committed on a paste and when typing pauses; never in the
// URL). hint: a line under the field that says what it means (the field's description for screen readers too).
// url: the value lives in the query (ui/url.js); live: false, a change asks Python for nothing; hidden: until the
// view shows it.
// control(spec, id) -> {spec, root, input, value, event}.

let uid = 0;
const TYPING_MS = 600; // a pause in typing this long commits a text area

// An element with its class and children (text or nodes; null and undefined are skipped).
export function el(tag, className, ...children) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

// "α^γ" or "α^(γ+1)" in a label or a note, with the power raised as on the page's math: text and <sup> nodes.
export function powers(text) {
  return String(text)
    .split(/\^(\([^)]*\)|[^\s)])/)
    .map((part, i) => (i % 2 ? el("sup", "", part.replace(/^\((.*)\)$/, "$1")) : part));
}

// A line that screen readers announce when it changes: a verdict, a summary, a status.
export function announce(className, text = "", tag = "p") {
  const node = el(tag, className, text);
  node.setAttribute("role", "status");
  node.setAttribute("aria-live", "polite");
  return node;
}

// A region that may scroll sideways on a narrow screen takes keyboard focus (axe-core scrollable-region-focusable).
export function scroller(label, child, className = "") {
  const wrap = Object.assign(el("div", `sd-scroll ${className}`.trim(), child), { tabIndex: 0 });
  wrap.setAttribute("role", "region");
  wrap.setAttribute("aria-label", label);
  return wrap;
}

// An integer with thousands separators, as toLocaleString("en") writes it, without Intl: a page's first Intl call
// loads the browser's locale data on the main thread (13-30 ms in Chromium 156 on a 2-core machine), and the first
// control or tile formatted would pay it before the first chart. Anything but an integer still goes to toLocaleString.
export function grouped(value) {
  return Number.isInteger(value) ? String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ",") : value.toLocaleString("en");
}

export function formatNumber(value) {
  if (typeof value !== "number") return String(value);
  if (Number.isInteger(value)) return grouped(value);
  return Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(3);
}

export const fixed = (digits) => (v) => Number(v).toFixed(digits);
export const times = (v) => `${Number(v).toFixed(2)}×`;
export const percent = (v) => `${(100 * v).toFixed(1)}%`;
// A p-value: three decimals, a short exponent when tiny, and "below 1e-12" under that: a χ² p that small comes back
// from Python as 0, which "0.0e+0" would claim exactly.
export const pValue = (v) => (v < 1e-12 ? "below 1e-12" : v < 1e-4 ? Number(v).toExponential(1) : fixed(3)(v));
export const verdictText = (v) => (v ? "consistent ✓" : "rejected ✗");

export function button(label, className = "") {
  const b = el("button", `md-button ${className}`.trim(), label);
  b.type = "button";
  return b;
}

// Turns a button off (or on) without losing the keyboard's place: a focused button that is disabled drops focus to
// the page, so a reader who pressed Run by keyboard could not reach Stop. Focus moves to `next` when given (Stop,
// for Run); else a focused button stays focusable, aria-disabled, and the binding ignores its presses (widget.js).
export function turnOff(b, off, next = null) {
  const focused = document.activeElement === b;
  b.removeAttribute("aria-disabled");
  if (off && focused && !next) return void b.setAttribute("aria-disabled", "true");
  b.disabled = off;
  if (off && focused) next.focus();
}

// A text area or a number box commits a paste at once and typing once it pauses for TYPING_MS, as a slider commits
// as it moves, not only when the field loses focus: the figures of the value before stayed on screen beside it.
// Each edit is committed once: the browser's own change on Enter or leaving the field, after a pause already
// committed it, is a repeat (no input since) and goes no further: it had flagged a Run's settings as changed.
function commitOnPause(input) {
  let timer = null;
  let typed = false; // input since the last change
  const commit = () => {
    clearTimeout(timer);
    if (typed) input.dispatchEvent(new Event("change"));
  };
  input.addEventListener("paste", () => setTimeout(commit, 0));
  input.addEventListener("input", () => {
    typed = true;
    clearTimeout(timer);
    timer = setTimeout(commit, TYPING_MS);
  });
  // Registered before any other change listener (the binding's come later), so it can stop a repeat.
  input.addEventListener("change", (event) => {
    clearTimeout(timer);
    if (event.isTrusted && !typed) event.stopImmediatePropagation();
    typed = false;
  });
}

// A labelled form field, its change committed on "change".
function field(kind, spec, id, input, get = () => input.value) {
  Object.assign(input, { id, name: spec.key });
  const label = Object.assign(el("label", "", spec.label), { htmlFor: id });
  const root = el("div", kind ? `sd-control sd-control--${kind}` : "sd-control", label, input);
  return { root, input, event: "change", get, set: (v) => (input.value = v) };
}

const builders = {
  // A range commits on every "input"; its output beside it says the value in words (spec.format).
  range(spec, id) {
    const { choices } = spec;
    const bounds = choices
      ? { min: 0, max: choices.length - 1, step: 1 }
      : { min: spec.min, max: spec.max, step: spec.step };
    const input = Object.assign(el("input"), { type: "range", ...bounds });
    const made = field("", spec, id, input, () => (choices ? choices[Number(input.value)] : Number(input.value)));
    const output = Object.assign(el("output"), { htmlFor: id });
    // Not a live region (an <output> is one by default): the slider's aria-valuetext says the value already.
    output.setAttribute("aria-live", "off");
    made.root.append(output);
    const show = () => {
      output.textContent = (spec.format || formatNumber)(made.get());
      input.setAttribute("aria-valuetext", output.textContent);
    };
    input.addEventListener("input", show);
    const write = (v) => (input.value = choices ? Math.max(0, choices.indexOf(v)) : v);
    return { ...made, event: "input", set: (v) => (write(v), show()) };
  },
  number(spec, id) {
    const input = Object.assign(el("input"), {
      type: "number",
      min: spec.min,
      max: spec.max,
      step: spec.step ?? 1,
      inputMode: "numeric",
    });
    commitOnPause(input);
    return field("number", spec, id, input, () => Number(input.value));
  },
  select: (spec, id) =>
    field("select", spec, id, el("select", "", ...spec.options.map(([value, label]) => new Option(label, value)))),
  text(spec, id) {
    const input = Object.assign(el("input"), { type: "text", spellcheck: false, autocomplete: "off" });
    if (spec.maxLength) input.maxLength = spec.maxLength;
    return field("text", spec, id, input);
  },
  textarea(spec, id) {
    const input = Object.assign(el("textarea"), { rows: spec.rows ?? 6, spellcheck: false });
    input.setAttribute("autocomplete", "off");
    if (spec.placeholder) input.placeholder = spec.placeholder;
    commitOnPause(input);
    return field("textarea", spec, id, input);
  },
  choice(spec) {
    const root = el("div", spec.className ? `sd-chips ${spec.className}` : "sd-chips");
    root.setAttribute("role", "group");
    root.setAttribute("aria-label", spec.label);
    let value = spec.value;
    const buttons = spec.options.map(([v, label]) => {
      const b = button(label);
      b.dataset.value = v;
      root.append(b);
      return b;
    });
    const set = (v) => {
      value = v;
      for (const b of buttons) b.setAttribute("aria-pressed", String(b.dataset.value === v));
    };
    // A pressed button commits its value; the group dispatches "change" so it reads like any other control.
    root.addEventListener("click", (event) => {
      const b = event.target.closest("button");
      if (!b) return;
      set(b.dataset.value);
      root.dispatchEvent(new Event("change"));
    });
    return { root, input: root, event: "change", get: () => value, set };
  },
};

// A drop-down control whose value lives in the URL: options are [value, text] pairs.
export const select = (key, label, options, value) => ({
  key,
  label,
  kind: "select",
  options,
  value,
  url: true,
});

export function control(spec, name) {
  // A text area holds what a reader pastes (a server's metrics, say): it must not leak into a shared link.
  if (spec.kind === "textarea" && spec.url) throw new Error(`control ${spec.key}: a textarea cannot live in the URL`);
  const id = `sd-${name}-${spec.key}-${++uid}`;
  const made = builders[spec.kind || "range"](spec, id);
  made.set(spec.value);
  if (spec.hint) {
    const hint = Object.assign(el("span", "sd-control__hint", spec.hint), { id: `${id}-hint` });
    made.input.setAttribute("aria-describedby", hint.id);
    made.root.append(hint);
  }
  if (spec.hidden) made.root.hidden = true;
  const { root, input, event } = made;
  return Object.defineProperty({ spec, root, input, event }, "value", {
    get: made.get,
    set: made.set,
    enumerable: true,
  });
}

// A metric's <output data-metric=name>. Not announced when it changes (an <output> would be by default): one key
// press on the Tuning calculator changed ten of them, eight bare numbers read with no name. A widget's verdict or
// summary line (announce) says what changed, in words; the tiles are there to be read.
export function output(name, text = "…", className = "") {
  const out = el("output", className, text);
  out.dataset.metric = name;
  out.setAttribute("aria-live", "off");
  return out;
}

// Metric tiles: [{name, label}] -> <dl> of label and an output per metric.
export function tiles(items) {
  return el(
    "dl",
    "sd-tiles",
    ...items.map(({ name, label }) => el("div", "sd-tile", el("dt", "", ...powers(label)), el("dd", "", output(name)))),
  );
}

// Sets data-value (the raw number; "" for none) and the text of every [data-metric=name] inside root.
export function setMetric(root, name, value, text) {
  for (const out of root.querySelectorAll(`[data-metric="${name}"]`)) {
    out.dataset.value = value === null || value === undefined ? "" : String(value);
    out.textContent = text ?? formatNumber(value);
  }
}

// A metric whose number is not known (nothing measured yet, or no result for the current controls).
export function clearMetric(root, name, text = "…") {
  for (const out of root.querySelectorAll(`[data-metric="${name}"]`)) {
    delete out.dataset.value;
    out.textContent = text;
  }
}
