"""Benchmark snippets that run unchanged natively and inside Pyodide.

``bench_pyodide.py`` calls ``run_measured()`` here in CPython, and ``bench_chromium.mjs`` (Chromium)
and ``bench_pyodide.mjs`` (Node) call the same function inside Pyodide, so every column of its table
times the same code. Standard library and ``specdec_core`` only: this file is copied into Pyodide's
file system as it is.

Each snippet repeats its measurement ``REPEATS`` times and reports every run and the median;
``run_measured()`` runs every snippet once to warm up, then again for the figures.
"""

from __future__ import annotations

import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

REPEATS = 5


def _measure(run_once: Callable[[], tuple[float, int]], unit: str, higher_is_better: bool) -> dict[str, Any]:
    """Repeat ``run_once`` (returning a figure and a work count) and keep every run and the median.

    The work count (tokens emitted, vocabulary size) must agree between native and Pyodide: the
    same seeds give the same tokens on both, since both use CPython's Mersenne Twister and IEEE
    doubles. The driver checks it, so the two columns are known to time identical work.
    """
    figures, work = [], set()
    for _ in range(REPEATS):
        figure, count = run_once()
        figures.append(figure)
        work.add(count)
    return {
        "median": statistics.median(figures),
        "runs": figures,
        "unit": unit,
        "higher_is_better": higher_is_better,
        "work": sorted(work),
    }


def _speculative_tokens_per_s(make_pair: Callable[[], Any], tokens: int) -> dict[str, Any]:
    """Tokens/s of ``engine.generate_speculative`` with a fixed gamma of 4.

    Seeds 0, 1, 2, ... each generate up to ``tokens`` tokens (fewer when the end token comes
    first) until ``tokens`` have been emitted in all. A fresh pair per run, so no run inherits
    another's cached rows.
    """
    import random

    from specdec_core.engine import generate_speculative
    from specdec_core.policies import FixedPolicy

    def once() -> tuple[float, int]:
        pair = make_pair()
        emitted, seed = 0, 0
        start = time.perf_counter()
        while emitted < tokens:
            trace = generate_speculative(pair, FixedPolicy(4), max_tokens=tokens, rng=random.Random(seed))
            emitted += trace.counters.emitted
            seed += 1
        return emitted / (time.perf_counter() - start), emitted

    return _measure(once, "tokens/s", higher_is_better=True)


def engine_agreement_tokens_per_s() -> dict[str, Any]:
    """Scalar engine on the agreement pair (alpha = 0.8, 8 tokens): mostly interpreter overhead."""
    from specdec_core.models import agreement_pair

    return _speculative_tokens_per_s(lambda: agreement_pair(0.8), tokens=2000)


def engine_ngram_tokens_per_s() -> dict[str, Any]:
    """Scalar engine on the n-gram pair (about 1,000 words): the site's text generator."""
    from specdec_core.models import ngram_pair

    return _speculative_tokens_per_s(ngram_pair, tokens=300)


def ngram_load_seconds() -> dict[str, Any]:
    """Seconds to build the n-gram pair from the bundled text, from cold counts each time.

    The counts are cached after the first build (one page load trains once), so the cache is
    cleared before each run: this times what a reader waits for on first use.
    """
    from specdec_core import models

    def once() -> tuple[float, int]:
        models._counts.cache_clear()
        start = time.perf_counter()
        pair = models.ngram_pair()
        return time.perf_counter() - start, len(pair.vocab)

    return _measure(once, "s", higher_is_better=False)


SNIPPETS: dict[str, Callable[[], dict[str, Any]]] = {
    "scalar engine, agreement pair (V=8, gamma=4)": engine_agreement_tokens_per_s,
    "scalar engine, n-gram pair (V=1024, gamma=4)": engine_ngram_tokens_per_s,
    "n-gram pair load (train from text)": ngram_load_seconds,
}


def run_all() -> dict[str, dict[str, Any]]:
    return {name: snippet() for name, snippet in SNIPPETS.items()}


def run_measured() -> dict[str, Any]:
    """Every snippet twice in this runtime: a first pass right after start-up ("cold"), then the measured one.

    V8 compiles each WebAssembly function with its baseline compiler (Liftoff) when first called and recompiles
    hot ones with its optimising compiler (TurboFan) in the background (v8.dev/docs/wasm-compilation-pipeline),
    so Pyodide runs slower for a while after boot, the longer on a loaded machine. The measured pass times the
    core's steady state; the cold pass shows what a reader's first interaction gets. Native CPython has no such
    warm-up but runs both passes too, so every side does the same thing.
    """
    cold = run_all()
    return {"python": platform.python_version(), "cold": cold, "results": run_all()}
