"""Native CPython against Pyodide in headless Chromium and under Node, on the same snippets (benchmarks/snippets.py).

Every side calls ``snippets.run_all()``, from one snapshot of the dist/ wheel and of snippets.py taken at start:

- native: a fresh ``python -S`` process of this interpreter with the unpacked wheel first on ``sys.path``, so it
  runs the very files the browser runs, and a source tree edited during the run cannot change what is timed;
- Chromium, worker: Pyodide in a module Web Worker, as the site runs the core (``bench_chromium.mjs``);
- Chromium, main thread: the same on the page's main thread;
- Node: ``node benchmarks/bench_pyodide.mjs --json --wheel <snapshot>``.

Chromium opens a tiny page from a temporary folder served by a loopback HTTP server that starts and stops here;
Pyodide comes from ``node_modules/pyodide`` (copied into that folder, so a reinstall during the run cannot pull it
away), never from the built site. Same Chromium and
flags as the browser tests. A round runs every side once, in the order above, each in a fresh runtime (new process,
new browser context), so drift in the machine's load falls on every side alike; each cell is the median of all its
runs (rounds x ``snippets.REPEATS``). The driver checks that every side did identical work (same tokens, same
vocabulary). Needs ``make wheel`` and ``npm ci`` first (``make bench`` does both). Nothing is asserted.

Usage: python benchmarks/bench_pyodide.py [--rounds N] [--wheel PATH]   (--wheel: time another build of the core)
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from playwright.sync_api import Browser, sync_playwright
from playwright.sync_api import Error as PlaywrightError

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests" / "browser"))

import snippets  # noqa: E402  (the shared snippet file sits beside this one)
from conftest import CHROMIUM, CHROMIUM_FLAGS  # noqa: E402  (one source for the browser and its flags)

ROUNDS = 3
BOOT_MS = 120_000
# The sides in the order a round runs them; the first is the reference every ratio divides by.
NATIVE, WORKER, MAIN, NODE = "native", "Chromium worker", "Chromium main thread", "Node"
ENGINE_ROWS = [name for name in snippets.SNIPPETS if name.startswith("scalar engine")]
AIM = 0.75

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Core throughput in Pyodide</title></head>
<body><p>Core throughput in Pyodide</p><script type="module" src="bench_chromium.mjs"></script></body></html>
"""

# Runs in a fresh `python -S`: no site-packages, so no editable install of the source tree can shadow the snapshot.
NATIVE_RUNNER = """\
import json, sys
sys.path[:0] = sys.argv[1:3]
import specdec_core, snippets
if not specdec_core.__file__.startswith(sys.argv[1]):
    raise SystemExit(f"specdec_core came from {specdec_core.__file__}, not from the wheel snapshot")
print(json.dumps(snippets.run_measured()))
"""


def core_wheel() -> Path:
    wheels = sorted((ROOT / "dist").glob("specdec_core-*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"expected one specdec_core wheel in dist/, found {len(wheels)}: run 'make wheel'")
    return wheels[0]


@contextmanager
def snapshot(wheel: Path) -> Iterator[tuple[Path, str]]:
    """A temporary folder with the page, the runner, snippets.py, the wheel (and it unpacked) and Pyodide's runtime."""
    with tempfile.TemporaryDirectory(prefix="sd-bench-pyodide-") as tmp:
        folder = Path(tmp)
        shutil.copy2(wheel, folder / wheel.name)
        for name in ("snippets.py", "bench_chromium.mjs"):
            shutil.copy2(HERE / name, folder / name)
        (folder / "index.html").write_text(PAGE, "utf-8")
        runtime = ROOT / "node_modules" / "pyodide"
        if not (runtime / "pyodide.mjs").is_file():
            raise SystemExit("node_modules/pyodide is missing: run 'npm ci' (make bench does it)")
        shutil.copytree(runtime, folder / "pyodide")
        with zipfile.ZipFile(folder / wheel.name) as archive:
            archive.extractall(folder / "native")
        yield folder, wheel.name


class _Handler(http.server.SimpleHTTPRequestHandler):
    # Module scripts need a JavaScript type; streaming compilation needs application/wasm.
    extensions_map: ClassVar[dict[str, str]] = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".mjs": "text/javascript",
        ".wasm": "application/wasm",
    }

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serve(folder: Path) -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(folder)))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def _json_tail(command: list[str]) -> dict[str, Any]:
    completed = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, text=True, check=True)
    result: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def native_results(folder: Path) -> dict[str, Any]:
    return _json_tail([sys.executable, "-S", "-c", NATIVE_RUNNER, str(folder / "native"), str(folder)])


def node_results(wheel: Path) -> dict[str, Any]:
    return _json_tail(["node", str(HERE / "bench_pyodide.mjs"), "--json", "--wheel", str(wheel)])


def chromium_results(browser: Browser, base: str, wheel: str, where: str) -> dict[str, Any]:
    """``where`` is "worker" or "main"; a fresh context each time, so nothing is cached from a previous run."""
    context = browser.new_context()
    log: list[str] = []
    try:
        page = context.new_page()
        page.on("console", lambda message: log.append(f"{message.type}: {message.text}"))
        page.on("pageerror", lambda error: log.append(f"page error: {error}"))
        page.goto(base + "index.html")
        page.wait_for_function("() => window.sdBench !== undefined", timeout=BOOT_MS)
        result: dict[str, Any] = page.evaluate("([where, wheel]) => window.sdBench[where](wheel)", [where, wheel])
        return result
    except PlaywrightError as error:
        raise SystemExit(f"Chromium ({where}) failed: {error}\nconsole:\n" + "\n".join(log)) from error
    finally:
        context.close()


