"""The site in headless Chromium: start-up, slider latency, a 2,000-round Run, first-visit transfer, repeat visits.
Nothing asserted.

(a) Time to first chart (the first widget's build-time figure on screen: the copy site_assets/prerender.py drew
    into the HTML, or where there is none, the sketch js/runtime/sketch.js draws once the widget mounts; the
    start of the first frame after it is in the DOM, since a long task right after it, such as the theme's
    bundle, holds that frame back, or the first contentful paint where the chart was in the DOM before the page's
    first frame; the time it entered the DOM is given too), time
    to ready (``[data-sd-status]`` reads ready) and time until Plotly's partial bundle (cartesian, or gl3d on the
    home page) has redrawn every chart, from navigation start, on the home page and the Playground, each in a fresh
    browser context (cold HTTP cache). The baseline is a bare page whose module worker loads the same vendored
    ``pyodide.mjs``, runs ``1+1`` and posts ready; it lives in a temporary folder served beside the site, never in
    the site. Medians of 9 rounds (each round loads every target once, in turn); both times are also given as
    ratios to bare ready, measured in the same run, and ready as the median of each round's own ratio to that
    round's bare ready, with its quartiles and range: with 5 rounds the median ratio moved by about 0.05 between
    runs, as much as the aim's margin.
    Aims: ready <= 1.10x bare, first chart within 0.3 s. Two more rows say where ready's excess comes from: the
    lab's own worker in an empty page, and the home page with the theme's bundle blocked. The first column is the
    browser's first contentful paint: no chart can show before it.
(b) Slider input -> chart updated: the slider's value is set and an ``input`` event dispatched, and the clock stops
    when a chart of the same widget counts one more redraw (``data-sd-renders``); a change that redraws no chart
    within 10 s is left out and counted (the Playground does not redraw a figure equal to the one on screen, which a
    walk turning back can ask for when the clock stopped at a later chart of an earlier change). 50 changes walking
    the slider up and down, one at a time, median and p95, in two ways: "back to back", each change made as soon as the
    previous one redrew a chart (the widget may still be drawing its other charts in the next frames: the Home
    lab's 3D scene, the Playground's smaller charts; so the next change's time includes that work, or stops early
    at one of those draws), and "settled", with 250 ms (not timed) between changes for the widget to finish.
    Back to back, a change can also be timed long: when the previous change's clock stopped early, its result
    is never painted (a newer one was asked for), the walk turns back to the value on screen, and the equal figure
    is not redrawn; the clock then runs until some later draw of another chart of the widget (a traced case on the
    Playground: 457 ms, the worker and the main thread idle for ~370 ms of it). Three walks each way, alternating
    (back to back, settled, back to back, ...) on one page, pooled for the median and p95 (150 changes each way),
    with each walk's own p95 beside them: the first walk starts as the page goes live, while the service worker
    still fills its cache and the theme builds its search index, and a single 50-change walk's p95 (its third
    slowest change) moved by tens of ms between runs. Aim: p95 <= 50 ms.
(c) The Playground's Run (2,000 rounds per press, its ``runRounds`` setting): Reset, press Run, and time until the
    run has ended (the widget drops ``data-sd-running``) and the rounds metric has grown by 2,000. Median of 5.
(d) First-visit transfer of the home page: every response body the browser received (cold cache, until ready,
    every widget live, the service worker's cache filled and the network idle), by kind and by file, with the gzip
    size a compressing host such as GitHub Pages would send (``python -m http.server`` sends files as they are).
    This includes what the service worker fetches once the page is ready (it precaches only what every page
    needs to boot). The runtime the page already
    loaded is revalidated (304, no body) where the HTTP cache kept it; a fresh context's in-memory cache did not
    keep the 9.4 MB pyodide.asm.wasm, which the worker downloads a second time (counted once here).
(e) Repeat visits: in a fresh context, a first visit to a page goes ready and waits until the service worker holds
    the site (``<html data-sd-offline="ready">``) and the Python worker has stored its memory snapshot (Cache
    Storage ``sd-snapshot``); then a second tab opens the same page, served by the worker's cache and booted from
    the snapshot. Ready (and first chart) from navigation start for both visits, side by side in the same run,
    medians of 5, and the ratio repeat / first; how each repeat visit booted (``<html data-sd-boot>``), and the
    time from the first visit's ready until its snapshot was stored. Aim: ready on a repeat visit <= 0.6x ready
    on the first.

Same Chromium and flags as the browser tests (tests/browser/conftest.py). The site must be built (``make site``;
``make bench`` does it). Run alone with ``.venv/bin/python benchmarks/bench_browser.py``.
"""

