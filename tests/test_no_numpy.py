"""The package imports without numpy, as it must in the browser, where Pyodide has no numpy.

Natively numpy is installed, so the check runs in a fresh interpreter whose import system refuses
numpy (a meta-path finder that raises ``ModuleNotFoundError`` for ``numpy`` and ``numpy.*``).
Inside Pyodide (``sys.platform == "emscripten"``, see tests/pyodide/run_pytest.mjs) numpy is
really absent and subprocesses do not exist, so the same check runs in-process there.

Every module of the package is found by ``pkgutil``, so a module added later is covered too; only
``batch``, the one numpy module, must fail, and with an ``ImportError`` that names numpy.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from typing import Any

# Refuse numpy the way a missing install does, before anything imports it.
BLOCK_NUMPY = """
import importlib.abc, sys

class RefuseNumpy(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "numpy" or name.startswith("numpy."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, RefuseNumpy())
"""

# Import the package and each module; report what imported, how batch failed, and whether numpy
# was loaded at all. Printed as one JSON line so the subprocess and in-process runs read alike.
CHECK = """
import importlib, json, pkgutil, sys
import specdec_core

imported, failures, batch_error = [], {}, None
for info in sorted(pkgutil.iter_modules(specdec_core.__path__), key=lambda m: m.name):
    name = f"specdec_core.{info.name}"
    try:
        importlib.import_module(name)
        imported.append(info.name)
    except ImportError as error:
        if info.name == "batch":
            batch_error = {"type": type(error).__name__, "name": error.name, "message": str(error)}
        else:
            failures[info.name] = f"{type(error).__name__}: {error}"
RESULT = {
    "imported": imported,
    "failures": failures,
    "batch_error": batch_error,
    "public": sorted(specdec_core.__all__),
    "numpy_loaded": any(m == "numpy" or m.startswith("numpy.") for m in sys.modules),
}
print(json.dumps(RESULT))
"""


@functools.cache
def run_check() -> dict[str, Any]:
    if sys.platform == "emscripten":
        # Pyodide: numpy is genuinely absent (asserted in the test); no subprocess is possible.
        namespace: dict[str, Any] = {}
        exec(CHECK.replace("print(json.dumps(RESULT))", ""), namespace)
        result: dict[str, Any] = namespace["RESULT"]
        return result
    completed = subprocess.run(
        [sys.executable, "-c", BLOCK_NUMPY + CHECK],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    loaded: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return loaded


def test_every_module_but_batch_imports_without_numpy() -> None:
    result = run_check()
    assert result["failures"] == {}
    assert not result["numpy_loaded"]
    # The modules the pages and the worker need are among them (more may be added).
    assert {"distributions", "steps", "theory"} <= set(result["imported"])
    assert "batch" not in result["imported"]
    assert result["public"], "the package exports its public names without numpy"


def test_batch_raises_import_error_naming_numpy() -> None:
    error = run_check()["batch_error"]
    assert error is not None, "specdec_core.batch imported although numpy was unavailable"
    assert error["name"] == "numpy" or "numpy" in error["message"], error


def test_numpy_really_absent_inside_pyodide() -> None:
    """In Pyodide the run above is no simulation: numpy cannot be found at all there."""
    import importlib.util

    numpy_found = importlib.util.find_spec("numpy") is not None
    assert numpy_found != (sys.platform == "emscripten")
