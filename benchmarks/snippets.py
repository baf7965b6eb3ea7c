"""Benchmark snippets that run unchanged natively and inside Pyodide.

``bench_pyodide.py`` calls ``run_all()`` here in CPython, and ``bench_pyodide.mjs`` calls the same
function inside Pyodide under Node, so the two columns of its table time the same code. Standard
library and ``specdec_core`` only: this file is copied into Pyodide's file system as it is.

Each snippet repeats its measurement ``REPEATS`` times and reports every run and the median.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

REPEATS = 5


def _measure(run_once: Callable[[], float], unit: str, higher_is_better: bool) -> dict[str, Any]:
    runs = [run_once() for _ in range(REPEATS)]
    return {
        "median": statistics.median(runs),
        "runs": runs,
        "unit": unit,
        "higher_is_better": higher_is_better,
    }


def ngram_load_seconds() -> dict[str, Any]:
    """Seconds to build the n-gram pair from the bundled text, from cold counts each time.

    The counts are cached after the first build (one page load trains once), so the cache is
    cleared before each run: this times what a reader waits for on first use.
    """
    from specdec_core import models

    def once() -> float:
        models._counts.cache_clear()
        start = time.perf_counter()
        models.ngram_pair()
        return time.perf_counter() - start

    return _measure(once, "s", higher_is_better=False)


SNIPPETS: dict[str, Callable[[], dict[str, Any]]] = {
    "n-gram pair load": ngram_load_seconds,
}


def run_all() -> dict[str, dict[str, Any]]:
    return {name: snippet() for name, snippet in SNIPPETS.items()}