from __future__ import annotations

import gzip
import http.server
import statistics
import sys
import tempfile
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Page, sync_playwright
from playwright.sync_api import Error as PlaywrightError

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "browser"))
# One source for the browser, its flags and the site folder (site/, or $SD_SITE) shared with the browser tests.
from conftest import CHROMIUM, CHROMIUM_FLAGS, SITE  # noqa: E402

REPEATS = 5
STARTUP_REPEATS = 9  # (a): its ready / bare moved by +-0.05 between runs with 5 rounds, the width of the aim's margin
SLIDER_CHANGES = 50
SLIDER_WALKS = 3  # (b) walks of each way, alternating
SETTLE_MS = 250  # (b) "settled": the pause between two changes, not timed
BENCH_PREFIX = "/__bench__/"
BOOT_MS = 120_000
ALPHA = "\N{GREEK SMALL LETTER ALPHA}"

# The bare baseline: Pyodide in a module worker and nothing else.
BARE_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Bare Pyodide worker</title></head>
<body><p>Bare Pyodide worker</p>
<script type="module">
  const worker = new Worker(new URL("bare-worker.js", import.meta.url), { type: "module" });
  worker.onmessage = (event) => {
    window.__sdBench.ready = performance.now();
    document.body.dataset.ready = String(event.data);
  };
</script></body></html>
"""
# The site's own Python worker (js/runtime/worker.js: manifest, core archive, import of specdec_core.web, the
# snapshot option) in a page with nothing else: what the worker costs beyond a bare one, apart from the page.
WORKER_ALONE_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>The lab's worker alone</title></head>
<body><p>The lab's worker alone</p>
<script type="module">
  const worker = new Worker(new URL("../js/runtime/worker.js", import.meta.url), { type: "module" });
  worker.onmessage = (event) => {
    if (event.data.type === "READY") window.__sdBench.ready = performance.now();
  };
  worker.postMessage({ id: 1, type: "INIT" });
</script></body></html>
"""
BARE_WORKER = """import { loadPyodide } from "../vendor/pyodide/pyodide.mjs";
const pyodide = await loadPyodide({ indexURL: new URL("../vendor/pyodide/", import.meta.url).href });
self.postMessage(pyodide.runPython("1+1"));
"""

# Runs before any page script: stamps the first build-time chart and the ready status (ms since navigation start).
MARKS = """(() => {
  const marks = { chartInDom: null, firstChart: null, firstPlotly: null, ready: null, plotly: null };
  window.__sdBench = marks;
  // In the DOM is not yet on screen: a long task right after (the theme's bundle runs next) holds the frame that
  // draws it. firstChart is the start of that frame (its requestAnimationFrame callback), or the first contentful
  // paint if that comes later: a chart in the DOM before the page's first frame shows with that frame. (Where the
  // widget modules ran before the first frame, a trace showed the callback at 166 ms and the first paint at 312 ms.)
  let frame = null;
  let paint = null;
  const settle = () => frame !== null && paint !== null && (marks.firstChart = Math.max(frame, paint));
  new PerformanceObserver((list) => {
    const fcp = list.getEntriesByName("first-contentful-paint")[0];
    if (fcp) (paint = fcp.startTime), settle();
  }).observe({ type: "paint", buffered: true });
  const check = () => {
    if (marks.chartInDom === null && document.querySelector(".sd-widget .sd-chart :is(svg.sd-sketch, .main-svg)")) {
      marks.chartInDom = performance.now();
      requestAnimationFrame(() => ((frame = performance.now()), settle()));
    }
    if (marks.firstPlotly === null && document.querySelector(".sd-widget .sd-chart .main-svg"))
      marks.firstPlotly = performance.now();
    if (marks.ready === null && document.querySelector('[data-sd-status="ready"]')) marks.ready = performance.now();
    if (marks.plotly === null && marks.firstPlotly !== null && document.documentElement.dataset.sdCharts === "plotly")
      marks.plotly = performance.now();
  };
  new MutationObserver(check).observe(document, {
    subtree: true, childList: true, attributes: true, attributeFilter: ["data-sd-status", "data-sd-charts"],
  });
})();"""

