// Run benchmarks/snippets.py inside Pyodide in Chromium, in a module Web Worker (as the site runs the core) or on
// the page's main thread. Same steps as bench_pyodide.mjs under Node: boot Pyodide, unpack the core wheel into
// site-packages, import it, copy snippets.py into Pyodide's file system and call snippets.run_all().
//
// bench_pyodide.py serves this file from a temporary folder on loopback, beside a tiny page that imports it,
// snippets.py, the core wheel and node_modules/pyodide/ (as pyodide/). Loaded by the page it defines
// window.sdBench.{worker, main}(wheel); loaded as a module worker it answers one {wheel} message with
// {result} or {error}. The result is the JSON object bench_pyodide.mjs prints with --json.

import { loadPyodide } from "./pyodide/pyodide.mjs";

const WORKDIR = "/home/pyodide/bench";

async function fetchBytes(name) {
  const url = new URL(name, import.meta.url);
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${response.status} ${response.statusText} for ${url}`);
  return new Uint8Array(await response.arrayBuffer());
}

async function runSnippets(wheel) {
  let started = performance.now();
  const pyodide = await loadPyodide({ indexURL: new URL("pyodide/", import.meta.url).href });
  const bootSeconds = (performance.now() - started) / 1000;

  started = performance.now();
  const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
  pyodide.unpackArchive(await fetchBytes(wheel), "wheel", { extractDir: sitePackages });
  pyodide.runPython("import specdec_core");
  const installSeconds = (performance.now() - started) / 1000;

  pyodide.FS.mkdirTree(WORKDIR);
  pyodide.FS.writeFile(`${WORKDIR}/snippets.py`, await fetchBytes("snippets.py"));
  const resultJson = await pyodide.runPythonAsync(`
import json, sys
sys.path.insert(0, ${JSON.stringify(WORKDIR)})
import snippets
json.dumps(snippets.run_measured())
`);
  const result = JSON.parse(resultJson);
  result.pyodide = pyodide.version;
  result.boot_seconds = bootSeconds;
  result.install_seconds = installSeconds;
  return result;
}

function inWorker(wheel) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(import.meta.url, { type: "module" });
    const finish = (settle, value) => {
      worker.terminate();
      settle(value);
    };
    worker.onmessage = ({ data }) =>
      data.error ? finish(reject, new Error(data.error)) : finish(resolve, data.result);
    worker.onerror = (event) => finish(reject, new Error(`worker failed: ${event.message}`));
    worker.postMessage({ wheel });
  });
}

if (typeof WorkerGlobalScope !== "undefined" && self instanceof WorkerGlobalScope) {
  self.onmessage = async ({ data }) => {
    try {
      self.postMessage({ result: await runSnippets(data.wheel) });
    } catch (error) {
      self.postMessage({ error: String(error?.stack ?? error) });
    }
  };
} else {
  window.sdBench = { worker: inWorker, main: runSnippets };
}
