// Page state in the URL query: read and clamp (each correction said in words), write back with replaceState.

import { fixed, grouped } from "./controls.js";

// The shared query parameters: each one's control (label, range, format, kind), its default, and the short name a
// "computing for …" note uses. param() makes a widget's control of one; DESIGN.md fixes the labels tests look for.
export const PARAMS = Object.freeze({
  quality: { label: "Draft quality", min: 0, max: 1, step: 0.05, value: 0.85, short: "draft quality" },
  gamma: { label: "Speculation length γ", min: 1, max: 8, step: 1, value: 4, short: "γ" },
  // The pair's agreement rate is the per-token acceptance rate α it is built to have: the hint ties the two names.
  alpha: {
    label: "Agreement rate α",
    hint: "the per-token acceptance rate α",
    min: 0,
    max: 1,
    step: 0.01,
    value: 0.8,
    format: fixed(2),
    short: "α",
  },
  cost: { label: "Draft cost c", min: 0, max: 1, step: 0.01, value: 0.05, format: fixed(2), short: "c" },
  seed: { label: "Seed", kind: "number", min: 0, max: 2 ** 31 - 1, step: 1, value: 0, short: "seed" },
  k: { label: "Candidates per position k", min: 1, max: 4, step: 1, value: 2, short: "k" },
  depth: { label: "Tree depth", min: 1, max: 6, step: 1, value: 3, short: "depth" },
  // Powers of two, as serving engines size them: a value between two snaps to the nearer (by ratio).
  batch: {
    label: "Batch size",
    min: 1,
    max: 1024,
    choices: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
    value: 1,
    format: grouped,
    short: "batch",
  },
  context: {
    label: "Context length",
    min: 128,
    max: 32768,
    choices: [128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768],
    value: 1024,
    format: grouped,
    short: "context",
  },
  // Sampling settings, applied to both models of the n-gram pair (its vocabulary has 1,024 tokens).
  temperature: {
    label: "Temperature",
    min: 0,
    max: 2,
    step: 0.05,
    value: 1,
    format: (v) => (v === 0 ? "0 (greedy)" : v.toFixed(2)),
    short: "temperature",
  },
  "top-p": {
    label: "Top-p",
    min: 0.05,
    max: 1,
    step: 0.05,
    value: 1,
    format: (v) => (v === 1 ? "1 (all)" : v.toFixed(2)),
    short: "top-p",
  },
  "top-k": { label: "Top-k (0 = all tokens)", kind: "number", min: 0, max: 1024, step: 1, value: 50, short: "top-k" },
});

// The control of a shared parameter, its value in the URL; value null or undefined takes the default, and `more`
// overrides any field (a narrower range, another format, url: false for a control that stays out of the link).
export const param = (key, value, more = {}) => ({
  key,
  ...PARAMS[key],
  value: value ?? PARAMS[key].value,
  url: true,
  ...more,
});

const decimals = (step) => (String(step).split(".")[1] ?? "").length;

function snap(value, { min, step }) {
  if (!step) return value;
  return Number((min + Math.round((value - min) / step) * step).toFixed(decimals(step)));
}

// Read and clamp: {values, notes}, where notes[key] says what was corrected and how. spec: {key: {min, max, step,
// value, choices}, or {kind: "text", value, maxLength}}; keys absent from the query take spec's value. With `choices` (a list of allowed values; a select
// or a row of chips, their `options`' values) a value must be one of them: a number between two snaps to the nearer
// by ratio, a word that is none of them is replaced.
export function readQuery(spec = PARAMS, search = location.search) {
  const query = new URLSearchParams(search);
  const values = {};
  const notes = {};
  for (const [key, range] of Object.entries(spec)) {
    const { value, note } = readValue(key, query.get(key), range);
    values[key] = value;
    if (note) notes[key] = note;
  }
  return { values, notes };
}

