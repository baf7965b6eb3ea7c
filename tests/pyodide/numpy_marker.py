"""pytest plugin for the run inside Pyodide, where numpy does not exist.

Pyodide's npm package ships no numpy, so the numpy tests cannot run there. They are left out by
their marker, never by an import failure:

- a test module whose ``pytestmark`` includes ``pytest.mark.numpy`` is not collected at all,
  because importing it would already need numpy (the marker is read from the source, unimported);
- single tests marked ``numpy`` in other modules are deselected by ``-m "not numpy"``;
- ``specdec_core/batch.py``, the package's one numpy module, is left out of doctest collection.

A module that imports numpy without the marker still fails to collect, loudly: a bug to fix.
When numpy is importable the plugin leaves everything in. It also turns off Hypothesis's
per-example deadline, a wall-clock limit that the slower WebAssembly interpreter would trip for
no fault of the code.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

# The package's numpy modules, by file name (DESIGN.md: batch.py is the only one).
NUMPY_PACKAGE_MODULES = frozenset({"batch.py"})

_left_out: list[str] = []


def _numpy_absent() -> bool:
    return importlib.util.find_spec("numpy") is None


def _is_numpy_mark(node: ast.expr) -> bool:
    """True for ``pytest.mark.numpy`` and ``pytest.mark.numpy(...)``."""
    if isinstance(node, ast.Call):
        node = node.func
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "numpy"
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "mark"
    )


def module_marked_numpy(source: str) -> bool:
    """True when the module sets a top-level ``pytestmark`` that includes the numpy marker.

    >>> module_marked_numpy("import pytest\\npytestmark = pytest.mark.numpy\\n")
    True
    >>> module_marked_numpy("pytestmark = [pytest.mark.slow, pytest.mark.numpy]\\n")
    True
    >>> module_marked_numpy("import numpy as np\\n")
    False
    """
    for statement in ast.parse(source).body:
        if isinstance(statement, ast.Assign):
            targets = statement.targets
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets = [statement.target]
        else:
            continue
        if not any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets):
            continue
        value = statement.value
        marks = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
        if any(_is_numpy_mark(mark) for mark in marks if mark is not None):
            return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    try:
        from hypothesis import settings
    except ImportError:
        return
    settings.register_profile("pyodide", parent=settings.default, deadline=None, database=None)
    settings.load_profile("pyodide")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if collection_path.suffix != ".py" or not _numpy_absent():
        return None
    in_package = collection_path.parent.name == "specdec_core"
    if in_package and collection_path.name in NUMPY_PACKAGE_MODULES:
        _left_out.append(f"{collection_path.name} (the package's numpy module: doctests)")
        return True
    if collection_path.name.startswith("test_") and module_marked_numpy(collection_path.read_text(encoding="utf-8")):
        _left_out.append(f"{collection_path.name} (module marked numpy)")
        return True
    return None


def pytest_report_header(config: pytest.Config) -> list[str]:
    state = "absent" if _numpy_absent() else "present"
    return [f"numpy: {state}; Hypothesis profile 'pyodide' (no deadline, no database)"]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _left_out:
        terminalreporter.write_line("numpy absent, left out by marker: " + ", ".join(_left_out))
