// The messages between the page (python.js) and the Python worker (worker.js). Every message is {id, type, ...}.
//
//   page -> worker   INIT     {id, type}                    report how start-up ends (READY or ERROR with this id);
//                                                           the worker starts up on its own
//   worker -> page   PROGRESS {id, type, phase}             start-up entered a phase (PHASES, in order)
//   worker -> page   READY    {id, type, version, boot}     start-up finished; CALLs are answered from now. boot:
//                                                           "snapshot" (restored from a stored memory snapshot) or
//                                                           "fresh" (Python started from scratch); see worker.js
//   page -> worker   CALL     {id, type, name, args}        run specdec_core.web handler `name`; args is a JSON string
//   worker -> page   RESULT   {id, type, value}             value is the handler's result as a JSON string
//   worker -> page   ERROR    {id, type, error, traceback_last_line, phase?, fatal?}
//                                                           a CALL failed (id = the CALL's id), start-up failed
//                                                           (id = the INIT's id, phase = where), or the runtime itself
//                                                           broke during a CALL (fatal: the worker is of no more use)
//
// Stopping long runs: there is no CANCEL message. A Python call cannot be interrupted without SharedArrayBuffer
// (which GitHub Pages cannot enable: it needs cross-origin isolation headers), so long work is many short CALLs
// driven by a JS loop that checks an AbortSignal between calls. A wedged worker is terminated and replaced (Retry).

export const MSG = Object.freeze({
  INIT: "INIT",
  PROGRESS: "PROGRESS",
  READY: "READY",
  CALL: "CALL",
  RESULT: "RESULT",
  ERROR: "ERROR",
});

// Start-up phases, in order, with the longest each may take. A loaded 2-core machine boots Pyodide in about 4 s
// (PLATFORM.md); the margins are wide because a slow network also lands here. A phase that overruns is an error.
export const PHASES = Object.freeze({
  runtime: { label: "Python runtime", timeoutMs: 90_000 },
  core: { label: "specdec_core", timeoutMs: 60_000 },
  import: { label: "importing specdec_core.web", timeoutMs: 30_000 },
});

// How long one CALL may take before the worker counts as hung. Every handler answers in well under a second on a
// quiet machine (long work is chunked, above).
export const CALL_TIMEOUT_MS = 60_000;

let next = 1;

// A message with a fresh id (ids are unique per page; the worker echoes the id it answers).
export function message(type, fields = {}) {
  return { id: next++, type, ...fields };
}
