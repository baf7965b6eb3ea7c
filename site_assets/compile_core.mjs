// Turns specdec_core's sources into the one archive the browser unpacks: bytecode made by the Pyodide the site
// ships, plus the package's data files, and no source. Run by site_assets/prebuild.py.
//
// Usage: node site_assets/compile_core.mjs SOURCES.zip OUT.zip
//
// SOURCES.zip holds the package as the wheel would install it (paths relative to site-packages). Each module is
// compiled to an "unchecked-hash" .pyc (PEP 552) written where its .py was, and the .py is dropped: Python then
// imports the .pyc itself (a sourceless module), so the browser neither downloads the sources nor compiles them
// (compiling on import cost about 80 ms of a first visit's start-up). Two settings make the bytecode smaller
// (about 100 KB instead of 180 KB compressed, on 2026-12 sources): optimize=2 drops docstrings (prebuild.py
// refuses a package that reads __doc__ or uses assert, so nothing changes at run time), and PYTHONNODEBUGRANGES
// drops the column ranges tracebacks use to underline an expression (the page shows a traceback's last line only).
//
// A zip, not a tar.gz: the tar.gz is 10% smaller, but Python's tarfile costs Pyodide about 60 ms to import on the
// critical path of start-up, where the zip unpacks in about 11 ms. Before writing the archive, the script unpacks
// it into a fresh folder and imports specdec_core.web from there, so a build cannot ship one that does not
// import, and `runtime.info` must report the package precompiled.

import fs from "node:fs";
import { loadPyodide } from "../node_modules/pyodide/pyodide.mjs";

const [sources, out] = process.argv.slice(2);
if (!sources || !out) {
  console.error("usage: node site_assets/compile_core.mjs SOURCES.zip OUT.zip");
  process.exit(2);
}
const pyodide = await loadPyodide({ env: { PYTHONNODEBUGRANGES: "1" } });
pyodide.unpackArchive(new Uint8Array(fs.readFileSync(sources)), "zip", { extractDir: "/tmp/core" });
pyodide.runPython(`
import importlib, json, pathlib, py_compile, sys, zipfile

root = pathlib.Path("/tmp/core")
modules = sorted(root.rglob("*.py"))
if not modules:
    sys.exit("no Python modules in the sources")
for source in modules:
    py_compile.compile(str(source), cfile=str(source.with_suffix(".pyc")), dfile=source.relative_to(root).as_posix(),
                       doraise=True, optimize=2, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    source.unlink()

# Sorted names and a fixed date: the same sources give the same bytes from one build to the next.
with zipfile.ZipFile("/tmp/core.zip", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        info = zipfile.ZipInfo(path.relative_to(root).as_posix(), date_time=(2020, 1, 1, 0, 0, 0))
        archive.writestr(info, path.read_bytes(), compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)

# The proof: unpacked alone, the archive imports and reports its modules precompiled.
check = pathlib.Path("/tmp/check")
with zipfile.ZipFile("/tmp/core.zip") as archive:
    archive.extractall(check)
sys.path.insert(0, str(check))
for name in [m for m in sys.modules if m.partition(".")[0] == "specdec_core"]:
    del sys.modules[name]
web = importlib.import_module("specdec_core.web")
info = json.loads(web.call("runtime.info", "{}"))
if not info["precompiled"] or not web.__file__.startswith(str(check)):
    sys.exit(f"the archive does not import as precompiled bytecode: {info}")
`);
fs.writeFileSync(out, pyodide.FS.readFile("/tmp/core.zip"));
