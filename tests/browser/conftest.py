"""Fixtures for the browser tests: the built site on loopback, Debian's Chromium, and a strict page.

- ``server`` serves ``site/`` (built by ``make site``) on 127.0.0.1 at a free port, under the sub-path ``/lab/``
  the way GitHub Pages serves a project site, so every test also checks that no URL assumes the domain root.
  ``SD_SITE=/some/copy`` serves another built copy instead (a snapshot that a concurrent build cannot change).
  ``zensical_server`` serves ``site-zensical/`` (the same sources built by Zensical, ``make site-zensical``; or
  ``SD_ZENSICAL_SITE``) the same way; a test that requests it gets a ``page`` checked against its origin.
  ``server.block("pyodide.asm.wasm")`` makes matching paths answer 503 until ``server.unblock()``;
  ``server.hold("pyodide.asm.wasm")`` makes them wait, unanswered, until ``server.release()``;
  ``server.replace("sw.js", body)`` answers matching paths with ``body`` until ``server.restore()``;
  ``server.requests`` lists the paths asked for, in order.
- Browser contexts: most tests share a warm one per site (``warm_contexts``), as a reader's browser is on a repeat
  visit: its HTTP cache and the Python memory snapshot in Cache Storage make a page's boot about three times
  faster, while each test still opens its own page. A test gets a fresh context of its own when it asks for
  ``context``, is marked ``@no_service_worker`` or ``@with_service_worker``.
- Service workers: the site registers one once a page is ready (js/offline.js), and from then on it answers from
  its cache. Installing it copies the runtime into Cache Storage, work that only the offline and repeat-visit
  tests look at, so browser contexts block service workers unless a test is marked ``@with_service_worker``
  (``@pytest.mark.browser_context_args(service_workers="allow")``): test_offline.py and Zensical's offline reload.
  A test that blocks or holds files tests a first visit's network, which a service worker or a warm cache would
  hide: ``block`` and ``hold`` refuse unless the test is marked ``@no_service_worker``, which gives it a fresh
  context with service workers blocked; in a warm context they accept only ``MANIFEST``, which every boot asks the
  server for (holding it keeps a page booting). No worker outlives its test's context.
- ``base_url`` is that address (``http://127.0.0.1:PORT/lab/``); ``page.goto("verify/")`` resolves against it.
- ``browser_type_launch_args`` points pytest-playwright at ``/usr/bin/chromium`` with the flags that work as root
  (PLATFORM.md); ``playwright install`` is never needed.
- ``page`` fails the test on any console error, uncaught page error, or request to another origin, and prints the
  browser's console log when a test fails. A test that expects errors declares them: ``browser_log.allow(regex)``.
- Shared pages: in a module marked ``@shared_page`` (a page's own test file), the tests that would share the warm
  context also share one page, and ``visit(page, url)`` reaches each test's URL by instant navigation, as a reader
  following links does: Python, Plotly and the worker's caches stay, so the module boots Python once. ``visit``
  falls back to a full load (``page.goto``) when the page is not yet on the site with Python ready. After each
  test the page gets its viewport back; a test that fails, or leaves the page otherwise changed (the dark colour
  scheme, an error banner, Python not ready), closes it: the next test starts on a new page.

Tests wait on visible state (``expect(...)``), never on sleeps.
"""

from __future__ import annotations

import http.server
import os
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
from playwright.sync_api import expect

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("SD_SITE") or ROOT / "site").resolve()
ZENSICAL_SITE = Path(os.environ.get("SD_ZENSICAL_SITE") or ROOT / "site-zensical").resolve()
PREFIX = "/lab/"
# make site builds for `make serve`; the sitemap's origin is rewritten to this server's, as SITE_URL would.
BUILT_FOR = "http://127.0.0.1:8000/"
CHROMIUM = "/usr/bin/chromium"
HOLD_S = 120  # the longest a held request waits for release()
CHARTS_MS = 60_000  # Python's start-up plus Plotly's load, on a busy test machine
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-unsafe-swiftshader",
]


