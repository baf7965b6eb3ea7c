// The Python worker: Pyodide plus specdec_core, answering CALLs (protocol.js). A module worker (Pyodide refuses
// classic ones); URLs resolve against this file, so the site works at a domain root and under a sub-path alike.
// Start-up runs protocol.js's phases, each under its time limit, behind one `ready`; a failure or an overrun is
// reported as ERROR with its phase. The core is one zip of bytecode precompiled at build time plus data files,
// unpacked onto sys.path (pure Python: no micropip).

import { loadPyodide, version as PYODIDE } from "../../vendor/pyodide/pyodide.mjs";
import { MSG, PHASES } from "./protocol.js";

const SITE = new URL("../../", import.meta.url);

let pyodide = null;
let web = null; // the specdec_core.web module once ready

// A Python exception is the call's error; anything else (the runtime itself failing) leaves the worker unusable.
function handle({ id, name, args }) {
  try {
    return { id, type: MSG.RESULT, value: web.call(name, args) }; // JSON strings both ways
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

// Tells the page, and fails start-up if the phase is still running when its time is up.
function enter(name) {
  phase = name;
  self.postMessage({ id: initId, type: MSG.PROGRESS, phase: name, label: PHASES[name].label });
  const { timeoutMs } = PHASES[name];
  const timer = setTimeout(
    () => failPhase(new Error(`start-up phase "${name}" did not finish within ${timeoutMs / 1000} s`)),
    timeoutMs,
  );
  return () => clearTimeout(timer);
}

// A request that gets no answer (offline, or the server down) names its file: the browser's own words, "Failed to
// fetch", were all the banner said.
async function fetchOk(url, init) {
  const response = await fetch(url, init).catch((err) => {
    const file = new URL(url).pathname.split("/").pop();
    throw new Error(`${file} could not be downloaded: the network did not answer (${err?.message || err})`);
  });
  if (!response.ok) throw new Error(`${response.status} ${response.statusText} for ${url}`);
  return response;
}

// Pyodide 314 fetches its own files and, when the wasm answers with an error status, logs a warning and never
// settles loadPyodide: a failed response for a runtime file fails the phase at once, naming the file.
function watchRuntimeFetches(fail) {
  const original = self.fetch;
  const runtime = new URL("vendor/pyodide/", SITE).href;
  self.fetch = async (input, init) => {
    const response = await original(input, init);
    const url = new URL(String(input?.url ?? input), SITE);
    if (!response.ok && url.href.startsWith(runtime)) {
      fail(
        new Error(
          `the Python runtime (${url.pathname.split("/").pop()}) failed to load: ${response.status} ${response.statusText}`,
        ),
      );
    }
    return response;
  };
  return () => (self.fetch = original);
}

// --- memory snapshots --------------------------------------------------------------------------------------------
// Most of a repeat visit's boot is Python's own start-up, not downloading, so after a fresh boot (specdec_core.web
// imported, no call run yet) Pyodide's memory (31 MB) is kept in Cache Storage, and the next boot restores it:
// ready in about a third of the time (benchmarks/bench_browser.py, section e). `_makeSnapshot`,
// `makeMemorySnapshot()` and `_loadSnapshot` are private options of Pyodide 314.0.7: any step may fail, and a
// failure only costs a normal boot. The cache is not the service worker's, which a redeploy replaces: the
// snapshot, keyed by Pyodide's version and the core's digest, outlives redeploys that change neither. Storing one
// deletes this site's others; entries are URLs under the site, so two sites on one origin keep theirs apart.
const SNAPSHOTS = "sd-snapshot";
const SNAPSHOT_ROOT = new URL("sd-snapshot/", SITE).href;
let boot = "fresh"; // for READY: "fresh" | "snapshot"
let keepSnapshot = null; // after a fresh boot: takes and stores the snapshot, once, before the first call runs

const snapshotUrl = (manifest) => `${SNAPSHOT_ROOT}pyodide-${PYODIDE}-core-${manifest.sha256.slice(0, 16)}`;

// Pyodide checks a snapshot's header only, and one with a damaged body made Pyodide 314.0.7 spin forever under
// Node, where no time limit can stop it: a checksum over 32-bit words (15-80 ms for 31 MB) guards the body.
function checksum(bytes) {
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 2);
  let sum = bytes.byteLength;
  for (let i = 0; i < words.length; i++) sum = (Math.imul(sum, 31) + words[i]) | 0;
  return String(sum >>> 0);
}

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

// From the stored snapshot, or a normal boot (then ready to take one). Without Cache Storage (an insecure
// origin) every boot is a normal one.
async function bootRuntime(manifest) {
  const options = { indexURL: new URL("vendor/pyodide/", SITE).href };
  const cache = await self.caches?.open(SNAPSHOTS).catch(() => null);
  if (!cache) return loadPyodide(options);
  const stored = await storedSnapshot(cache, manifest).catch(() => null);
  if (stored) {
    try {
      const bytes = checked(stored.response);
      bytes.catch(() => {}); // loadPyodide awaits it and reports its failure
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

// After READY (the page need not wait) and before the first call. A failure costs the next visit a normal boot.
function storeSnapshot() {
  keepSnapshot?.().catch((err) => console.warn("no Python snapshot was stored:", err?.message || err));
  keepSnapshot = null;
}

async function phases() {
  let done = enter("runtime");
  // The manifest names the core archive and is always revalidated (a redeploy is picked up); its digest busts
  // caches. The archive downloads while the runtime loads; its failure is reported in phase "core".
  const manifest = fetchOk(new URL("core/manifest.json", SITE), { cache: "no-cache" }).then((r) => r.json());
  const core = manifest
    .then(({ file, sha256 }) => fetchOk(new URL(`core/${file}?v=${sha256.slice(0, 16)}`, SITE)))
    .then((r) => r.arrayBuffer());
  core.catch(() => {});
  const unwatch = watchRuntimeFetches(failPhase);
  try {
    pyodide = await bootRuntime(manifest);
  } finally {
    unwatch();
    done();
  }

  done = enter("core");
  pyodide.unpackArchive(await core, "zip");
  done();

  done = enter("import");
  web = pyodide.pyimport("specdec_core.web");
  const version = pyodide.runPython("import specdec_core; specdec_core.__version__");
  done();
  return version;
}

// Pyodide's PythonError carries the whole traceback in `message`; the page shows its last line.
function errorMessage(id, err, where) {
  const text = String((err && err.message) || err);
  const lines = text
    .trim()
    .split("\n")
    .filter((line) => line.trim() !== "");
  const out = {
    id,
    type: MSG.ERROR,
    error: text,
    traceback_last_line: lines.length ? lines.at(-1).trim() : "unknown error",
  };
  if (where) out.phase = where;
  return out;
}

// Start-up begins as soon as this module runs (the page may create the worker from <head>) and ends with the
// phases or with the first failure any phase reports. INIT only asks to be told the outcome.
const failed = new Promise((_, reject) => (failPhase = reject)); // before phases(), which hands failPhase on
const ready = Promise.race([phases(), failed]);
ready.catch(() => {}); // reported to INIT below

self.onmessage = async ({ data: message }) => {
  const id = message.type === MSG.INIT ? (initId = message.id) : message.id;
  try {
    const version = await ready;
    if (message.type === MSG.INIT) self.postMessage({ id, type: MSG.READY, version, boot });
  } catch (err) {
    self.postMessage(errorMessage(id, err, phase));
    return;
  }
  storeSnapshot();
  if (message.type === MSG.CALL) self.postMessage(handle(message));
};
