// The Python worker: Pyodide plus specdec_core, answering CALL messages (see protocol.js).
//
// A module worker (Pyodide refuses classic workers). Every URL resolves against this file's own URL, which sits at
// <site root>/js/runtime/worker.js, so the site works at a domain root and under a GitHub Pages sub-path alike.
// Start-up runs in the named phases of protocol.js, each under its own time limit, behind one `ready` promise; a
// failure or an overrun in any phase is reported as ERROR with the phase, never swallowed. The core is one zip,
// unpacked straight onto sys.path (no micropip: it is pure Python with no dependencies): its modules as bytecode
// precompiled at build time (site_assets/compile_core.mjs), and its data files. Everything below `handle` is
// start-up.

import { loadPyodide } from "../../vendor/pyodide/pyodide.mjs";
import { MSG, PHASES } from "./protocol.js";

const SITE = new URL("../../", import.meta.url);

let pyodide = null;
let web = null; // the specdec_core.web module (a PyProxy) once ready

// The one message handler: a CALL in, a RESULT or ERROR out. A Python exception is the call's error; anything else
// (the runtime itself failing) leaves the worker unusable, and the page is told so.
function handle(message) {
  const { id, name, args } = message;
  try {
    // Arguments and the result cross as JSON strings; web.call validates, runs and serialises.
    return { id, type: MSG.RESULT, value: web.call(name, args) };
  } catch (err) {
    const reply = errorMessage(id, err);
    if (!(err instanceof pyodide.ffi.PythonError)) reply.fatal = true;
    return reply;
  }
}

// --- start-up ---------------------------------------------------------------------------------------------------

let initId = 0;
let phase = null;
let failPhase = () => {};

// Enters a phase: tells the page, and fails start-up if the phase is still running when its time is up.
function enter(name) {
  phase = name;
  self.postMessage({ id: initId, type: MSG.PROGRESS, phase: name, label: PHASES[name].label });
  const seconds = PHASES[name].timeoutMs / 1000;
  const timer = setTimeout(() => failPhase(new Error(`start-up phase "${name}" did not finish within ${seconds} s`)), PHASES[name].timeoutMs);
  return () => clearTimeout(timer);
}

async function fetchOk(url, init) {
  const response = await fetch(url, init);
  if (!response.ok) throw new Error(`${response.status} ${response.statusText} for ${url}`);
  return response;
}

// Pyodide 314 fetches its own files (pyodide.asm.wasm, python_stdlib.zip, the lock) and, when the wasm answers with
// an error status, logs a warning and never settles loadPyodide. So every response it receives during the runtime
// phase is checked here: one that failed fails the phase at once, naming the file.
function watchRuntimeFetches(fail) {
  const original = self.fetch;
  const runtime = new URL("vendor/pyodide/", SITE).href;
  self.fetch = async (input, init) => {
    const response = await original(input, init);
    const url = new URL(String(input?.url ?? input), SITE);
    if (!response.ok && url.href.startsWith(runtime)) {
      const file = url.pathname.split("/").pop();
      fail(new Error(`the Python runtime (${file}) failed to load: ${response.status} ${response.statusText}`));
    }
    return response;
  };
  return () => (self.fetch = original);
}

// The core archive is fetched while the runtime loads; errors surface in phase "core".
async function fetchCore() {
  // The manifest names the archive; always revalidated, so a redeploy is picked up. Its digest busts caches.
  const { file, sha256 } = await (await fetchOk(new URL("core/manifest.json", SITE), { cache: "no-cache" })).json();
  const url = new URL(`core/${file}`, SITE);
  url.searchParams.set("v", sha256.slice(0, 16));
  return (await fetchOk(url)).arrayBuffer();
}

async function phases() {
  let done = enter("runtime");
  const core = fetchCore();
  core.catch(() => {}); // awaited in "core" below, which reports its failure
  const unwatch = watchRuntimeFetches(failPhase);
  try {
    pyodide = await loadPyodide({ indexURL: new URL("vendor/pyodide/", SITE).href });
  } finally {
    unwatch();
    done();
  }

  done = enter("core");
  // Sourceless .pyc modules: the import below compiles nothing.
  pyodide.unpackArchive(await core, "zip");
  done();

  done = enter("import");
  web = pyodide.pyimport("specdec_core.web");
  const version = pyodide.runPython("import specdec_core; specdec_core.__version__");
  done();
  return version;
}

// Start-up ends with the phases, or with the first failure any phase reports (an overrun or a failed download).
function start() {
  const failed = new Promise((_, reject) => (failPhase = reject));
  return Promise.race([phases(), failed]);
}

// Pyodide's PythonError carries the whole traceback in `message`; the page shows its last line.
function errorMessage(id, err, where) {
  const text = String((err && err.message) || err);
  const lines = text.trim().split("\n").filter((line) => line.trim() !== "");
  const out = { id, type: MSG.ERROR, error: text, traceback_last_line: lines.length ? lines.at(-1).trim() : "unknown error" };
  if (where) out.phase = where;
  return out;
}

// Start-up begins as soon as this module runs: the page may create the worker from <head>, before the page's
// scripts have loaded. INIT only asks to be told the outcome.
const ready = start();
ready.catch(() => {}); // reported to INIT below

self.onmessage = async (event) => {
  const message = event.data;
  if (message.type === MSG.INIT) {
    initId = message.id;
    try {
      self.postMessage({ id: initId, type: MSG.READY, version: await ready });
    } catch (err) {
      self.postMessage(errorMessage(initId, err, phase));
    }
  } else if (message.type === MSG.CALL) {
    try {
      await ready;
    } catch (err) {
      self.postMessage(errorMessage(message.id, err, phase));
      return;
    }
    self.postMessage(handle(message));
  }
};
