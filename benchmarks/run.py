"""`make bench`: run every benchmark section and print its table. Nothing is asserted.

Each section is a module beside this file with a ``main()`` (or ``run()``) that prints its own
table. A section that cannot be imported is an error, not a silent gap in the report: every module
is imported before the first one runs, so a broken section fails fast.

Usage: python benchmarks/run.py [SECTION ...]   (default: all, in the order below)
"""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Module name -> what it measures, in the order printed.
SECTIONS: dict[str, str] = {
    "bench_pyodide": "scalar engine, n-gram load: native CPython vs Pyodide in Chromium (worker, main thread), Node",
    "bench_batch": "numpy batch round vs the residual-everywhere baseline; batch Monte Carlo",
    "bench_browser": "the site in Chromium: start-up vs bare Pyodide, slider latency, a Run, transfer, repeat visits",
    "bench_trees": "a token-tree round (n-gram pair, k = 4, depth 5) in Chromium: median and p95 per Step",
}


def entry_point(name: str) -> Callable[[], object]:
    module = importlib.import_module(name)
    for attribute in ("main", "run"):
        function = getattr(module, attribute, None)
        if callable(function):
            return function
    raise SystemExit(f"benchmarks/{name}.py has neither main() nor run()")


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(HERE))
    chosen = argv or list(SECTIONS)
    unknown = [name for name in chosen if name not in SECTIONS]
    if unknown:
        raise SystemExit(f"unknown section(s) {unknown}; known: {list(SECTIONS)}")
    entries = {name: entry_point(name) for name in chosen}
    for name, run in entries.items():
        print(f"\n# {name}: {SECTIONS[name]}", flush=True)
        start = time.perf_counter()
        sys.argv = [str(HERE / f"{name}.py")]  # a section's own argument parser sees no stray arguments
        run()
        print(f"({name} took {time.perf_counter() - start:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
