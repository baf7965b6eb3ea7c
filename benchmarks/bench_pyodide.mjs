// Run benchmarks/snippets.py inside Pyodide under Node, with the core installed from the dist/
// wheel exactly as the browser installs it. benchmarks/bench_pyodide.py runs the same snippets
// natively and in Chromium (bench_chromium.mjs) too and prints them side by side; run this file
// alone for the Node figures only.
//
// Usage: node benchmarks/bench_pyodide.mjs [--json] [--wheel PATH]
//   --json        print one JSON object on stdout (Python's own output goes to stderr)
//   --wheel PATH  install this wheel instead of the one in dist/ (the driver passes its snapshot of it)

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadPyodide } from "../node_modules/pyodide/pyodide.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, "..");
const WORKDIR = "/home/pyodide/bench";

function coreWheel() {
  const dist = path.join(ROOT, "dist");
  const wheels = fs.existsSync(dist) ? fs.readdirSync(dist).filter((f) => /^specdec_core-.*\.whl$/.test(f)) : [];
  if (wheels.length !== 1) {
    console.error(`bench_pyodide: expected one specdec_core wheel in dist/, found ${wheels.length}: run 'make wheel'`);
    process.exit(2);
  }
  return path.join(dist, wheels[0]);
}

async function main() {
  const asJson = process.argv.includes("--json");
  const wheelAt = process.argv.indexOf("--wheel");
  const wheel = wheelAt > 0 && process.argv[wheelAt + 1] ? path.resolve(process.argv[wheelAt + 1]) : coreWheel();

  let started = performance.now();
  const pyodide = await loadPyodide();
  const bootSeconds = (performance.now() - started) / 1000;
  // With --json, stdout carries the result alone.
  const out = asJson ? process.stderr : process.stdout;
  const writer = (stream) => ({
    write: (bytes) => {
      stream.write(bytes);
      return bytes.length;
    },
  });
  pyodide.setStdout(writer(out));
  pyodide.setStderr(writer(process.stderr));

  started = performance.now();
  const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
  // A Buffer is not accepted here: pass a plain Uint8Array (PLATFORM.md).
  pyodide.unpackArchive(new Uint8Array(fs.readFileSync(wheel)), "wheel", { extractDir: sitePackages });
  pyodide.runPython("import specdec_core");
  const installSeconds = (performance.now() - started) / 1000;

  pyodide.FS.mkdirTree(WORKDIR);
  pyodide.FS.writeFile(`${WORKDIR}/snippets.py`, fs.readFileSync(path.join(HERE, "snippets.py")));
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

  if (asJson) {
    process.stdout.write(JSON.stringify(result) + "\n");
    return;
  }
  console.log(`Pyodide ${result.pyodide} (Python ${result.python}) under Node ${process.version}`);
  console.log(`boot ${bootSeconds.toFixed(2)} s, wheel install + import ${installSeconds.toFixed(2)} s`);
  for (const [name, r] of Object.entries(result.results)) {
    console.log(`${name}: median ${r.median.toPrecision(4)} ${r.unit} over ${r.runs.length} runs`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(3);
});
