// The Python worker: Pyodide plus the specdec_core wheel, answering CALL messages (see protocol.js).
//
// A module worker (Pyodide refuses classic workers). Every URL resolves against this file's own URL, which sits at
// <site root>/js/worker.js, so the site works at a domain root and under a GitHub Pages sub-path alike.
// Start-up runs in named phases behind one `ready` promise; a failure in any phase is reported as ERROR with the
// phase, never swallowed. The core wheel is unpacked straight onto sys.path (no micropip: it is pure Python and
// has no dependencies), and its bytecode, precompiled at build time, beside it.
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

// The wheel and its precompiled bytecode are fetched while the runtime loads; errors surface in "core wheel".
async function fetchCore() {
  // The manifest names the files; always revalidated, so a redeploy is picked up. Their digests bust caches.
  const manifest = await (await fetchOk(new URL("wheels/manifest.json", SITE), { cache: "no-cache" })).json();
  const get = async ({ file, sha256 }) => {
    const url = new URL(`wheels/${file}`, SITE);
    url.searchParams.set("v", sha256.slice(0, 16));
    return (await fetchOk(url)).arrayBuffer();
  };
  return Promise.all([get(manifest.core), get(manifest.bytecode)]);
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

  progress("core wheel");
  const [wheel, bytecode] = await core;
  pyodide.unpackArchive(wheel, "wheel");
  // __pycache__/*.pyc beside the modules (compile_bytecode.mjs): the import below skips compiling the sources.
  pyodide.unpackArchive(bytecode, "zip");

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

// Start-up begins as soon as this module runs: the page may create the worker from <head> (see build_hook.py)
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
