"""Native CPython against Pyodide under Node, on the same snippets (benchmarks/snippets.py).

The native column runs the snippets in this interpreter; the Pyodide column runs them through
``node benchmarks/bench_pyodide.mjs --json``, with the package installed from the dist/ wheel as in
the browser. Needs ``make wheel`` and ``npm ci`` first (``make bench`` does both). Nothing is asserted.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import snippets  # noqa: E402  (the shared snippet file sits beside this one)


def pyodide_results() -> dict[str, Any]:
    completed = subprocess.run(
        ["node", str(HERE / "bench_pyodide.mjs"), "--json"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def _figure(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value * 1000:,.1f} ms"
    return f"{value:,.0f} {unit}"


def _relative_speed(native: dict[str, Any], pyodide: dict[str, Any]) -> float:
    """Pyodide's speed as a fraction of native: below 1 means Pyodide is slower."""
    if native["higher_is_better"]:
        return float(pyodide["median"] / native["median"])
    return float(native["median"] / pyodide["median"])


def main() -> None:
    native = snippets.run_all()
    remote = pyodide_results()
    print(
        f"\n## Native CPython {platform.python_version()} vs Pyodide {remote['pyodide']} "
        f"(CPython {remote['python']}) under Node, median of {snippets.REPEATS}\n"
    )
    rows = [("benchmark", "native", "Pyodide", "Pyodide speed / native")]
    for name, mine in native.items():
        theirs = remote["results"][name]
        if mine["work"] != theirs["work"]:
            # Same seeds should mean the same tokens; if not, the columns time different work.
            print(f"warning: {name}: work differs, native {mine['work']} vs Pyodide {theirs['work']}")
        rows.append(
            (
                name,
                _figure(mine["median"], mine["unit"]),
                _figure(theirs["median"], theirs["unit"]),
                f"{_relative_speed(mine, theirs):.2f}x",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for index, row in enumerate(rows):
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
        print("| " + " | ".join(cells) + " |")
        if index == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    print(
        f"\nPyodide boot {remote['boot_seconds']:.2f} s; core wheel install and import "
        f"{remote['install_seconds']:.2f} s (one run each)."
    )


if __name__ == "__main__":
    main()
