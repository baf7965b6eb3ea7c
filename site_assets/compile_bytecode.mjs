// Precompiles specdec_core for the browser: Python bytecode made by the same Pyodide the site ships.
//
// Usage: node site_assets/compile_bytecode.mjs WHEEL OUT.zip
//
// Importing specdec_core in the browser compiled every module from source first, about 80 ms of a first
// visit's start-up. This unpacks the wheel inside Pyodide (under Node), compiles each module with
// compileall, and writes the __pycache__ files to OUT.zip (paths relative to site-packages), which the worker
// unpacks beside the wheel. The .pyc files are "unchecked-hash" (PEP 552): Python uses them without comparing
// them with the sources, so they stay valid whatever timestamps the unpacked files get. The build hook runs this
// on every build, from the wheel it ships, so the bytecode can never be older than the code.

import fs from "node:fs";
import { loadPyodide } from "../node_modules/pyodide/pyodide.mjs";

const [wheel, out] = process.argv.slice(2);
if (!wheel || !out) {
  console.error("usage: node site_assets/compile_bytecode.mjs WHEEL OUT.zip");
  process.exit(2);
}
const pyodide = await loadPyodide();
pyodide.unpackArchive(new Uint8Array(fs.readFileSync(wheel)), "wheel", { extractDir: "/tmp/core" });
pyodide.runPython(`
import compileall, pathlib, py_compile, sys, zipfile
root = pathlib.Path("/tmp/core")
if not compileall.compile_dir(str(root / "specdec_core"), quiet=1,
                              invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH):
    sys.exit("compileall failed")
files = sorted(root.glob("specdec_core/**/__pycache__/*.pyc"))
if not files:
    sys.exit("no bytecode was written")
with zipfile.ZipFile("/tmp/bytecode.zip", "w", zipfile.ZIP_DEFLATED) as archive:
    for path in files:
        # A fixed date keeps the archive identical from one build to the next.
        info = zipfile.ZipInfo(path.relative_to(root).as_posix(), date_time=(2020, 1, 1, 0, 0, 0))
        archive.writestr(info, path.read_bytes(), compress_type=zipfile.ZIP_DEFLATED)
`);
fs.writeFileSync(out, pyodide.FS.readFile("/tmp/bytecode.zip"));
