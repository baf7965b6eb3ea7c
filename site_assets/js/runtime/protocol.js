// The messages between the page (python.js) and the Python worker (worker.js), each {id, type, ...}:
//   page -> worker   INIT {}: report how start-up ends (the worker starts on its own) · CALL {name, args}: run
//                    specdec_core.web handler `name` on args (a JSON string)
//   worker -> page   PROGRESS {phase} · READY {version, boot: "snapshot" | "fresh"} · RESULT {value: JSON string}
//                    · ERROR {error, traceback_last_line, phase?, fatal?}: a CALL failed (its id), start-up failed
//                    (the INIT's id, with the phase), or the runtime broke (fatal: the worker is of no more use)
// There is no CANCEL: a Python call cannot be interrupted without SharedArrayBuffer, which needs cross-origin
// isolation headers GitHub Pages cannot send. Long work is many short CALLs from a JS loop that can stop between.

export const MSG = Object.freeze({
  INIT: "INIT",
  PROGRESS: "PROGRESS",
  READY: "READY",
  CALL: "CALL",
  RESULT: "RESULT",
  ERROR: "ERROR",
});

// Start-up phases in order, with the longest each may take: a loaded 2-core machine boots Pyodide in about 4 s
// (PLATFORM.md); the margins are for slow networks.
export const PHASES = Object.freeze({
  runtime: { label: "Python runtime", timeoutMs: 90_000 },
  core: { label: "specdec_core", timeoutMs: 60_000 },
  import: { label: "importing specdec_core.web", timeoutMs: 30_000 },
});

// Every handler answers in well under a second (long work is chunked): a CALL this slow means a hung worker.
export const CALL_TIMEOUT_MS = 60_000;

let next = 1;
export const message = (type, fields = {}) => ({ id: next++, type, ...fields });