// One value as text (from the link, or typed into a number box; null or "" for none): {value, note}, where note
// says what was corrected and how (undefined when nothing was).
export function readValue(key, raw, range) {
  const number = Number(raw);
  const choices = range.choices ?? range.options?.map(([value]) => value);
  if (raw === null || raw === "") return { value: range.value };
  if (range.kind === "text") {
    const value = range.maxLength ? raw.slice(0, range.maxLength) : raw;
    const cut = `${key} is longer than ${range.maxLength} characters; cut to its first ${range.maxLength}`;
    return { value, note: value !== raw ? cut : undefined };
  }
  if (choices) {
    const notes = {};
    const value = readChoice(key, raw, { ...range, choices }, notes);
    return { value, note: notes[key] };
  }
  if (!Number.isFinite(number))
    return { value: range.value, note: `${key} ${raw} is not a number; using ${range.value}` };
  if (number < range.min || number > range.max) {
    const value = number < range.min ? range.min : range.max;
    return { value, note: `${key} ${raw} is out of range; clamped to ${value}` };
  }
  const value = snap(number, range);
  return {
    value,
    note: value !== number ? `${key} ${raw} is between steps of ${range.step}; rounded to ${value}` : undefined,
  };
}

const listed = (choices) => (choices.length > 5 ? [...choices.slice(0, 3), "…", choices.at(-1)] : choices).join(", ");

function readChoice(key, raw, { choices, value }, notes) {
  const exact = choices.find((c) => String(c) === raw);
  if (exact !== undefined) return exact;
  const number = raw.trim() === "" ? NaN : Number(raw);
  // Numbers, or a select's numbers as text (the Cost page's weights, "16", "8" and "4"): the nearest is meant.
  if (!Number.isFinite(number) || !choices.every((c) => c !== "" && Number(c) > 0)) {
    notes[key] = `${key} “${raw}” is not one of ${listed(choices)}; using ${value}`;
    return value;
  }
  const byValue = [...choices].sort((a, b) => Number(a) - Number(b));
  const [low, high] = [byValue[0], byValue.at(-1)];
  if (number < Number(low) || number > Number(high)) {
    const clamped = number < Number(low) ? low : high;
    notes[key] = `${key} ${raw} is out of range; clamped to ${clamped}`;
    return clamped;
  }
  const far = (c) => Math.abs(Math.log(Number(c) / number));
  const nearest = choices.reduce((best, c) => (far(c) < far(best) ? c : best));
  notes[key] = `${key} ${raw} is not one of ${listed(choices)}; rounded to ${nearest}`;
  return nearest;
}

// The path of the page on screen (lab.js, each time a page's content is in place). Material's instant navigation
// moves the address to the next page before that page arrives: a widget of the old page that mounts or changes in
// between must not write its state into the next page's link.
let shown = null;
// Every value written into this page's link, the unwritten ones too (dirty). A heading's link (the table of contents)
// adds a history entry, and a control moved after it writes into that entry only: Back then showed the entry before
// it, its link without the move, beside the moved control. Such an entry of the same page is given the state on
// screen as Back lands on it.
let written = { path: null, values: {} };
let dirty = false;
export const pageShown = (path) => {
  shown = path;
  if (written.path !== path) written = { path, values: {} }; // kept: corrections written before lab.js ran
};

// Writing the link costs more than it looks: traced on the Home lab's slider, Chromium's browser process spent ~16 ms
// on each replaceState, beside ~56 ms of the page's own main thread per change, and on 2 cores the two compete. So a
// burst of changes (a slider dragged fires an input event per step) writes the link once, when the controls have
// rested for WRITE_MS; a committed change (a released slider, a key press, a select: their change event), a click (it
// may follow a link, and instant navigation moves the address at once) or hiding the page writes it at once.
const WRITE_MS = 200;
let timer = 0;

export function writeQuery(values) {
  if (shown !== null && location.pathname !== shown) return;
  const path = location.pathname;
  // Another page's values, unwritten or not, are not this one's.
  written = { path, values: { ...(written.path === path ? written.values : {}), ...values } };
  dirty = true;
  clearTimeout(timer);
  timer = setTimeout(flushQuery, WRITE_MS);
}

export function flushQuery() {
  clearTimeout(timer);
  if (!dirty) return;
  dirty = false;
  if (location.pathname !== written.path) return; // the reader has moved on: the link is not this page's
  const url = new URL(location.href);
  for (const [key, value] of Object.entries(written.values)) url.searchParams.set(key, String(value));
  // Keep history.state: Material stores the scroll offset there for instant navigation.
  if (url.href !== location.href) history.replaceState(history.state, "", url);
}

// change bubbles here after the widget's own handler has asked for the write; click is caught before the theme's.
addEventListener("change", flushQuery);
addEventListener("click", flushQuery, true);
addEventListener("pagehide", flushQuery);
addEventListener("popstate", () => {
  dirty = true;
  flushQuery();
});
document.addEventListener("visibilitychange", () => document.visibilityState === "hidden" && flushQuery());