# Walks a slider SLIDER_CHANGES steps (bouncing off its ends) and times each input -> next chart redraw.
SLIDER_LATENCY = """async ([label, changes, settleMs]) => {
  const input = [...document.querySelectorAll(".sd-widget input[type=range]")]
    .find((el) => el.labels[0] && el.labels[0].textContent.trim() === label);
  if (!input) throw new Error(`no slider labelled ${label}`);
  const widget = input.closest(".sd-widget");
  const renders = () => [...widget.querySelectorAll(".sd-chart")]
    .reduce((n, c) => n + Number(c.dataset.sdRenders || 0), 0);
  const step = Number(input.step), min = Number(input.min), max = Number(input.max);
  let direction = 1;
  const times = [];
  for (let i = 0; i < changes; i++) {
    let next = Number(input.value) + direction * step;
    if (next > max + 1e-9 || next < min - 1e-9) {
      direction = -direction;
      next = Number(input.value) + direction * step;
    }
    const before = renders();
    const updated = new Promise((resolve) => {
      const observer = new MutationObserver(() => {
        if (renders() > before) { observer.disconnect(); resolve(true); }
      });
      observer.observe(widget, { subtree: true, attributes: true, attributeFilter: ["data-sd-renders"] });
      setTimeout(() => { observer.disconnect(); resolve(false); }, 10000);
    });
    const t0 = performance.now();
    input.value = String(next);
    input.dispatchEvent(new Event("input", { bubbles: true }));
    // A change that redrew nothing is left out: the Playground does not redraw a figure equal to the one on screen,
    // and a walk turning back can ask for one when the clock stopped at an earlier change's later chart.
    if (await updated) times.push(performance.now() - t0);
    // Settled (not timed): the widget finishes (it may draw its other charts in the next frames) before the next
    // change, whose clock then cannot stop at a draw of this change's result.
    if (settleMs) await new Promise((resolve) => setTimeout(resolve, settleMs));
  }
  return times;
}"""

# Presses the Playground's Run and resolves when that run has ended: {ms, rounds played, tokens emitted}.
RUN_ONCE = """async () => {
  const widget = document.querySelector('.sd-widget[data-widget="playground"]');
  const value = (name) => Number(widget.querySelector(`[data-metric="${name}"]`).dataset.value || 0);
  const run = [...widget.querySelectorAll("button")].find((b) => b.textContent.trim() === "Run");
  const rounds0 = value("rounds"), tokens0 = value("tokens-emitted");
  const t0 = performance.now();
  await new Promise((resolve) => {
    let started = false;
    const observer = new MutationObserver(() => {
      if (widget.dataset.sdRunning) started = true;
      else if (started) { observer.disconnect(); resolve(); }
    });
    observer.observe(widget, { attributes: true, attributeFilter: ["data-sd-running"] });
    run.click();
    if (widget.dataset.sdRunning) started = true;
  });
  const ms = performance.now() - t0;
  // Metrics are written as each result arrives; the last result may paint a frame after the run flag drops.
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  return { ms, rounds: value("rounds") - rounds0, tokens: value("tokens-emitted") - tokens0 };
}"""


# --- server ---------------------------------------------------------------------------------------------------


