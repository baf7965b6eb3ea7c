// The messages between the page (lab.js) and the Python worker (worker.js). Every message is {id, type, ...}.
//
//   page -> worker   INIT     {id, type}                         report how start-up ends (READY or ERROR with
//                                                                this id); the worker starts up on its own
//   worker -> page   PROGRESS {id, type, phase}                  start-up entered a phase (PHASES, in order)
//   worker -> page   READY    {id, type, version}                start-up finished; CALLs are answered from now
//   page -> worker   CALL     {id, type, name, args}             run specdec_core.web handler `name`;
//                                                                args is a JSON string of keyword arguments
//   worker -> page   RESULT   {id, type, value}                  value is the handler's result as a JSON string
//   worker -> page   ERROR    {id, type, error, traceback_last_line, phase?}
//                                                                a CALL failed (id = the CALL's id) or start-up
//                                                                failed (id = the INIT's id, phase = where)
//
// Stopping long runs: there is no CANCEL message. A Python call cannot be interrupted without
// SharedArrayBuffer (which GitHub Pages cannot enable: it needs cross-origin isolation headers), so long work is
// many short CALLs driven by a JS loop that checks an AbortSignal between calls; "Stop" aborts the signal and the
// loop ends after the call in flight (milliseconds). A wedged worker is recovered by terminating it and starting
// a new one (lab.js does that for Retry).

export const MSG = Object.freeze({
  INIT: "INIT",
  PROGRESS: "PROGRESS",
  READY: "READY",
  CALL: "CALL",
  RESULT: "RESULT",
  ERROR: "ERROR",
});

// Start-up phases, in order, with the words the status line shows.
export const PHASES = Object.freeze({
  runtime: "Python runtime",
  core: "specdec_core",
  import: "importing specdec_core.web",
});

let next = 1;

// A message with a fresh id (ids are unique per page side; the worker echoes the id it answers).
export function message(type, fields = {}) {
  return { id: next++, type, ...fields };
}