class _Handler(http.server.SimpleHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the test log shows the browser console instead

    def translate_path(self, path: str) -> str:
        clean = path.split("?", 1)[0].split("#", 1)[0]
        if not clean.startswith(PREFIX):
            return str(Path(self.directory) / "__outside_the_site__")
        return super().translate_path("/" + path[len(PREFIX) :])

    def _send(self, body: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        self.server.requests.append(path)
        if any(path.endswith(suffix) for suffix in self.server.blocked):
            self.send_error(503, "blocked by the test")
            return
        if any(path.endswith(suffix) for suffix in self.server.dropped):
            self.close_connection = True  # no answer at all: the browser's fetch fails as it does offline
            return
        if any(path.endswith(suffix) for suffix in self.server.held):
            self.server.released.wait(timeout=HOLD_S)
        replaced = [body for suffix, body in self.server.replaced.items() if path.endswith(suffix)]
        if replaced:
            self._send(replaced[0], self.guess_type(path))
            return
        if path == PREFIX + "sitemap.xml":
            body = (Path(self.directory) / "sitemap.xml").read_bytes()
            self._send(body.replace(BUILT_FOR.encode(), self.server.base.encode()), "application/xml")
            return
        super().do_GET()


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    blocked: set[str]
    dropped: set[str]
    held: set[str]
    released: threading.Event
    replaced: dict[str, bytes]
    requests: list[str]
    base: str

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A test that ends closes its browser context, cutting off downloads in flight (a service worker filling
        # its cache, say): that is not the server's error. Anything else is printed as usual.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


# For a test that blocks or holds files: a fresh browser context that runs no service worker and has nothing in
# its HTTP cache (see the module docstring).
no_service_worker = pytest.mark.fresh_context
# For a page's own test file: its tests share one page, and visit() moves it by instant navigation (see above).
shared_page = pytest.mark.shared_page
with_service_worker = pytest.mark.browser_context_args(service_workers="allow")
SERVICE_WORKER_HINT = "a service worker or a shared cache could answer: mark the test @no_service_worker (conftest)"
# Paths every boot asks the server for, whatever the browser has cached (js/runtime/worker.js fetches the core's
# manifest with cache: "no-cache"): holding one keeps any page in its booting state, in a warm context too.
MANIFEST = "core/manifest.json"
ALWAYS_ASKED = {MANIFEST}


@dataclass
class SiteServer:
    """The running server: ``site`` (the folder served), ``base`` URL, ``origin``, switches to block (503), drop
    (no answer), hold or replace paths, and the paths requested so far."""

    httpd: _Server
    site: Path
    base: str
    origin: str
    # Set per test by the ``page`` fixture: whether a service worker may answer the test's requests, and whether its
    # browser context is the shared warm one, whose HTTP cache may answer them.
    service_workers: bool = True
    warm: bool = False

    @property
    def requests(self) -> list[str]:
        return self.httpd.requests

    def _check(self, action: str, suffixes: tuple[str, ...]) -> None:
        if self.service_workers or (self.warm and not set(suffixes) <= ALWAYS_ASKED):
            raise RuntimeError(f"server.{action}: {SERVICE_WORKER_HINT}")

    def block(self, *suffixes: str) -> None:
        self._check("block", suffixes)
        self.httpd.blocked.update(suffixes)

    def drop(self, *suffixes: str) -> None:
        self._check("drop", suffixes)
        self.httpd.dropped.update(suffixes)

    def unblock(self) -> None:
        self.httpd.blocked.clear()
        self.httpd.dropped.clear()

    def hold(self, *suffixes: str) -> None:
        self._check("hold", suffixes)
        self.httpd.released.clear()
        self.httpd.held.update(suffixes)

    def release(self) -> None:
        self.httpd.held.clear()
        self.httpd.released.set()

    def replace(self, suffix: str, body: bytes) -> None:
        self.httpd.replaced[suffix] = body

    def restore(self) -> None:
        self.httpd.replaced.clear()


@contextmanager
def serve(site: Path, build: str) -> Iterator[SiteServer]:
    """Serve the built ``site`` under PREFIX on a free loopback port; ``build`` is the command that builds it."""
    if not (site / "index.html").exists() or not (site / "core" / "manifest.json").exists():
        pytest.fail(f"{site.name}/ is not built: run `{build}` (make test-browser does it)")
    httpd = _Server(("127.0.0.1", 0), partial(_Handler, directory=str(site)))
    httpd.blocked = set()
    httpd.dropped = set()
    httpd.held = set()
    httpd.released = threading.Event()
    httpd.replaced = {}
    httpd.requests = []
    origin = f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.base = origin + PREFIX
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield SiteServer(httpd=httpd, site=site, base=httpd.base, origin=origin)
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="session")
def server() -> Iterator[SiteServer]:
    with serve(SITE, "make site") as running:
        yield running


@pytest.fixture(scope="session")
def zensical_server() -> Iterator[SiteServer]:
    with serve(ZENSICAL_SITE, "make site-zensical") as running:
        yield running


@pytest.fixture(scope="session")
def base_url(server: SiteServer) -> str:
    return server.base


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    return {**browser_context_args, "service_workers": "block"}  # see the module docstring


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make chromium` (as root) or `sudo apt-get install chromium`")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "headless": True, "args": CHROMIUM_FLAGS}


def fresh_context_needed(request: pytest.FixtureRequest) -> bool:
    """A test gets its own browser context when it asks for ``context``, allows a service worker, or is marked
    ``@no_service_worker``; every other test shares a warm one (see ``warm_contexts``)."""
    marker = next(request.node.iter_markers("browser_context_args"), None)
    allows_worker = (marker.kwargs if marker else {}).get("service_workers", "block") != "block"
    return allows_worker or "context" in request.fixturenames or request.node.get_closest_marker("fresh_context")


@pytest.fixture(scope="session")
def warm_contexts(browser: Any, browser_context_args: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Browser contexts shared by the tests that need no fresh one, one per site and set of context options.

    Sharing one keeps what a reader's browser keeps between visits: the HTTP cache and, in Cache Storage, the
    Python memory snapshot that a fresh boot stores (js/runtime/worker.js), so the session's later pages boot from
    it, as a reader's repeat visits do, in about a third of the time. Each test still opens its own page, and the
    ``page`` fixture clears the origin's local and session storage (Material keeps the colour scheme there) and the
    permissions after it. Fresh boots stay tested: by the tests that get a fresh context, and by test_offline.py,
    which checks that a repeat visit and a fresh boot give the same results."""
    contexts: dict[str, Any] = {}

    def get(origin: str, options: dict[str, Any]) -> Any:
        key = origin + repr(sorted(options.items()))
        if key not in contexts:
            contexts[key] = browser.new_context(**{**browser_context_args, **options})
        return contexts[key]

    yield {"get": get}
    for context in contexts.values():
        context.close()


@pytest.fixture(scope="module")
def shared_pages() -> Iterator[dict[str, Any]]:
    """The page a ``@shared_page`` module's tests share, per site and set of context options; closed at the module's
    end. The ``page`` fixture takes it out for a test and puts it back only if the test left it as it found it."""
    pages: dict[str, Any] = {}
    yield pages
    for page in pages.values():
        if not page.is_closed():
            page.close()


# True when the page shows a page of the site as a test expects to find it: Python ready, no error banner, the
# light colour scheme (a test that switched it leaves the document in the dark one).
LEFT_AS_FOUND = """() => document.querySelector('[data-sd-status]')?.dataset.sdStatus === 'ready'
    && !document.querySelector('.sd-error')
    && (document.body.dataset.mdColorScheme || 'default') === 'default'
    && !!window.document$"""


STARTED = "() => document.querySelector('[data-sd-status]')?.dataset.sdStatus !== 'loading'"


def page_left_as_found(page: Any) -> bool:
    if page.is_closed():
        return False
    if page.viewport_size != page.sd_viewport:  # a test of a phone's layout: the page lays out again at this size
        page.set_viewport_size(page.sd_viewport)
    if page.url.startswith(page.sd_base):  # a boot under way is cheaper to finish than to start again
        page.wait_for_function(STARTED, timeout=CHARTS_MS)
    page.emulate_media(reduced_motion="no-preference")  # the context's own setting, whatever a test emulated
    return bool(page.evaluate(LEFT_AS_FOUND))


def visit(page: Any, url: str) -> None:
    """Open ``url`` (relative to the site's root, query and all) in ``page``.

    A shared page (``@shared_page``) that already shows a page of the site with Python ready gets there by instant
    navigation, the way a reader following a link does, so nothing boots again; any other page loads the URL.
    Material fetches a page only when the path changes, so a visit to the path already shown first goes through
    another page (the cost page, whose widget answers in milliseconds, or correct/ from there)."""
    target = urljoin(page.sd_base, url)
    on_site = page.sd_shared and page.url.startswith(page.sd_base)
    if on_site:  # a boot under way (a test that did not wait for Python) finishes sooner than a new one
        page.wait_for_function(STARTED, timeout=CHARTS_MS)
    if not (on_site and page.evaluate(LEFT_AS_FOUND)):
        page.goto(target)
        return
    if urlsplit(target).path == urlsplit(page.url).path:
        hop = "correct/" if urlsplit(page.url).path.endswith("/cost/") else "cost/"
        _navigate_instantly(page, urljoin(page.sd_base, hop))
    _navigate_instantly(page, target)


def _navigate_instantly(page: Any, target: str) -> None:
    # The old page's widgets are marked: the new page is in place once none of them is left in the document, and
    # a marker on window tells that Material swapped the content rather than the browser loading a new document.
    page.evaluate(
        """(href) => {
            window.__sdVisit = true;
            document.querySelectorAll('.sd-widget').forEach((w) => w.setAttribute('data-sd-old', ''));
            const link = Object.assign(document.createElement('a'), {href});
            document.body.append(link);
            link.click();
            link.remove();
        }""",
        target,
    )
    # The page's widgets may rewrite the query at once (a value clamped, a default added): the path is what counts.
    expect(page).to_have_url(re.compile(re.escape(target.split("?")[0]) + r"(\?[^#]*)?(#.*)?$"))
    expect(page.locator("[data-sd-old]")).to_have_count(0)
    assert page.evaluate("window.__sdVisit === true"), f"the link to {target} loaded a new document"


@dataclass
class BrowserLog:
    """Everything the browser said during one test, and the lines a test declared it expects."""

    lines: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    allowed: list[re.Pattern[str]] = field(default_factory=list)

    def allow(self, pattern: str) -> None:
        """Expect console errors matching ``pattern`` (a regex) in this test."""
        self.allowed.append(re.compile(pattern))

    def unexpected_errors(self) -> list[str]:
        return [e for e in self.errors if not any(p.search(e) for p in self.allowed)]


@pytest.fixture
def browser_log() -> BrowserLog:
    return BrowserLog()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"sd_report_{report.when}", report)


@pytest.fixture
def page(browser_log: BrowserLog, request: pytest.FixtureRequest) -> Iterator[Any]:
    # The site this test visits: the Zensical build when the test asks for it, else the mkdocs build.
    server: SiteServer = request.getfixturevalue(
        "zensical_server" if "zensical_server" in request.fixturenames else "server"
    )
    marker = next(request.node.iter_markers("browser_context_args"), None)
    options = dict(marker.kwargs) if marker else {}
    fresh = fresh_context_needed(request)
    server.service_workers = options.get("service_workers", "block") != "block"
    server.warm = not fresh
    if fresh:
        context = request.getfixturevalue("context")
    else:
        context = request.getfixturevalue("warm_contexts")["get"](server.origin, options)

    def on_console(message: Any) -> None:
        line = f"[{message.type}] {message.text}"
        browser_log.lines.append(line)
        if message.type == "error":
            browser_log.errors.append(line)

    def on_page_error(error: Any) -> None:
        line = f"[pageerror] {error}"
        browser_log.lines.append(line)
        browser_log.errors.append(line)

    def on_request(req: Any) -> None:
        url = req.url
        if url.startswith(("data:", "blob:", "about:")):
            return
        if not url.startswith(server.origin + "/"):
            browser_log.foreign.append(url)

    context.on("request", on_request)
    shared = not fresh and request.node.get_closest_marker("shared_page") is not None
    store: dict[str, Any] = request.getfixturevalue("shared_pages") if shared else {}
    key = server.origin + repr(sorted(options.items()))
    if key in store and not store[key].is_closed():
        page = store.pop(key)
    else:
        page = context.new_page()
        page.sd_viewport = page.viewport_size
    page.sd_base = server.base
    page.sd_shared = shared
    page.on("console", on_console)
    page.on("pageerror", on_page_error)
    yield page
    server.unblock()
    server.release()
    server.restore()
    context.remove_listener("request", on_request)
    report = getattr(request.node, "sd_report_call", None)
    if not page.is_closed():
        page.remove_listener("console", on_console)
        page.remove_listener("pageerror", on_page_error)
    if not fresh:
        if not page.is_closed() and page.url.startswith(server.origin + "/"):
            page.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
        context.clear_permissions()
        if shared and report is not None and report.passed and page_left_as_found(page):
            store[key] = page
        elif not page.is_closed():
            page.close()

    if report is not None and report.failed:
        print("\n--- browser console ---\n" + "\n".join(browser_log.lines or ["(empty)"]))
    problems = []
    if browser_log.foreign:
        problems.append("requests left the site's origin:\n  " + "\n  ".join(browser_log.foreign))
    if browser_log.unexpected_errors():
        problems.append("console errors:\n  " + "\n  ".join(browser_log.unexpected_errors()))
    if problems:
        print("\n--- browser console ---\n" + "\n".join(browser_log.lines))
        pytest.fail("\n".join(problems))


def expect_plotly(page: Any) -> None:
    """Plotly (a partial bundle, js/runtime/charts.js) has loaded: every chart on the page is drawn by it."""
    expect(page.locator("html")).to_have_attribute("data-sd-charts", "plotly", timeout=CHARTS_MS)


def expect_query(page: Any, **values: str) -> None:
    """The address bar's query holds each ``key=value`` (in any order). A slider's burst of changes is written to the
    link once the controls rest (js/ui/url.js), so this waits for it."""
    for key, value in values.items():
        expect(page).to_have_url(re.compile(rf"[?&]{re.escape(key)}={re.escape(value)}(&|#|$)"))


def renders(chart: Any) -> int:
    """How many times Plotly has drawn ``chart`` (a locator of one .sd-chart)."""
    return int(chart.get_attribute("data-sd-renders") or 0)


def wait_for_renders(chart: Any, before: int) -> None:
    """Wait until ``chart`` has been drawn again after it counted ``before`` draws: a redraw lands after the metrics
    of the same result, so a one-shot comparison right after waiting for a metric would race it."""
    chart.page.wait_for_function(
        "([el, n]) => Number(el.dataset.sdRenders || 0) > n", arg=[chart.element_handle(), before], timeout=CHARTS_MS
    )


def js_number(value: float) -> str:
    """How JavaScript's String() writes a JSON number, as the widgets store metrics in data-value: both languages
    print the shortest round-trip digits, and JavaScript drops ".0" from an integer."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
# Serious and critical findings of axe-core in ``within`` (a CSS selector; the whole document when None).
# axe-core reads colours as they are at that moment: a CSS transition under way (the theme's header tabs fade in over
# 250 ms when a scroll back to the top shows them) would be read half-transparent. It waits for the finite ones.
AXE_RUN = """async (within) => {
  const finite = document.getAnimations().filter((a) => a.effect?.getComputedTiming().endTime !== Infinity);
  await Promise.all(finite.map((a) => a.finished.catch(() => null)));
  return (await axe.run(within ? document.querySelector(within) : document, {resultTypes: ['violations']})).violations
    .filter(v => v.impact === 'serious' || v.impact === 'critical')
    .map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map(n => n.target.join(' '))}));
}"""


# A call that keeps the page's Python worker busy far longer than ui/widget.js's BUSY_MS (400 ms) on any machine:
# sampling.explore with about four times the Sampling page's work (which takes 1-2 s here). The worker answers one call
# at a time, so whatever the page asks next waits behind it; end_slow_call waits until it has ended.
SLOW_CALL = """(args) => import(document.querySelector('link[rel=modulepreload][href$="js/runtime/python.js"]').href)
  .then(({ python }) => { window.__sdSlow = python.call("sampling.explore", args); })"""


def queue_slow_call(page: Any) -> None:
    page.evaluate(SLOW_CALL, {"rounds": 2000, "samples": 5000})  # the handler's defaults otherwise


def end_slow_call(page: Any) -> None:
    page.evaluate("() => window.__sdSlow")


def axe_violations(page: Any, within: str | None = None) -> list[str]:
    """axe-core (from npm, injected once per document) on the page as it is now: serious or critical findings."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    found: list[dict[str, Any]] = page.evaluate(AXE_RUN, within)
    return [f"{v['impact']} {v['id']}: {v['help']} at {v['nodes']}" for v in found]


def switch_scheme(page: Any) -> str:
    """Click Material's palette toggle and wait until the colour scheme has changed; returns the new scheme."""
    body = page.locator("body")
    before = body.get_attribute("data-md-color-scheme") or ""
    page.locator("label.md-header__button[for^='__palette']:visible").click()
    expect(body).not_to_have_attribute("data-md-color-scheme", before)
    return body.get_attribute("data-md-color-scheme") or ""
