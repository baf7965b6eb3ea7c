"""A token-tree round inside the browser: the Token trees page's handler on the n-gram pair, k = 4, depth 5.

The site is served as ``bench_browser`` serves it and opened at ``trees/`` in headless Chromium; once Python is
ready, ``window.SDLab.call("trees.round", ...)`` is timed from the page's main thread, so each figure is what a
Step costs the reader: the worker drafts a full tree (up to k + k^2 + ... + k^5 = 1,364 nodes, fewer when i.i.d.
draws repeat a token), verifies it, builds the tree and mask figures, and the answer crosses back as JSON. One
warm-up call first (it counts the n-gram models), then ROUNDS calls with seeds 1..ROUNDS; median and p95, for
candidates drawn i.i.d. (SpecInfer) and without replacement. Aim: p95 <= 50 ms. Nothing asserted.

Run alone with ``.venv/bin/python benchmarks/bench_trees.py`` (the site must be built: ``make site``).
"""

from __future__ import annotations

import statistics
import sys

from bench_browser import BOOT_MS, fresh_page, p95, serve
from conftest import CHROMIUM, CHROMIUM_FLAGS, SITE
from playwright.sync_api import sync_playwright

ROUNDS = 40
ARGS = {"pair": "ngram", "k": 4, "depth": 5, "rounds": 1}

# Times ``n`` calls of the handler with seeds 1..n after one warm-up call; returns [ms per call], [nodes scored].
TIME_CALLS = """async ([args, n]) => {
  await window.SDLab.call("trees.round", {...args, seed: 0});
  const times = [], nodes = [];
  for (let seed = 1; seed <= n; seed++) {
    const t0 = performance.now();
    const result = await window.SDLab.call("trees.round", {...args, seed});
    times.push(performance.now() - t0);
    nodes.push(result.metrics["nodes-per-pass"]);
  }
  return [times, nodes];
}"""


def main() -> None:
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    if not (SITE / "index.html").exists():
        raise SystemExit("site/ is not built: run `make site` (make bench does it)")
    with serve() as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
        try:
            print(f"Chromium {browser.version}, headless; trees.round on the n-gram pair, k = 4, depth 5")
            print("| children drawn | median ms | p95 ms | max ms | mean nodes scored | calls |")
            print("|---|---|---|---|---|---|")
            with fresh_page(browser) as page:
                page.goto(base + "trees/")
                page.wait_for_selector('[data-sd-status="ready"]', timeout=BOOT_MS)
                for replacement, label in ((True, "i.i.d. (SpecInfer)"), (False, "without replacement")):
                    times, nodes = page.evaluate(TIME_CALLS, [{**ARGS, "replacement": replacement}, ROUNDS])
                    print(
                        f"| {label} | {statistics.median(times):.1f} | {p95(times):.1f} | {max(times):.1f} "
                        f"| {statistics.mean(nodes):.0f} | {len(times)} |"
                    )
        finally:
            browser.close()


if __name__ == "__main__":
    main()
