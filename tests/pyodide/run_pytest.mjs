// Run the core test suite inside Pyodide under Node, fully offline.
//
// The package is installed from the wheel in dist/ exactly as the browser installs it
// (unpackArchive(bytes, "wheel")), never from the source tree, so this run tests what ships.
// pytest and its pure-Python dependencies come from .cache/pyodide-wheels/ (tests/pyodide/fetch_wheels.py).
// numpy does not exist in Pyodide: numpy tests are left out by marker (see numpy_marker.py).
//
// Usage: node tests/pyodide/run_pytest.mjs [pytest arguments]
//   With no arguments it runs tests/ and the installed package's doctests. Arguments replace
//   those targets, e.g. `node tests/pyodide/run_pytest.mjs tests/test_steps.py -x`.
// Exit status: pytest's own (0 only when every collected test passed).

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadPyodide } from "../../node_modules/pyodide/pyodide.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, "..", "..");
const WHEEL_CACHE = path.join(ROOT, ".cache", "pyodide-wheels");
const PROJECT = "/home/pyodide/lab"; // where tests/ and pyproject.toml go inside Pyodide
const PLUGINS = "/home/pyodide/plugins";
// tests/browser drives Chromium and tests/pyodide is this tooling: neither runs in here.
const SKIP_DIRS = new Set(["browser", "pyodide", "__pycache__", ".hypothesis"]);

function fail(message) {
  console.error(`run_pytest: ${message}`);
  process.exit(2);
}

function coreWheel() {
  const dist = path.join(ROOT, "dist");
  const wheels = fs.existsSync(dist) ? fs.readdirSync(dist).filter((f) => /^specdec_core-.*\.whl$/.test(f)) : [];
  if (wheels.length !== 1) {
    fail(`expected one specdec_core wheel in dist/, found ${wheels.length}: run 'make wheel'`);
  }
  const wheel = path.join(dist, wheels[0]);
  warnIfStale(wheel);
  return wheel;
}

// The wheel, not the source tree, is what runs here: say so when the sources have moved on.
function warnIfStale(wheel) {
  const built = fs.statSync(wheel).mtimeMs;
  const newer = fs
    .readdirSync(path.join(ROOT, "specdec_core"), { recursive: true })
    .filter((f) => !f.includes("__pycache__"))
    .filter((f) => fs.statSync(path.join(ROOT, "specdec_core", f)).mtimeMs > built);
  if (newer.length > 0) {
    console.error(`run_pytest: warning: dist/ wheel is older than specdec_core/${newer[0]}: 'make wheel' rebuilds it`);
  }
}

function testWheels() {
  const manifest = path.join(WHEEL_CACHE, "manifest.json");
  if (!fs.existsSync(manifest)) fail("no wheel manifest: run tests/pyodide/fetch_wheels.py");
  const { wheels } = JSON.parse(fs.readFileSync(manifest, "utf8"));
  return wheels.map((name) => path.join(WHEEL_CACHE, name));
}

// Copy a host directory into the Emscripten file system, skipping SKIP_DIRS.
function copyTree(pyodide, hostDir, fsDir) {
  pyodide.FS.mkdirTree(fsDir);
  for (const entry of fs.readdirSync(hostDir, { withFileTypes: true })) {
    const hostPath = path.join(hostDir, entry.name);
    const fsPath = `${fsDir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) copyTree(pyodide, hostPath, fsPath);
    } else if (entry.isFile()) {
      pyodide.FS.writeFile(fsPath, new Uint8Array(fs.readFileSync(hostPath)));
    }
  }
}

function install(pyodide, wheelPath, sitePackages) {
  // A Buffer is not accepted here: pass a plain Uint8Array (PLATFORM.md). Without extractDir the
  // wheel lands in the working directory, which is on sys.path only until the first chdir.
  const bytes = new Uint8Array(fs.readFileSync(wheelPath));
  pyodide.unpackArchive(bytes, "wheel", { extractDir: sitePackages });
}

async function main() {
  const extraArgs = process.argv.slice(2);
  const wheels = testWheels();
  const core = coreWheel();

  const started = performance.now();
  const pyodide = await loadPyodide();
  // Raw byte writers keep pytest's output unbuffered and unsplit.
  const writer = (stream) => ({
    write: (bytes) => {
      stream.write(bytes);
      return bytes.length;
    },
  });
  pyodide.setStdout(writer(process.stdout));
  pyodide.setStderr(writer(process.stderr));

  const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
  for (const wheel of wheels) install(pyodide, wheel, sitePackages);
  install(pyodide, core, sitePackages);
  copyTree(pyodide, path.join(ROOT, "tests"), `${PROJECT}/tests`);
  // The pages' text, for tests/test_prose_numbers.py: the Markdown and the widgets' sources, not the built site.
  for (const [dir, ending] of [
    ["docs", ".md"],
    ["site_assets/js/widgets", ".js"],
  ]) {
    pyodide.FS.mkdirTree(`${PROJECT}/${dir}`);
    for (const name of fs.readdirSync(path.join(ROOT, dir)).filter((n) => n.endsWith(ending)))
      pyodide.FS.writeFile(`${PROJECT}/${dir}/${name}`, new Uint8Array(fs.readFileSync(path.join(ROOT, dir, name))));
  }
  pyodide.FS.writeFile(`${PROJECT}/pyproject.toml`, fs.readFileSync(path.join(ROOT, "pyproject.toml")));
  pyodide.FS.mkdirTree(PLUGINS);
  pyodide.FS.writeFile(`${PLUGINS}/numpy_marker.py`, fs.readFileSync(path.join(HERE, "numpy_marker.py")));
  const setupSeconds = (performance.now() - started) / 1000;

  pyodide.globals.set("PROJECT", PROJECT);
  pyodide.globals.set("PLUGINS", PLUGINS);
  pyodide.globals.set("EXTRA_ARGS", pyodide.toPy(extraArgs));
  const code = await pyodide.runPythonAsync(`
import importlib.util, os, sys
from pathlib import Path

os.chdir(PROJECT)
sys.path.insert(0, PLUGINS)
import specdec_core

# The package must come from the unpacked wheel in site-packages, never from a source tree.
package_dir = Path(specdec_core.__file__).parent
assert "site-packages" in package_dir.parts, package_dir
numpy_state = "absent" if importlib.util.find_spec("numpy") is None else "PRESENT"
print(f"run_pytest: Pyodide ${pyodide.version}, Python {sys.version.split()[0]} ({sys.platform}); "
      f"specdec_core from {package_dir}; numpy {numpy_state}; set-up ${setupSeconds.toFixed(1)} s",
      flush=True)

import pytest

args = [
    "-q", "-m", "not numpy", "-p", "no:cacheprovider", "-p", "numpy_marker",
    "--rootdir", PROJECT, "-c", f"{PROJECT}/pyproject.toml", "--doctest-modules",
]
args += list(EXTRA_ARGS) or ["tests", str(package_dir)]
int(pytest.main(args))
`);
  const seconds = (performance.now() - started) / 1000;
  console.log(`run_pytest: pytest exit status ${code} after ${seconds.toFixed(1)} s in Pyodide`);
  process.exit(code);
}

main().catch((error) => {
  console.error(error);
  process.exit(3);
});
