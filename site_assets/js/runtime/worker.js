// The Python worker: Pyodide plus specdec_core, answering CALL messages (see protocol.js).
//
// A module worker (Pyodide refuses classic workers). Every URL resolves against this file's own URL, which sits at
// <site root>/js/runtime/worker.js, so the site works at a domain root and under a GitHub Pages sub-path alike.
// Start-up runs in the named phases of protocol.js, each under its own time limit, behind one `ready` promise; a
// failure or an overrun in any phase is reported as ERROR with the phase, never swallowed. The core is one zip,
// unpacked straight onto sys.path (no micropip: it is pure Python with no dependencies): its modules as bytecode
// precompiled at build time (site_assets/compile_core.mjs), and its data files. Everything below `handle` is
// start-up.
//
// Repeat visits boot from a memory snapshot. Most of a boot is Python's own start-up, not downloading (which the
// service worker serves from its cache), so after a fresh boot, once specdec_core.web is imported and before any
// call runs, the worker snapshots Pyodide's memory (31 MB) and keeps it in Cache Storage; the next boot restores
// it and unpacks the core again (the file system lives on the JS side, outside the snapshot): ready in ~0.85 s
// instead of ~2.7 s in headless Chromium on a loaded 2-core machine (benchmarks/bench_browser.py, section e).
// The snapshot is keyed by the Pyodide version and the core archive's digest. No snapshot means a normal boot; a
// damaged one, or one Pyodide refuses, too, with a console warning, and it is deleted. Without Cache Storage (an
// insecure origin) every boot is a normal one. READY says which boot it was.

import { loadPyodide, version as PYODIDE } from "../../vendor/pyodide/pyodide.mjs";
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

// The manifest names the core archive; always revalidated, so a redeploy is picked up. Its digest busts caches.
async function fetchManifest() {
  return (await fetchOk(new URL("core/manifest.json", SITE), { cache: "no-cache" })).json();
}

// The core archive is fetched while the runtime loads; errors surface in phase "core".
async function fetchCore({ file, sha256 }) {
  const url = new URL(`core/${file}`, SITE);
  url.searchParams.set("v", sha256.slice(0, 16));
  return (await fetchOk(url)).arrayBuffer();
}

// --- memory snapshots --------------------------------------------------------------------------------------------
// `_makeSnapshot`, `makeMemorySnapshot()` and `_loadSnapshot` are private options of Pyodide 314.0.7 (@ignore in its
// pyodide.d.ts): any release may change them, so every step here may fail, and a failure only costs a normal boot.
//
// Snapshots live in a cache of their own, not the service worker's: sw.js deletes every "sd-lab-" cache but its
// build's on each redeploy, and most redeploys change neither Pyodide nor the core, so the snapshot outlives them.
// This worker prunes it instead: storing one deletes this site's others. Entries are URLs under the site, so two
// sites on one origin (GitHub Pages sub-paths) keep theirs apart.
const SNAPSHOTS = "sd-snapshot";
const SNAPSHOT_ROOT = new URL("sd-snapshot/", SITE).href;
let boot = "fresh"; // how this worker booted, for READY: "fresh" | "snapshot"
let keepSnapshot = null; // after a fresh boot: takes and stores the snapshot, once, before the first call runs

const snapshotUrl = (manifest) => `${SNAPSHOT_ROOT}pyodide-${PYODIDE}-core-${manifest.sha256.slice(0, 16)}`;

// A checksum over 32-bit words (15-80 ms for 31 MB on the machine above). Pyodide checks a snapshot's header, but
// one whose body was damaged made Pyodide 314.0.7 spin forever under Node, which no time limit here can stop.
function checksum(bytes) {
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 2);
  let sum = bytes.byteLength;
  for (let i = 0; i < words.length; i++) sum = (Math.imul(sum, 31) + words[i]) | 0;
  return String(sum >>> 0);
}

// The stored snapshot's bytes once checked; rejects if they are damaged.
async function checked(response) {
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (checksum(bytes) !== response.headers.get("x-sd-checksum")) throw new Error("the stored snapshot is damaged");
  return bytes;
}

// This site's snapshot for this runtime and core, if stored. A first visit does not wait for the manifest.
async function storedSnapshot(cache, manifest) {
  if (!(await cache.keys()).some((request) => request.url.startsWith(SNAPSHOT_ROOT))) return null;
  const url = snapshotUrl(await manifest);
  const response = await cache.match(url);
  return response && { url, response };
}

// Boots Pyodide from the stored snapshot, or normally (then ready to take one, if Cache Storage is there).
async function bootRuntime(manifest) {
  const options = { indexURL: new URL("vendor/pyodide/", SITE).href };
  const cache = await self.caches?.open(SNAPSHOTS).catch(() => null);
  if (!cache) return loadPyodide(options);
  const stored = await storedSnapshot(cache, manifest).catch(() => null);
  if (stored) {
    try {
      const bytes = checked(stored.response);
      bytes.catch(() => {}); // loadPyodide awaits it later and reports its failure
      const restored = await loadPyodide({ ...options, _loadSnapshot: bytes });
      boot = "snapshot";
      return restored;
    } catch (err) {
      console.warn("booting without the stored Python snapshot:", err?.message || err);
      await cache.delete(stored.url).catch(() => {});
    }
  }
  const fresh = await loadPyodide({ ...options, _makeSnapshot: true });
  keepSnapshot = async () => {
    const bytes = fresh.makeMemorySnapshot(); // synchronous: runs before any call
    const headers = { "content-type": "application/octet-stream", "x-sd-checksum": checksum(bytes) };
    const url = snapshotUrl(await manifest);
    await cache.put(url, new Response(bytes, { headers }));
    const old = (await cache.keys()).filter((r) => r.url.startsWith(SNAPSHOT_ROOT) && r.url !== url);
    await Promise.all(old.map((r) => cache.delete(r)));
  };
  return fresh;
}

// Takes the snapshot after READY is posted (the page need not wait for it) and before the first call; storing it
// overlaps the calls. A failure is a warning: the next visit boots normally.
function storeSnapshot() {
  keepSnapshot?.().catch((err) => console.warn("no Python snapshot was stored:", err?.message || err));
  keepSnapshot = null;
}

async function phases() {
  let done = enter("runtime");
  const manifest = fetchManifest();
  const core = manifest.then(fetchCore);
  core.catch(() => {}); // awaited in "core" below, which reports its failure
  const unwatch = watchRuntimeFetches(failPhase);
  try {
    pyodide = await bootRuntime(manifest);
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
      self.postMessage({ id: initId, type: MSG.READY, version: await ready, boot });
    } catch (err) {
      self.postMessage(errorMessage(initId, err, phase));
      return;
    }
    storeSnapshot();
  } else if (message.type === MSG.CALL) {
    try {
      await ready;
    } catch (err) {
      self.postMessage(errorMessage(message.id, err, phase));
      return;
    }
    storeSnapshot();
    self.postMessage(handle(message));
  }
};