# --- report ---------------------------------------------------------------------------------------------------


def _figure(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value * 1000:,.1f} ms"
    return f"{value:,.0f} {unit}"


def _speed(reference: float, other: float, higher_is_better: bool) -> float:
    """The other side's speed as a fraction of the reference's: below 1 means it is slower."""
    return other / reference if higher_is_better else reference / other


def _pooled(rounds: list[dict[str, Any]], name: str, the_pass: str = "results") -> float:
    """The median of every run of one snippet over all rounds, in the measured pass or the cold one."""
    return statistics.median(run for result in rounds for run in result[the_pass][name]["runs"])


def _round_note(rounds: int) -> str:
    return (
        f"the measured pass in each of the {rounds} rounds (median of its {snippets.REPEATS} repeats), and the cold"
        f" first pass after boot (median of all {rounds * snippets.REPEATS} of its runs)"
    )


def _table(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for index, row in enumerate(rows):
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
        print("| " + " | ".join(cells) + " |")
        if index == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")


def check_work(sides: dict[str, list[dict[str, Any]]]) -> None:
    """Same seeds should mean the same tokens everywhere; if not, the columns time different work."""
    for name in snippets.SNIPPETS:
        seen = {side: sorted({w for r in rounds for w in r["results"][name]["work"]}) for side, rounds in sides.items()}
        if len({json.dumps(work) for work in seen.values()}) > 1:
            print(f"warning: {name}: work differs between sides: {seen}")


def report(sides: dict[str, list[dict[str, Any]]], chromium: str) -> None:
    native, node = sides[NATIVE], sides[NODE]
    runs = len(native) * snippets.REPEATS
    print(
        f"\n## Native CPython {native[0]['python']} vs Pyodide {node[0]['pyodide']} (CPython {node[0]['python']})"
        f" in Chromium {chromium} and under Node {_node_version()}"
    )
    print(
        f"median of {runs} runs per cell ({len(native)} rounds x {snippets.REPEATS} repeats, sides interleaved), "
        "measured after one warm-up pass of every snippet in the same runtime\n"
    )
    others = [WORKER, MAIN, NODE]
    header = ("benchmark", NATIVE, *others, *(f"{side} / native" for side in others))
    rows: list[tuple[str, ...]] = [header]
    for name, first in native[0]["results"].items():
        unit, better = first["unit"], first["higher_is_better"]
        medians = {side: _pooled(rounds, name) for side, rounds in sides.items()}
        figures = [_figure(medians[side], unit) for side in (NATIVE, *others)]
        ratios = [f"{_speed(medians[NATIVE], medians[side], better):.2f}x" for side in others]
        rows.append((name, *figures, *ratios))
    _table(rows)
    check_work(sides)

    print(f"\nspeed / native on the scalar engine rows: {_round_note(len(native))}")
    spread: list[tuple[str, ...]] = [("benchmark", "side", "measured pass, per round", "cold pass")]
    for name in ENGINE_ROWS:
        better = native[0]["results"][name]["higher_is_better"]
        for side in others:
            per_round = [
                _speed(mine["results"][name]["median"], theirs["results"][name]["median"], better)
                for mine, theirs in zip(native, sides[side], strict=True)
            ]
            cold = _speed(_pooled(native, name, "cold"), _pooled(sides[side], name, "cold"), better)
            spread.append((name, side, " ".join(f"{ratio:.2f}" for ratio in per_round), f"{cold:.2f}"))
    _table(spread)
    print("\nPyodide start-up, median over rounds: boot, then core wheel install and import")
    for side in others:
        boot = statistics.median(r["boot_seconds"] for r in sides[side])
        install = statistics.median(r["install_seconds"] for r in sides[side])
        print(f"  {side}: {boot:.2f} s, {install:.2f} s")
    print(f"aim: {WORKER} >= {AIM:.2f}x native on the scalar engine rows")


def _node_version() -> str:
    return subprocess.run(["node", "--version"], stdout=subprocess.PIPE, text=True, check=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"rounds of every side (default {ROUNDS})")
    parser.add_argument("--wheel", type=Path, help="the core wheel to time (default: the one in dist/)")
    args = parser.parse_args()
    rounds, core = args.rounds, (args.wheel or core_wheel()).resolve()
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # progress appears as it happens
    print(f"core: {core.name}; native: {platform.python_implementation()} {platform.python_version()}")
    print(f"load average {_load()}")
    with snapshot(core) as (folder, wheel), serve(folder) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
        try:
            runners: dict[str, Callable[[], dict[str, Any]]] = {
                NATIVE: lambda: native_results(folder),
                WORKER: lambda: chromium_results(browser, base, wheel, "worker"),
                MAIN: lambda: chromium_results(browser, base, wheel, "main"),
                NODE: lambda: node_results(folder / wheel),
            }
            sides: dict[str, list[dict[str, Any]]] = {side: [] for side in runners}
            for index in range(rounds):
                for side, run in runners.items():
                    sides[side].append(run())
                print(f"round {index + 1}/{rounds} done; load average {_load()}")
            report(sides, browser.version)
        finally:
            browser.close()


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg()) + f" on {os.cpu_count()} cores"


if __name__ == "__main__":
    main()
