// Page state in the URL query: read and clamp (each correction said in words), write back with replaceState.

// The shared query parameters, their default ranges, and the short name a "computing for …" note uses.
export const PARAMS = Object.freeze({
  quality: { min: 0, max: 1, step: 0.05, value: 0.85, short: "draft quality" },
  gamma: { min: 1, max: 8, step: 1, value: 4, short: "γ" },
  alpha: { min: 0, max: 1, step: 0.01, value: 0.8, short: "α" },
  cost: { min: 0, max: 1, step: 0.01, value: 0.05, short: "c" },
  seed: { min: 0, max: 2 ** 31 - 1, step: 1, value: 0, short: "seed" },
  // Sampling settings, applied to both models of the n-gram pair (its vocabulary has 1,024 tokens).
  temperature: { min: 0, max: 2, step: 0.05, value: 1, short: "temperature" },
  "top-p": { min: 0.05, max: 1, step: 0.05, value: 1, short: "top-p" },
  "top-k": { min: 0, max: 1024, step: 1, value: 50, short: "top-k" },
});

function decimals(step) {
  const text = String(step);
  return text.includes(".") ? text.length - text.indexOf(".") - 1 : 0;
}

export function snap(value, { min, step }) {
  if (!step) return value;
  return Number((min + Math.round((value - min) / step) * step).toFixed(decimals(step)));
}

// Read and clamp: {values, notes}, where each note says what was corrected and how. spec: {key: {min, max, step,
// value}}; keys absent from the query take spec's value.
export function readQuery(spec = PARAMS, search = location.search) {
  const query = new URLSearchParams(search);
  const values = {};
  const notes = [];
  for (const [key, range] of Object.entries(spec)) {
    const raw = query.get(key);
    const number = Number(raw);
    if (raw === null || raw === "") {
      values[key] = range.value;
    } else if (!Number.isFinite(number)) {
      values[key] = range.value;
      notes.push(`${key} ${raw} is not a number; using ${range.value}`);
    } else if (number < range.min || number > range.max) {
      values[key] = number < range.min ? range.min : range.max;
      notes.push(`${key} ${raw} is out of range; clamped to ${values[key]}`);
    } else {
      values[key] = snap(number, range);
      if (values[key] !== number) notes.push(`${key} ${raw} is between steps of ${range.step}; rounded to ${values[key]}`);
    }
  }
  return { values, notes };
}

export function writeQuery(values) {
  const url = new URL(location.href);
  for (const [key, value] of Object.entries(values)) url.searchParams.set(key, String(value));
  // Keep history.state: Material stores the scroll offset there for instant navigation.
  if (url.href !== location.href) history.replaceState(history.state, "", url);
}
