// The Python worker: Pyodide plus specdec_core, answering CALL messages (see protocol.js).
//
// A module worker (Pyodide refuses classic workers). Every URL resolves against this file's own URL, which sits at
// <site root>/js/worker.js, so the site works at a domain root and under a GitHub Pages sub-path alike.
// Start-up runs in named phases behind one `ready` promise; a failure in any phase is reported as ERROR with the
// phase, never swallowed. The core is one zip, unpacked straight onto sys.path (no micropip: it is pure Python and
// has no dependencies): its modules as bytecode precompiled at build time, and its data files.
// Everything below `handle` is start-up.

import { loadPyodide } from "../vendor/pyodide/pyodide.mjs";
import { MSG, PHASES } from "./protocol.js";

const SITE = new URL("../", import.meta.url);

let web = null; // the specdec_core.web module (a PyProxy) once ready

// The one message handler: a CALL in, a RESULT or ERROR out.
function handle(message) {
  const { id, name, args } = message;
  try {
    // Arguments and the result cross as JSON strings; web.call validates, runs and serialises.
    return { id, type: MSG.RESULT, value: web.call(name, args) };
  } catch (err) {
    return errorMessage(id, err);
  }
}

// --- start-up ---------------------------------------------------------------------------------------------------

let initId = 0;
let phase = null;

function progress(name) {
  phase = name;
  self.postMessage({ id: initId, type: MSG.PROGRESS, phase: name, label: PHASES[name] });
}

async function fetchOk(url, init) {
  const response = await fetch(url, init);
  if (!response.ok) throw new Error(`${response.status} ${response.statusText} for ${url}`);
  return response;
}

// Pyodide 314 catches a failed WebAssembly instantiation (for example, pyodide.asm.wasm answered 404 or 503),
// logs it with two console.warn calls and never settles loadPyodide (getInstantiateWasmFunc in pyodide.mjs).
// Watching for that warning turns the hang into a start-up error the page can show and retry.
function wasmFailure() {
  const warn = console.warn;
  let reject;
  let seen = false;
  const failed = new Promise((_, r) => (reject = r));
  console.warn = (...args) => {
    warn.apply(console, args);
    if (seen) reject(new Error(`the Python runtime (pyodide.asm.wasm) failed to load: ${args[0]?.message ?? args[0]}`));
    seen ||= args[0] === "wasm instantiation failed!";
  };
  return { failed, restore: () => (console.warn = warn) };
}

// The core archive is fetched while the runtime loads; errors surface in phase "core".
async function fetchCore() {
  // The manifest names the archive; always revalidated, so a redeploy is picked up. Its digest busts caches.
  const { file, sha256 } = await (await fetchOk(new URL("core/manifest.json", SITE), { cache: "no-cache" })).json();
  const url = new URL(`core/${file}`, SITE);
  url.searchParams.set("v", sha256.slice(0, 16));
  return (await fetchOk(url)).arrayBuffer();
}

async function start() {
  progress("runtime");
  const core = fetchCore();
  core.catch(() => {}); // awaited below; a failure must not surface as an unhandled rejection first
  const watch = wasmFailure();
  let pyodide;
  try {
    pyodide = await Promise.race([loadPyodide({ indexURL: new URL("vendor/pyodide/", SITE).href }), watch.failed]);
  } finally {
    watch.restore();
  }

  progress("core");
  // Sourceless .pyc modules (site_assets/compile_core.mjs): the import below compiles nothing.
  pyodide.unpackArchive(await core, "zip");

  progress("import");
  web = pyodide.pyimport("specdec_core.web");
  return pyodide.runPython("import specdec_core; specdec_core.__version__");
}

// Pyodide's PythonError carries the whole traceback in `message`; the page shows its last line.
function errorMessage(id, err, where) {
  const text = String((err && err.message) || err);
  const lines = text.trim().split("\n").filter((line) => line.trim() !== "");
  const out = {
    id,
    type: MSG.ERROR,
    error: text,
    traceback_last_line: lines.length ? lines[lines.length - 1].trim() : "unknown error",
  };
  if (where) out.phase = where;
  return out;
}

// Start-up begins as soon as this module runs: the page creates the worker from <head> (site_assets/overrides)
// before lab.js has loaded. INIT only asks to be told the outcome.
const ready = start();
ready.catch(() => {}); // reported to INIT below

self.onmessage = async (event) => {
  const message = event.data;
  if (message.type === MSG.INIT) {
    initId = message.id;
    try {
      const version = await ready;
      self.postMessage({ id: initId, type: MSG.READY, version });
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