class _Handler(http.server.SimpleHTTPRequestHandler):
    bench_dir: Path

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def translate_path(self, path: str) -> str:
        clean = path.split("?", 1)[0].split("#", 1)[0]
        if clean.startswith(BENCH_PREFIX):
            return str(self.bench_dir / clean[len(BENCH_PREFIX) :])
        return super().translate_path(path)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A measurement that ends closes its browser context, cutting off downloads in flight (a prefetch, a
        # service worker filling its cache): not an error of the server.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@contextmanager
def serve() -> Iterator[str]:
    """The built site at the root of a loopback server (as `make serve`), the bare page under /__bench__/."""
    with tempfile.TemporaryDirectory(prefix="sd-bench-") as tmp:
        bench_dir = Path(tmp)
        (bench_dir / "bare.html").write_text(BARE_HTML, "utf-8")
        (bench_dir / "bare-worker.js").write_text(BARE_WORKER, "utf-8")
        (bench_dir / "worker-alone.html").write_text(WORKER_ALONE_HTML, "utf-8")
        handler = type("Handler", (_Handler,), {"bench_dir": bench_dir})
        httpd = _Server(("127.0.0.1", 0), partial(handler, directory=str(SITE)))
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{httpd.server_address[1]}/"
        finally:
            httpd.shutdown()
            httpd.server_close()


# Makes lab.js load Plotly at once instead of after Python's start-up: what the first chart would cost without the
# sketch (js/lab.js reads this flag; nothing else sets it).
PLOTLY_AT_ONCE = "window.__sdBench.plotlyAtOnce = true;"


@contextmanager
def fresh_page(browser: Browser, *scripts: str) -> Iterator[Page]:
    """A new context per measurement: empty HTTP cache, nothing carried over."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        for script in (MARKS, *scripts):
            page.add_init_script(script)
        yield page
    finally:
        context.close()


def wait_live(page: Page) -> None:
    """Python is ready, every widget has answered a live call, and Plotly has taken over every chart."""
    page.wait_for_function(
        """() => document.querySelector('[data-sd-status="ready"]') &&
            document.documentElement.dataset.sdCharts === 'plotly' &&
            [...document.querySelectorAll('.md-content .sd-widget')].every((w) => w.dataset.sdLive === 'true')""",
        timeout=BOOT_MS,
    )


# --- (a) start-up ---------------------------------------------------------------------------------------------


# The theme's bundle (mkdocs-material's, a deferred script that must run before DOMContentLoaded): blocked in one
# row of (a), to show what its start-up costs the Python worker's. Without it the page has no instant navigation,
# search or palette toggle, and js/math.js fails (no document$): a measurement, not a page a reader would get.
THEME_BUNDLE = "**/assets/javascripts/bundle.*.min.js"


def startup(browser: Browser, url: str, *scripts: str, block: str | None = None) -> dict[str, float | None]:
    with fresh_page(browser, *scripts) as page:
        if block:
            page.route(block, lambda route: route.abort())
        page.goto(url)
        page.wait_for_function(
            "window.__sdBench.ready !== null && (window.__sdBench.plotly !== null || !window.SDLab)"
            " && (window.__sdBench.firstChart !== null || window.__sdBench.chartInDom === null)",
            timeout=BOOT_MS,
        )
        marks: dict[str, float | None] = page.evaluate(
            """() => ({ ...window.__sdBench,
              firstPaint: performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? null })"""
        )
    return marks


def median(values: list[float]) -> float:
    return statistics.median(values)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def section_startup(browser: Browser, base: str) -> None:
    targets = {
        "bare Pyodide worker": (BENCH_PREFIX.lstrip("/") + "bare.html", (), None),
        "the lab's worker alone": (BENCH_PREFIX.lstrip("/") + "worker-alone.html", (), None),
        "home": ("", (), None),
        "playground": ("playground/", (), None),
        "home, theme bundle blocked": ("", (), THEME_BUNDLE),
        "home, Plotly at once": ("", (PLOTLY_AT_ONCE,), None),
        "playground, Plotly at once": ("playground/", (PLOTLY_AT_ONCE,), None),
    }
    samples: dict[str, list[dict[str, float | None]]] = defaultdict(list)
    for _ in range(STARTUP_REPEATS):  # interleaved, so drift in machine load falls on every target alike
        for name, (path, scripts, block) in targets.items():
            samples[name].append(startup(browser, base + path, *scripts, block=block))
    bare = median([s["ready"] or 0.0 for s in samples["bare Pyodide worker"]])
    print(f"\n(a) start-up from navigation, fresh context each time, median of {STARTUP_REPEATS} (ms)")
    head = ("first paint", "chart in DOM", "first chart", "/ bare", "first Plotly", "/ bare", "ready", "/ bare")
    head += ("Plotly all",)
    print(f"{'page':<28}" + "".join(f"{h:>13}" for h in head))
    for name, runs in samples.items():
        paints = [s["firstPaint"] for s in runs if s.get("firstPaint") is not None]
        cells = [f"{median(paints):.0f}" if paints else "-"]
        in_dom = [s["chartInDom"] for s in runs if s.get("chartInDom") is not None]
        cells.append(f"{median(in_dom):.0f}" if in_dom else "-")
        for key in ("firstChart", "firstPlotly", "ready"):
            values = [s[key] for s in runs if s.get(key) is not None]
            value = median(values) if values else None
            cells += [f"{value:.0f}", f"{value / bare:.2f}x"] if value is not None else ["-", "-"]
        values = [s["plotly"] for s in runs if s.get("plotly") is not None]
        cells.append(f"{median(values):.0f}" if values else "-")
        print(f"{name:<28}" + "".join(f"{c:>13}" for c in cells))
    print("first paint: the browser's first contentful paint, a floor under first chart on this machine")
    print("chart in DOM: the first widget chart (sketch or Plotly) is in the page; first chart: the frame that draws")
    print("  it begins (its requestAnimationFrame), later when a long task follows, and never before first paint;")
    print("  first Plotly: the first chart drawn by Plotly")
    print("ready: [data-sd-status] reads ready (Python answers calls); Plotly all: every chart redrawn by Plotly")
    print("the lab's worker alone: js/runtime/worker.js in an empty page; theme bundle blocked: the home page")
    print("  without mkdocs-material's script (no search, instant navigation or palette toggle): together they show")
    print("  where ready's excess over bare comes from")
    print("Plotly at once: Plotly loads with the page instead of after Python's start-up (no sketch needed if fast)")
    print("aims: ready <= 1.10x bare; first chart <= 300 ms")
    # Each round loads every target once, one after the other: a page's ready over the same round's bare ready
    # leaves out load that drifts from round to round. Their spread says how far one run's median can be trusted.
    bare_runs = [s["ready"] for s in samples["bare Pyodide worker"]]
    print("ready / the same round's bare ready, per round: median, quartiles, range")
    for name in ("home", "playground"):
        ratios = sorted(s["ready"] / b for s, b in zip(samples[name], bare_runs, strict=True) if s["ready"] and b)
        if len(ratios) < 4:
            continue
        q1, _, q3 = statistics.quantiles(ratios, n=4)
        spread = f"quartiles {q1:.2f}-{q3:.2f}x, range {ratios[0]:.2f}-{ratios[-1]:.2f}x over {len(ratios)} rounds"
        print(f"  {name:<26}{median(ratios):.2f}x   {spread}")


# --- (b) slider latency ---------------------------------------------------------------------------------------


def section_sliders(browser: Browser, base: str) -> None:
    walks = f"{SLIDER_WALKS} walks of {SLIDER_CHANGES} changes each way, alternating, pooled"
    print(f"\n(b) slider input -> chart redrawn, one change at a time, {walks} (ms)")
    print(f"{'page':<12} {'slider':<16} {'changes':<13} {'median':>8} {'p95':>8} {'max':>8}   p95 of each walk")
    sliders = (("playground/", "playground", "Draft quality"), ("", "home", f"Agreement rate {ALPHA}"))
    for path, name, label in sliders:
        with fresh_page(browser) as page:
            page.goto(base + path)
            wait_live(page)
            pooled: dict[str, list[list[float]]] = {"back to back": [], "settled": []}
            # Alternating the two ways puts both under the same conditions: the first walk starts as the page goes
            # live, while the service worker still fills its cache and the search index is built.
            for _ in range(SLIDER_WALKS):
                for way, settle_ms in (("back to back", 0), ("settled", SETTLE_MS)):
                    pooled[way].append(page.evaluate(SLIDER_LATENCY, [label, SLIDER_CHANGES, settle_ms]))
            for way, walks_ in pooled.items():
                times = [t for walk in walks_ for t in walk]
                skipped = SLIDER_WALKS * SLIDER_CHANGES - len(times)
                note = f"  ({skipped} redrew no chart within 10 s: left out)" if skipped else ""
                each = " / ".join(f"{p95(walk):.1f}" for walk in walks_)
                row = f"{median(times):8.1f} {p95(times):8.1f} {max(times):8.1f}   {each}{note}"
                print(f"{name:<12} {label:<16} {way:<13} {row}")
    print("aim: p95 <= 50 ms")


# --- (c) a 2,000-round Run ------------------------------------------------------------------------------------


def section_run(browser: Browser, base: str) -> None:
    results: list[dict[str, float]] = []
    with fresh_page(browser) as page:
        page.goto(base + "playground/")
        wait_live(page)
        widget = page.locator('.sd-widget[data-widget="playground"]')
        for _ in range(REPEATS):
            widget.get_by_role("button", name="Reset", exact=True).click()
            page.wait_for_function(
                """() => Number(document.querySelector('.sd-widget[data-widget="playground"] [data-metric="rounds"]')
                    .dataset.value || 0) === 0""",
                timeout=BOOT_MS,
            )
            results.append(page.evaluate(RUN_ONCE))
    ms = [r["ms"] for r in results]
    rounds = {int(r["rounds"]) for r in results}
    tokens = median([r["tokens"] for r in results])
    print(f"\n(c) Playground Run after Reset (defaults: quality 0.85, gamma 4), median of {REPEATS}")
    print(f"rounds per Run {sorted(rounds)}; tokens emitted (median) {tokens:.0f}")
    print(
        f"time {median(ms) / 1000:.2f} s (min {min(ms) / 1000:.2f}, max {max(ms) / 1000:.2f});"
        f" {2000 / (median(ms) / 1000):,.0f} rounds/s, {tokens / (median(ms) / 1000):,.0f} tokens/s"
    )


# --- (d) first-visit transfer ---------------------------------------------------------------------------------


def kind_of(path: str) -> str:
    rules: list[tuple[Callable[[str], bool], str]] = [
        (lambda p: p.startswith("vendor/pyodide/"), "Pyodide runtime"),
        (lambda p: p.startswith("core/"), "core archive"),
        (lambda p: p.startswith("vendor/plotly"), "Plotly (partial bundles)"),
        (lambda p: p.endswith((".woff2", ".woff", ".ttf")), "fonts"),
        (lambda p: p.startswith("vendor/katex/"), "KaTeX (JS, CSS)"),
        (lambda p: p.startswith("search/"), "search index"),
        (lambda p: p.endswith(".css"), "CSS (theme, lab)"),
        (lambda p: p.endswith((".js", ".mjs")), "JS (theme, lab, widgets)"),
        (lambda p: p == "" or p.endswith((".html", "/")), "HTML"),
    ]
    return next((kind for test, kind in rules if test(path)), "other")


def gzip_size(path: str) -> int | None:
    file = SITE / (path or "index.html")
    if file.is_dir():
        file = file / "index.html"
    return len(gzip.compress(file.read_bytes(), compresslevel=6)) if file.is_file() else None


def section_transfer(browser: Browser, base: str) -> None:
    received: list[tuple[str, int, str]] = []  # path, body bytes, content-encoding
    context = browser.new_context(viewport={"width": 1280, "height": 900})

    def finished(request: Any) -> None:
        response = request.response()
        if response is None or not request.url.startswith(base):
            return
        path = request.url[len(base) :].split("?", 1)[0].split("#", 1)[0]
        try:
            size = request.sizes()["responseBodySize"]
        except PlaywrightError:
            return  # finished as the context closed (the service worker still filling its cache): not counted
        received.append((path, size, response.headers.get("content-encoding", "")))

    context.on("requestfinished", finished)
    try:
        page = context.new_page()
        page.goto(base)
        wait_live(page)
        # Until the service worker holds what it caches on a first visit: that is downloaded on it too.
        page.wait_for_selector('html[data-sd-offline="ready"]', state="attached", timeout=BOOT_MS)
        page.wait_for_load_state("networkidle")
    finally:
        context.close()

    # A file fetched twice counts once, at its largest body; the gzip column estimates what a compressing host
    # would send for it.
    largest: dict[str, tuple[int, str]] = {}
    for path, size, encoding in received:
        if path not in largest or size > largest[path][0]:
            largest[path] = (size, encoding)
    received = [(path, size, encoding) for path, (size, encoding) in largest.items()]
    by_kind: dict[str, list[int]] = defaultdict(list)
    gz_by_kind: dict[str, int] = defaultdict(int)
    for path, size, _ in received:
        by_kind[kind_of(path)].append(size)
        gz_by_kind[kind_of(path)] += gzip_size(path) or size
    total = sum(size for _, size, _ in received)
    gz_total = sum(gz_by_kind.values())
    compressed = sorted({enc for _, _, enc in received if enc})
    print("\n(d) home page, first visit (cold cache): bodies until ready, widgets live, cache filled, network idle")
    print(f"server compresses: {', '.join(compressed) if compressed else 'no (python http.server sends files as-is)'}")
    print(f"{'kind':<26} {'files':>5} {'KB sent':>10} {'KB gzip':>10}")
    for kind, sizes in sorted(by_kind.items(), key=lambda item: -sum(item[1])):
        print(f"{kind:<26} {len(sizes):5d} {sum(sizes) / 1024:10.1f} {gz_by_kind[kind] / 1024:10.1f}")
    print(f"{'total':<26} {len(received):5d} {total / 1024:10.1f} {gz_total / 1024:10.1f}")
    print("largest files (KB sent, KB if gzipped, e.g. by GitHub Pages):")
    for path, size, _ in sorted(received, key=lambda r: -r[1])[:10]:
        gz = gzip_size(path)
        print(f"  {path or 'index.html':<48} {size / 1024:9.1f} {(gz if gz is not None else size) / 1024:9.1f}")


# --- (e) repeat visits ---------------------------------------------------------------------------------------


# Resolves with performance.now() once the Python worker's snapshot cache holds an entry (polled every 20 ms).
SNAPSHOT_STORED = """async (ms) => {
  const deadline = performance.now() + ms;
  const cache = await caches.open("sd-snapshot");
  while ((await cache.keys()).length === 0 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return performance.now();
}"""


def first_and_repeat(browser: Browser, url: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Marks of a first visit (cold context) and of a repeat visit in a second tab once the service worker holds
    the site and the snapshot is stored; each with how Python booted, the first with when the snapshot was stored."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        context.add_init_script(MARKS)
        visits = []
        for _ in range(2):
            page = context.new_page()
            page.goto(url)
            page.wait_for_function("window.__sdBench.ready !== null", timeout=BOOT_MS)
            marks = page.evaluate("window.__sdBench")
            marks["boot"] = page.evaluate("document.documentElement.dataset.sdBoot")
            marks["stored"] = page.evaluate(SNAPSHOT_STORED, BOOT_MS)
            page.wait_for_function("document.documentElement.dataset.sdOffline === 'ready'", timeout=BOOT_MS)
            visits.append(marks)
            page.close()
        return visits[0], visits[1]
    finally:
        context.close()


def section_repeat(browser: Browser, base: str) -> None:
    print(f"\n(e) first visit vs repeat visit (second tab, served by the service worker), median of {REPEATS} (ms)")
    row = "{:<12} {:>13} {:>14} {:>15} {:>13} {:>8} {:>13} {:>7}"
    heads = ("ready, first", "ready, repeat", "repeat / first", "chart, first", "repeat", "repeat boot", "stored")
    print(row.format("page", *heads))
    for name, path in (("home", ""), ("playground", "playground/")):
        pairs = [first_and_repeat(browser, base + path) for _ in range(REPEATS)]
        first = median([p[0]["ready"] or 0.0 for p in pairs])
        repeat = median([p[1]["ready"] or 0.0 for p in pairs])
        charts = [median([p[i]["firstChart"] or 0.0 for p in pairs]) for i in (0, 1)]
        boots = [p[1]["boot"] for p in pairs]
        stored = median([p[0]["stored"] - (p[0]["ready"] or 0.0) for p in pairs])
        times = (f"{first:.0f}", f"{repeat:.0f}", f"{repeat / first:.2f}x", f"{charts[0]:.0f}", f"{charts[1]:.0f}")
        print(row.format(name, *times, f"snapshot {boots.count('snapshot')}/{len(boots)}", f"{stored:.0f}"))
    print("stored: from the first visit's ready until its Python snapshot was in Cache Storage")
    print("aim: repeat / first <= 0.6")


def main() -> None:
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # rows appear as they are measured
    if not (SITE / "index.html").exists():
        raise SystemExit("site/ is not built: run `make site` (make bench does it)")
    with serve() as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
        try:
            print(f"Chromium {browser.version}, headless; site served by python http.server on loopback")
            section_startup(browser, base)
            section_sliders(browser, base)
            section_run(browser, base)
            section_transfer(browser, base)
            section_repeat(browser, base)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
