"""Site-wide browser tests: every page, every widget, every slider, both colour schemes.

The pages are discovered from the built ``site/sitemap.xml`` (``make site``), so a new page is covered without
touching this file; ``test_sitemap_lists_every_page_in_the_nav`` keeps that discovery honest. Page-specific
behaviour (what a slider should compute, Run, Step, URL state) is tested in each page's own file; here every page
must merely reach ready, go live, stay accessible and keyboard-operable, survive instant navigation, paint
without Python, and recover from a failed start-up. The accessibility check of every page (axe-core, light and
dark) lives here: page files do not repeat it. The live checks of every page share one page that goes from page to
page by instant navigation (``test_every_page_goes_live_and_is_accessible_and_keyboard_operable``, one boot for
them all), the boot's first paint is checked per page with Python held back, and the instant-navigation test
visits every page in one document.

All waits are on visible state (``expect`` / ``wait_for_function``); the strict ``page`` fixture fails a test on
any console error or request that leaves the site's origin.
"""

from __future__ import annotations

import itertools
import json
import posixpath
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from conftest import (
    BUILT_FOR,
    MANIFEST,
    SITE,
    SiteServer,
    _navigate_instantly,
    axe_violations,
    expect_plotly,
    js_number,
    no_service_worker,
    shared_page,
    visit,
)
from playwright.sync_api import expect

from specdec_core import web

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "site_assets"))
import prerender  # site_assets/prerender.py: the copy's viewport and the script that makes it

pytestmark = pytest.mark.browser

READY = "Python is ready"
# Start-up is Pyodide's boot plus the wheel (about 2.5 s here); the margin covers a loaded 2-core machine.
BOOT_MS = 60_000
NOT_BUILT = "(site not built)"
# How Chromium logs a file that server.block() refused.
BLOCKED_503 = r"^\[error\] Failed to load resource: the server responded with a status of 503"
# Every error the page shows in a banner it also logs, prefixed so: a test that provokes one allows it by its text.
LAB_ERROR = r"^\[error\] \[lab\] "


# --- discovery ----------------------------------------------------------------------------------------------


def site_pages() -> list[str]:
    """Every page in the sitemap, as a path relative to the site root ("" is the home page)."""
    sitemap = SITE / "sitemap.xml"
    if not sitemap.exists():
        # Collected before `make site`: one parameter whose test fails in the `server` fixture with the hint.
        return [NOT_BUILT]
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = [el.text or "" for el in ET.parse(sitemap).getroot().findall("s:url/s:loc", ns)]
    return [loc.removeprefix(BUILT_FOR) for loc in locs]


def page_html(path: str) -> str:
    file = SITE / path / "index.html"
    return file.read_text("utf-8") if file.exists() else ""


def build_time_figures(path: str) -> list[bool]:
    """Per widget placeholder on the page, in order: did the build embed a result holding a figure?"""
    chunks = re.split(r'<div\b[^>]*\bclass="(?:[^"]*\s)?sd-widget(?:\s[^"]*)?"[^>]*>', page_html(path))[1:]
    found = []
    for chunk in chunks:
        initial = re.match(
            r"\s*(?:<template data-sd-settings\b[^>]*>.*?</template>\s*)?"
            r"<template data-sd-initial\b[^>]*>(.*?)</template>",
            chunk,
            re.DOTALL,
        )
        result = json.loads(initial.group(1)) if initial else None
        found.append(isinstance(result, dict) and ("figure" in result or "figures" in result))
    return found


PAGES = site_pages()
# Pages with at least one widget placeholder, and those where the build drew at least one chart.
WIDGET_PAGES = [p for p in PAGES if build_time_figures(p)] or [NOT_BUILT]
CHART_PAGES = [p for p in PAGES if any(build_time_figures(p))] or [NOT_BUILT]
# Pages with a deferred section (a long code listing in <div class="sd-later" markdown>).
LATER_PAGES = [p for p in PAGES if 'class="sd-later"' in page_html(p)] or [NOT_BUILT]


def page_id(path: str) -> str:
    return path.strip("/") or "home"


# --- helpers ------------------------------------------------------------------------------------------------


def open_page(page: Any, server: SiteServer, path: str) -> None:
    page.goto(server.base + path)


def expect_ready(page: Any) -> None:
    status = page.locator("[data-sd-status]")
    expect(status).to_have_attribute("data-sd-status", "ready", timeout=BOOT_MS)
    expect(status).to_have_text(READY)


def expect_widgets_live(page: Any) -> int:
    """Every widget on the current page is mounted and has answered a live call; returns how many there are."""
    widgets = page.locator(".md-content .sd-widget[data-widget]")
    count: int = widgets.count()
    for i in range(count):
        widget = widgets.nth(i)
        expect(widget).to_have_attribute("data-sd-mounted", "true")
        expect(widget).to_have_attribute("data-sd-live", "true", timeout=BOOT_MS)
    expect_plotly(page)
    return count


def expect_no_button_sends_a_chart_away(page: Any) -> None:
    """Every chart has Plotly's tool bar, and none offers "Share chart...": plotly.js 4.1.1 shows that button by default
    (showSendToCloud), and it offers to upload the chart to Plotly Cloud, a third party."""
    charts = page.locator(".md-content .sd-chart.js-plotly-plot")
    assert charts.count() > 0, "no chart drawn by Plotly on a chart page"
    for i in range(charts.count()):
        chart = charts.nth(i)
        assert chart.locator(".modebar-btn").count() > 0, f"chart {i} has no tool bar"
        titles = chart.locator(".modebar-btn").evaluate_all("buttons => buttons.map((b) => b.dataset.title)")
        assert not [t for t in titles if "share" in t.lower() or "cloud" in t.lower()], f"chart {i}: {titles}"


# Per opened "numbers" disclosure (js/ui/numbers.js): its widget, and per table the count of body rows and of
# empty header cells.
CHART_TABLES = """(d) => [d.closest('.sd-widget').dataset.widget,
  [...d.querySelectorAll('table')].map((t) => [t.tBodies[0].rows.length,
    [...t.querySelectorAll('th')].filter((th) => !th.textContent.trim()).length])]"""


def expect_charts_readable_as_tables(page: Any) -> None:
    """Every widget with charts (but the 3D lab, which lists its rounds itself) offers their numbers as tables, for
    a reader who cannot hover a chart: opened, the disclosure holds tables (a chart with no points yet, such as the
    Playground's before a round, has none), none empty and no header cell blank (a token such as "<end>" read as
    markup would be), and the summary says whether there is one table or several. Left open, so that axe then
    checks the tables too."""
    widgets = page.locator(".md-content .sd-widget[data-widget]:has(.sd-chart):not([data-widget=lab3d])")
    for i in range(widgets.count()):
        details = widgets.nth(i).locator(":scope > details.sd-data")
        expect(details).to_have_count(1)
        details.locator("summary").click()
        expect(details).to_have_attribute("data-sd-tables", re.compile(r"^[1-9]"))
        widget, tables = details.evaluate(CHART_TABLES)
        assert tables, f"{widget}: no table"
        assert all(rows > 0 and blank == 0 for rows, blank in tables), f"{widget}: {tables}"
        # A lone chart's summary counts its tables (Draft's chart has a panel, so a table, per step).
        summary = details.locator("summary").inner_text()
        charts = widgets.nth(i).locator(".sd-chart").count()
        expected = "The chart's numbers, as " + ("a table" if len(tables) == 1 else "tables")
        assert summary == (expected if charts == 1 else "The charts' numbers, as tables"), f"{widget}: {summary}"


def chart_renders(widget: Any) -> int:
    total: int = widget.evaluate(
        "el => [...el.querySelectorAll('.sd-chart')].reduce((n, c) => n + Number(c.dataset.sdRenders || 0), 0)"
    )
    return total


def toggle_palette(page: Any) -> None:
    page.locator("label.md-header__button[for^='__palette']:visible").click()


def follow_nav_link(page: Any, server: SiteServer, path: str) -> None:
    """Click the visible link to ``path`` the way a reader would (instant navigation, no page.goto)."""
    target = server.base + path
    marked = page.evaluate(
        """target => {
            document.querySelectorAll('[data-sd-test-link]').forEach(a => a.removeAttribute('data-sd-test-link'));
            const links = [...document.querySelectorAll('a[href]')].filter(a =>
                a.href.split('#')[0] === target && a.checkVisibility() && a.getBoundingClientRect().width > 0);
            const nav = links.find(a => a.closest('.md-tabs, .md-nav--primary'))
                || links.find(a => !a.hash) || links[0];
            if (!nav) return false;
            nav.setAttribute('data-sd-test-link', '');
            return true;
        }""",
        target,
    )
    assert marked, f"no visible link to {path or 'home'} on {page.url}"
    # The old page's widgets are marked: the new page is in place once none of them is left in the document.
    page.evaluate("() => document.querySelectorAll('.sd-widget').forEach(w => w.setAttribute('data-sd-old', ''))")
    page.locator("[data-sd-test-link]").click()
    # A link may point at a section of the page (bonus.md#how-often-and-how-much): the page is what counts.
    expect(page).to_have_url(re.compile(re.escape(target) + r"(\?[^#]*)?(#.*)?$"))
    expect(page.locator("[data-sd-old]")).to_have_count(0)
    expect(page.locator(".md-content .sd-widget[data-widget]")).to_have_count(len(build_time_figures(path)))


def change_a_control(page: Any, drawn_by: str = ".main-svg") -> bool:
    """Move the first slider of a widget that has a drawn chart one step and expect that widget's charts to redraw.

    Returns False when the page has no such slider (a page of tables, say)."""
    sliders = page.locator(f".md-content .sd-widget:has(.sd-chart {drawn_by}) input[type=range]:visible")
    if sliders.count() == 0:
        return False
    slider = sliders.first
    widget = slider.locator("xpath=ancestor::div[contains(@class, 'sd-widget')][1]")
    before = chart_renders(widget)
    at_max = slider.evaluate("el => Number(el.value) >= Number(el.max)")
    slider.focus()
    slider.press("ArrowLeft" if at_max else "ArrowRight")
    widget_handle = widget.element_handle()
    page.wait_for_function(
        """([el, before]) => [...el.querySelectorAll('.sd-chart')]
            .reduce((n, c) => n + Number(c.dataset.sdRenders || 0), 0) > before""",
        arg=[widget_handle, before],
    )
    return True


# --- tests --------------------------------------------------------------------------------------------------


@shared_page
def test_sitemap_lists_every_page_in_the_nav(page: Any, server: SiteServer) -> None:
    """Discovery is complete: every page the navigation links to is in the sitemap these tests iterate over."""
    visit(page, "")
    hrefs: list[str] = page.evaluate(
        "() => [...new Set([...document.querySelectorAll('.md-nav--primary a.md-nav__link[href]')]"
        ".map(a => a.href.split('#')[0]))]"
    )
    linked = {h.removeprefix(server.base) for h in hrefs if h.startswith(server.base)}
    assert linked, "the navigation has no links"
    assert linked <= set(PAGES), f"pages in the nav but not in the sitemap: {sorted(linked - set(PAGES))}"


# The search results whose text still holds TeX source (a \( or \[ delimiter).
RESULTS_WITH_TEX_SOURCE = r"""() => [...document.querySelectorAll('.md-search-result__article')]
  .map((a) => a.innerText).filter((t) => /\\[(\[]/.test(t))"""


@shared_page
def test_search_finds_a_page_and_opens_it(page: Any, server: SiteServer) -> None:
    """Material's search, served from the site: typing a word lists the pages that hold it, with their formulas
    typeset, and a result opens.

    Both queries are typed in one opening of the search, before a result opens another page: mkdocs-material 9.8.2
    closes the search 125 ms after the location changes, so a search opened right after an instant navigation (as
    a test does, faster than a reader) was closed under the box's focus, and Escape then did nothing."""
    visit(page, "")
    page.keyboard.press("/")  # Material's shortcut: focus the search box
    query = page.locator(".md-search__input")
    expect(query).to_be_focused()

    # A word the search highlights inside a formula ("accepted" in the Draft page's \text{all } \gamma \text{ accepted})
    # would split its source: the formula is typeset all the same.
    # Material reads the query on key events, so a word typed letter by letter is searched for at each prefix, and the
    # lists for "r", "re", "res" rank other pages first. Each query is filled whole and read once, on one key press.
    query.fill("accepted")
    query.press("End")
    riskier = page.locator(".md-search-result__article", has_text="Why longer drafts are riskier")
    expect(riskier).to_have_count(1)
    expect(riskier.locator(".katex").first).to_be_attached()  # KaTeX loads with the first results listed
    assert page.evaluate(RESULTS_WITH_TEX_SOURCE) == []

    query.fill("residual")
    query.press("End")
    results = page.locator(".md-search-result__item a[href]")
    # Every link in a list carries the query it answers (?h=...): wait for the list that answers this one, not the last.
    expect(page.locator(".md-search-result__item a[href*='?h=residual']").first).to_be_attached()
    hrefs = page.evaluate("() => [...document.querySelectorAll('.md-search-result__item a[href]')].map(a => a.href)")
    assert hrefs and all(h.startswith(server.base) for h in hrefs), hrefs
    assert any(h.removeprefix(server.base).split("?")[0] == "correct/" for h in hrefs), hrefs
    # The results quote each section's text, formulas too: those are typeset (js/math.js), never left as TeX source.
    expect(page.locator(".md-search-result .katex").first).to_be_attached()
    assert page.evaluate(RESULTS_WITH_TEX_SOURCE) == []
    results.first.click()  # the search closes, as it does for a reader who picks a result
    expect(page).to_have_url(re.compile(re.escape(hrefs[0].split("?")[0])))
    expect(page.locator("#__search")).not_to_be_checked()
    expect(query).not_to_be_focused()
    # search.highlight marks the query on the page it opens
    expect(page.locator(".md-content mark").first).to_have_text(re.compile("residual", re.IGNORECASE))


# The theme's own search worker (mkdocs-material 9.8 names it by a hash), and the lab's stand-in that holds it back.
THEME_SEARCH_WORKER = re.compile(r"/assets/javascripts/workers/search\.[0-9a-f]+\.min\.js$")
SEARCH_LATER = re.compile(r"/js/search-later\.js$")


def theme_search_requested(server: SiteServer) -> bool:
    return any(THEME_SEARCH_WORKER.search(path) for path in server.requests)


@no_service_worker  # an empty HTTP cache: every script the page and its workers load reaches the server
def test_search_index_is_built_once_python_is_ready(page: Any, server: SiteServer) -> None:
    """The theme builds its search index (a lunr index of every page) in its worker, CPU that Pyodide's boot
    needs on a small machine: that worker starts once Python has settled (js/search-later.js), the theme's
    set-up message waiting meanwhile, and search then works."""
    server.requests.clear()
    server.hold(MANIFEST)  # the core's manifest waits: Python cannot be ready
    try:
        # The page loads (page.goto waits for the load event), the theme fetches its index, the stand-in starts.
        with page.expect_request(SEARCH_LATER), page.expect_response(re.compile(r"/search/search_index\.json$")):
            open_page(page, server, "draft/")
        expect(page.locator("[data-sd-status]")).to_have_attribute("data-sd-status", "loading")
        # The theme created its worker as its bundle ran, before the load event: only the stand-in came.
        assert not theme_search_requested(server), server.requests
        with page.expect_request(THEME_SEARCH_WORKER):
            server.release()
    finally:
        server.release()
    expect_ready(page)
    page.keyboard.press("/")
    page.locator(".md-search__input").press_sequentially("residual")
    expect(page.locator(".md-search-result__item a[href]").first).to_be_visible()


@no_service_worker
def test_search_works_at_once_while_python_boots(page: Any, server: SiteServer) -> None:
    """A reader who opens the search box while Python still boots gets results then, not once Python is ready."""
    server.requests.clear()
    server.hold(MANIFEST)
    try:
        open_page(page, server, "draft/")
        page.wait_for_load_state("load")
        with page.expect_request(THEME_SEARCH_WORKER):
            page.keyboard.press("/")  # Material's shortcut: focus the search box
        page.locator(".md-search__input").press_sequentially("residual")
        expect(page.locator(".md-search-result__item a[href]").first).to_be_visible()
        expect(page.locator("[data-sd-status]")).to_have_attribute("data-sd-status", "loading")
    finally:
        server.release()


@shared_page
def test_python_in_the_page_runs_the_precompiled_core(page: Any, server: SiteServer) -> None:
    """The worker runs CPython 3.14 (Pyodide 314) and imported specdec_core from the bytecode the build shipped."""
    visit(page, "")
    expect_ready(page)
    info = page.evaluate("SDLab.call('runtime.info', {})")
    assert info["python"].startswith("3.14."), info
    assert info["platform"] == "emscripten", info
    assert info["modules"] >= 8, info  # the package and the modules web imports
    assert info["precompiled"] is True, info


def widget_pages_for_navigation() -> list[str]:
    return [p for p in WIDGET_PAGES if p != ""] or [NOT_BUILT]


def pages_in_reading_order() -> list[str]:
    """The pages after Home as a reader meets them, following each page's "Next" link in the footer; every page is
    reached, so each next one always has a visible link."""
    order: list[str] = []
    path = ""
    while True:
        found = re.search(r'<a href="([^"]*)" class="md-footer__link md-footer__link--next"', page_html(path))
        if not found:
            break
        path = posixpath.normpath(posixpath.join(path, found.group(1).removeprefix("./"))) + "/"
        assert path not in order and path in PAGES, f"the footer's Next link goes to {path!r} after {order}"
        order.append(path)
    assert sorted(order) == sorted(p for p in PAGES if p != ""), f"the Next links miss pages: {order}"
    return order


def test_instant_navigation_keeps_widgets_working(page: Any, server: SiteServer) -> None:
    """Home -> every page in reading order (its "Next" link) -> home, by clicking links, in one document and with one
    worker (one boot for the lot): each page's widgets mount, go live and redraw when a slider moves, whatever
    page came before. (Home after a page and back, ten times over, is test_instant_navigation_back_and_forth_...)"""
    open_page(page, server, "")
    expect_ready(page)
    home_widgets = expect_widgets_live(page)
    page.evaluate("window.__sdSameDocument = true")

    previous = "home"
    for path in pages_in_reading_order():
        follow_nav_link(page, server, path)
        assert expect_widgets_live(page) > 0 or path not in WIDGET_PAGES, f"{path} after {previous}"
        change_a_control(page)  # a page of tables has no slider beside a chart: then nothing to redraw
        expect(page.locator(".sd-error")).to_have_count(0)
        previous = path

    follow_nav_link(page, server, "")
    assert expect_widgets_live(page) == home_widgets, f"home after {previous}"
    # The home page's lab always has a slider and a chart.
    assert change_a_control(page), f"no slider redrew a chart on home after visiting {previous}"

    assert page.evaluate("window.__sdSameDocument") is True, "a link click reloaded the page (no instant navigation)"
    expect(page.locator("[data-sd-status]")).to_have_text(READY)
    expect(page.locator(".sd-error")).to_have_count(0)


def widgets_on(path: str) -> set[str]:
    return set(re.findall(r'<div\b[^>]*\bdata-widget="([a-z0-9-]+)"', page_html(path)))


def placeholders(path: str, name: str) -> int:
    return len(re.findall(rf'<div\b[^>]*\bdata-widget="{name}"', page_html(path)))


@no_service_worker
def test_a_page_loads_its_own_widgets_and_imports_the_rest_after_navigation(
    page: Any, server: SiteServer, browser_log: Any
) -> None:
    """The home page loads only its own widget modules. Instant navigation to a page with other widgets imports
    theirs; if one fails to load, every one of its widgets says so (two share a module here: the second had been
    left an empty box), and Retry loads it once it is reachable."""
    home = widgets_on("")
    others = [p for p in widget_pages_for_navigation() if widgets_on(p) and not widgets_on(p) & home]
    assert home and others, "the home page and another page should hold widgets of their own"
    twice = [(p, n) for p in others for n in sorted(widgets_on(p)) if placeholders(p, n) >= 2]
    assert twice, "a page of its own widgets should hold two widgets of one module"
    path, name = twice[0]
    requested: set[str] = set()  # widget modules the browser asked for
    retried: list[str] = []  # those asked for again, under a fresh URL

    def seen(request: Any) -> None:
        if "/js/widgets/" in request.url:
            file, _, query = request.url.rsplit("/", 1)[-1].partition("?")
            requested.add(file.removesuffix(".js"))
            if query:
                retried.append(f"{file.removesuffix('.js')}?{query}")

    page.on("request", seen)

    open_page(page, server, "")
    expect_ready(page)
    expect_widgets_live(page)
    assert requested == home, requested

    browser_log.allow(BLOCKED_503)
    browser_log.allow(LAB_ERROR + "This widget failed to load")  # the page reports what its banner shows
    server.block(f"js/widgets/{name}.js")
    try:
        follow_nav_link(page, server, path)
        alerts = page.locator(f'.sd-widget[data-widget="{name}"] > .sd-error[role=alert]')
        expect(alerts).to_have_count(placeholders(path, name))
        for alert in alerts.all():
            expect(alert.locator("strong")).to_have_text("This widget failed to load")
            expect(alert).to_contain_text(f"the {name} widget failed to load")
        alert = alerts.first
    finally:
        server.unblock()
    alert.get_by_role("button", name="Retry").click()
    expect_ready(page)
    expect_widgets_live(page)  # the widget whose module was blocked is mounted and answers too
    expect(page.locator(".sd-error")).to_have_count(0)
    assert widgets_on(path) <= requested, requested
    assert f"{name}?attempt=2" in retried, retried  # the second attempt asked for a fresh module URL


@no_service_worker
def test_blocked_runtime_shows_the_error_banner_and_retry_recovers(
    page: Any, server: SiteServer, browser_log: Any
) -> None:
    path = WIDGET_PAGES[0]
    # The one error expected: Chromium logs the 503 for the blocked file. Pyodide's own report is a warning.
    browser_log.allow(BLOCKED_503)
    browser_log.allow(LAB_ERROR + r"Python failed to start \(runtime\): the Python runtime \(pyodide\.asm\.wasm\)")
    server.block("pyodide.asm.wasm")
    try:
        open_page(page, server, path)
        status = page.locator("[data-sd-status]")
        expect(status).to_have_attribute("data-sd-status", "error", timeout=BOOT_MS)
        alert = page.locator(".sd-error[role=alert]")
        expect(alert.first).to_be_visible()
        expect(alert.first).to_contain_text("pyodide.asm.wasm")
        widgets = page.locator(".md-content .sd-widget[data-widget]")
        for i in range(widgets.count()):
            expect(widgets.nth(i)).not_to_have_attribute("data-sd-live", "true")
        # A control moved now cannot get its result: the widget says so where it stands, not only the banner above.
        widget = page.locator(".md-content .sd-widget").filter(has=page.locator("input[type=range]")).first
        slider = widget.locator("input[type=range]").first
        slider.focus()
        slider.press("ArrowRight")
        expect(widget.locator(":scope > .sd-pending")).to_have_text(
            "These settings need Python, which is not running (see the error above)."
        )
    finally:
        server.unblock()
    alert.first.get_by_role("button", name="Retry").click()
    expect_ready(page)
    expect_widgets_live(page)
    expect(page.locator(".sd-error")).to_have_count(0)


@no_service_worker
def test_a_download_that_gets_no_answer_is_named_in_plain_words(
    page: Any, server: SiteServer, browser_log: Any
) -> None:
    """The core archive gets no answer at all (as offline): the banner names the file and says the network did not
    answer; it had said only "Failed to fetch". Retry recovers once the server answers."""
    browser_log.allow(LAB_ERROR + r"Python failed to start \(core\): specdec_core-.*\.zip could not be downloaded")
    core = json.loads((server.site / "core" / "manifest.json").read_text("utf-8"))["file"]
    server.drop(f"core/{core}")  # the core archive only: Pyodide's standard library is a zip too
    try:
        open_page(page, server, WIDGET_PAGES[0])
        expect(page.locator("[data-sd-status]")).to_have_attribute("data-sd-status", "error", timeout=BOOT_MS)
        line = page.locator(".sd-error[role=alert] .sd-error__line").first
        expect(line).to_have_text(
            re.compile(r"^specdec_core-[\w.-]+\.zip could not be downloaded: the network did not answer \(.+\)$")
        )
    finally:
        server.unblock()
    page.locator(".sd-error[role=alert]").first.get_by_role("button", name="Retry").click()
    expect_ready(page)
    expect_widgets_live(page)
    expect(page.locator(".sd-error")).to_have_count(0)


def test_a_widget_of_the_page_left_never_writes_into_the_next_pages_link(page: Any, server: SiteServer) -> None:
    """Instant navigation moves the address to the next page before that page arrives. A widget of the page still
    on screen that changes in between (its module loaded late, a slider moved) leaves the next page's link alone:
    it once wrote its own state there, and the next page read the old page's gamma from it."""
    open_page(page, server, "cost/")
    expect_ready(page)
    expect_widgets_live(page)
    slider = page.locator('.sd-widget[data-widget="cost"]').get_by_role("slider", name="Batch size")
    shown = page.locator(f"output[for='{slider.get_attribute('id')}']")
    before = shown.text_content() or ""
    # What Material does on a click, before it fetches the next page.
    page.evaluate("() => history.pushState(history.state, '', new URL('../tuning/?gamma=99', location.href))")
    slider.focus()
    slider.press("ArrowRight")
    expect(shown).not_to_have_text(before)  # the change went through the widget, which writes the URL as it goes
    assert page.url == server.base + "tuning/?gamma=99"


# Widgets whose controls read gamma from the URL, and whose build-time result is for gamma = 4.
GAMMA_FROM_URL = [
    ("bonus/", "bonus-sim"),
    ("playground/", "playground"),
    ("tuning/", "tuning-calculator"),
    ("draft/", "draft"),
    ("verify/", "verify"),
]


@pytest.mark.parametrize(("path", "name"), GAMMA_FROM_URL, ids=[p for p, _ in GAMMA_FROM_URL])
def test_first_paint_honours_the_url_and_never_shows_stale_numbers(
    page: Any, server: SiteServer, path: str, name: str
) -> None:
    """With ?gamma=8 the build-time result (gamma = 4) answers another question: while Python boots the widget
    says what it is computing and shows no number and no chart; once Python answers, the numbers are gamma = 8's."""
    server.hold(MANIFEST)  # the core's manifest waits: Python cannot be ready
    try:
        open_page(page, server, f"{path}?gamma=8")
        widget = page.locator(f'.md-content .sd-widget[data-widget="{name}"]').first
        expect(widget.get_by_label("Speculation length \N{GREEK SMALL LETTER GAMMA}", exact=False).first).to_have_value(
            "8"
        )
        expect(widget.locator(".sd-pending")).to_contain_text("Computing for \N{GREEK SMALL LETTER GAMMA} = 8")
        expect(page.locator("[data-sd-status]")).to_have_attribute("data-sd-status", "loading")
        assert widget.locator("[data-metric][data-value]").count() == 0
        assert widget.locator(".sd-chart .main-svg").count() == 0
    finally:
        server.release()
    expect_ready(page)
    expect(widget).to_have_attribute("data-sd-live", "true", timeout=BOOT_MS)
    expect(widget.locator(".sd-pending")).to_have_count(0)
    expect(widget.locator("[data-metric][data-value]").first).to_be_attached()


# Text colour of every chart Plotly drew; null for a chart with nothing to draw yet (it waits for a button press);
# "not drawn by Plotly" for a chart that has a figure but no Plotly layout (a sketch, or nothing), which must fail.
NOT_PLOTLY = "not drawn by Plotly"
FONT_COLOURS = (
    "() => [...document.querySelectorAll('.md-content .sd-chart')].map(c => c.dataset.sdRenders"
    f" ? (c._fullLayout?.font?.color ?? '{NOT_PLOTLY}') : null)"
)


def expect_build_time_charts(page: Any, path: str, drawn_by: str) -> None:
    """Every widget is mounted, none is live, and each one the build drew a chart for shows it, drawn by
    ``drawn_by``: "sketch" (sketch.js, before Plotly has loaded) or "plotly"."""
    widgets = page.locator(".md-content .sd-widget[data-widget]")
    drawn = build_time_figures(path)
    expect(widgets).to_have_count(len(drawn))
    paint = "svg.sd-sketch" if drawn_by == "sketch" else ".plot-container svg.main-svg"
    for i, has_figure in enumerate(drawn):
        widget = widgets.nth(i)
        expect(widget).to_have_attribute("data-sd-mounted", "true")
        expect(widget).not_to_have_attribute("data-sd-live", "true")
        if has_figure:  # widgets whose build-time result is a table or text have no chart to show
            chart = widget.locator(f".sd-chart[data-sd-engine={drawn_by}]").first
            expect(chart.locator(paint).first).to_be_visible()


def expect_sketches_while_python_boots(page: Any, server: SiteServer, path: str) -> None:
    """Opens ``path`` with the core's manifest held (the caller releases it), so Python cannot be ready: Plotly is
    not loaded (it would compete with the boot) and every chart is a sketch of its build-time figure."""
    server.hold(MANIFEST)
    open_page(page, server, path)
    expect(page.locator("[data-sd-status]")).to_have_attribute("data-sd-status", "loading")
    expect_build_time_charts(page, path, "sketch")
    expect(page.locator("html")).to_have_attribute("data-sd-charts", "sketch")
    expect(page.locator(".md-content .sd-chart .main-svg")).to_have_count(0)  # Plotly has drawn nothing
    # Patterns and gradients are referenced by url(#id), which resolves page-wide: every id is unique.
    repeated = page.evaluate(
        "() => { const ids = [...document.querySelectorAll('svg.sd-sketch [id]')].map((e) => e.id);"
        " return ids.filter((id, i) => ids.indexOf(id) !== i); }"
    )
    assert repeated == [], repeated


# The page's blocks below its headings (css/components.css, "Deferred sections"): whether each one's contents
# are rendered now (false while the browser skips them, off screen during the boot; blocks with no element inside
# but a widget's inert templates are left out), and whether each block may be skipped at all.
BLOCKS = "[...document.querySelectorAll('.md-content__inner > :not(h1, h2, h3, h4, h5, h6)')]"
BLOCKS_SHOWN = (
    f"() => {BLOCKS}.map((b) => b.querySelector(':scope > :not(template)')).filter(Boolean)"
    ".map((inside) => inside.checkVisibility({ contentVisibilityAuto: true }))"
)
BLOCKS_SKIPPABLE = f"() => {BLOCKS}.map((b) => getComputedStyle(b).contentVisibility === 'auto')"


@pytest.mark.parametrize("path", LATER_PAGES, ids=page_id)
def test_code_listings_wait_for_python_unless_the_reader_gets_there_first(
    page: Any, server: SiteServer, path: str
) -> None:
    """While Python boots, a long code listing below the widgets is not laid out (it would hold up the charts'
    first paint): it is shown once Python is ready, at once when the reader scrolls near it, and from the start
    when the URL names an anchor. Other blocks off screen are skipped until they near it, and only during the boot."""
    later = page.locator(".md-content .sd-later")
    heading = later.locator("xpath=preceding-sibling::*[1]")
    status = page.locator("[data-sd-status]")
    server.hold(MANIFEST)
    try:
        open_page(page, server, path)
        expect(status).to_have_attribute("data-sd-status", "loading")
        expect_build_time_charts(page, path, "sketch")
        expect(later).to_have_count(1)
        expect(later).to_be_hidden()
        # Every other block is laid out only once it nears the screen: the first is, the last is not (yet).
        page.wait_for_function(f"() => {{ const s = ({BLOCKS_SHOWN})(); return s[0] && !s.at(-1); }}")
        heading.scroll_into_view_if_needed()
        expect(later.locator("pre code").first).to_be_visible()
        expect(status).to_have_attribute("data-sd-status", "loading")

        anchor = heading.get_attribute("id")
        assert anchor, f"the heading before {path}'s deferred section has no id"
        open_page(page, server, f"{path}#{anchor}")
        expect(status).to_have_attribute("data-sd-status", "loading")
        expect(later.locator("pre code").first).to_be_visible()
        assert page.evaluate("document.documentElement.classList.contains('sd-boot')") is False

        open_page(page, server, path)
        expect(status).to_have_attribute("data-sd-status", "loading")
        expect(later).to_be_hidden()
    finally:
        server.release()
    expect_ready(page)
    expect(later.locator("pre code").first).to_be_attached()
    expect(later).to_be_visible()
    # Python settled: the whole page is laid out, as a reader (and axe-core) expects.
    assert page.evaluate(f"() => ({BLOCKS_SKIPPABLE})().filter(Boolean).length") == 0


@no_service_worker
@pytest.mark.parametrize("path", PAGES, ids=page_id)
def test_build_time_figures_paint_without_python(page: Any, server: SiteServer, browser_log: Any, path: str) -> None:
    """With the worker unable to start, every widget still shows the chart the build rendered for it: first as a
    sketch, then drawn by Plotly (it loads once start-up has ended, however it ended)."""
    browser_log.allow(BLOCKED_503)
    browser_log.allow(LAB_ERROR + r"Python failed to start \(runtime\)")
    server.block("js/runtime/worker.js")
    try:
        open_page(page, server, path)
        expect(page.locator("[data-sd-status]")).to_have_attribute("data-sd-status", "error", timeout=BOOT_MS)
        expect_plotly(page)
        expect_build_time_charts(page, path, "plotly")
    finally:
        server.unblock()


@no_service_worker
@pytest.mark.parametrize("path", CHART_PAGES[:1], ids=page_id)
def test_without_plotly_the_charts_stay_sketches_and_the_page_says_so(
    page: Any, server: SiteServer, browser_log: Any, path: str
) -> None:
    """If Plotly cannot load, the widgets still work: live results are sketched, and a banner says why the charts
    are static."""
    browser_log.allow(BLOCKED_503)
    browser_log.allow(LAB_ERROR + "Interactive charts unavailable: Plotly failed to load")
    server.block("vendor/plotly-cartesian.min.js", "vendor/plotly-gl3d.min.js")
    try:
        open_page(page, server, path)
        expect_ready(page)
        alert = page.locator(".sd-error[role=alert]")
        expect(alert.first.locator("strong")).to_have_text("Interactive charts unavailable")
        expect(alert.first).to_contain_text("Plotly failed to load")
        widgets = page.locator(".md-content .sd-widget[data-widget]")
        for i in range(widgets.count()):
            expect(widgets.nth(i)).to_have_attribute("data-sd-live", "true", timeout=BOOT_MS)
        expect(page.locator("html")).to_have_attribute("data-sd-charts", "sketch")
        expect(page.locator(".md-content .sd-chart[data-sd-engine=plotly]")).to_have_count(0)
        assert change_a_control(page, drawn_by="svg.sd-sketch"), f"{path} has no slider next to a chart"
    finally:
        server.unblock()


# Tab presses allowed to get from a widget's start to past its last slider; widgets hold a handful of controls.
MAX_TABS_PER_WIDGET = 60


def test_a_worker_that_fails_after_ready_turns_the_status_to_error_and_retry_recovers(
    page: Any, server: SiteServer, browser_log: Any
) -> None:
    """After ready, a worker that errors (a crash) or stops answering (a dead worker: its call times out) turns the
    status to error with a Retry banner; calls waiting on it are rejected, never left hanging; Retry starts a new
    worker and every widget goes live again."""
    browser_log.allow(LAB_ERROR + "The Python worker stopped")
    open_page(page, server, "bonus/")
    expect_ready(page)
    expect_widgets_live(page)
    status = page.locator("[data-sd-status]")
    alert = page.locator(".md-content__inner > .sd-error[role=alert]")

    # An error event from the worker while a call is pending (both in one task: the call cannot be answered first).
    page.evaluate(
        """() => {
            window.__sdCall = SDLab.call("runtime.info", {})
                .then(() => "answered", (e) => `rejected: ${e.message}`);
            const crash = new ErrorEvent("error", { message: "the worker crashed (test)", cancelable: true });
            SDLab.worker().dispatchEvent(crash);
        }"""
    )
    expect(status).to_have_attribute("data-sd-status", "error")
    expect(alert).to_contain_text("the worker crashed (test)")
    assert page.evaluate("window.__sdCall") == "rejected: the worker crashed (test)"
    alert.get_by_role("button", name="Retry").click()
    expect_ready(page)
    expect_widgets_live(page)
    expect(page.locator(".sd-error")).to_have_count(0)

    # A worker that dies silently: the next call times out, and the page says so instead of waiting forever.
    page.evaluate("() => SDLab.worker().terminate()")
    outcome = page.evaluate(
        "() => SDLab.call('runtime.info', {}, { timeout: 1000 })"
        ".then(() => 'answered', (e) => `rejected: ${e.message}`)"
    )
    assert outcome == "rejected: the Python worker did not answer runtime.info within 1 s", outcome
    expect(status).to_have_attribute("data-sd-status", "error")
    alert.get_by_role("button", name="Retry").click()
    expect_ready(page)
    expect_widgets_live(page)


# Runs before any page script: counts the window's event listeners that are still attached (a listener added with
# an AbortSignal leaves when it aborts; `once` listeners are left out: they go when they fire) and keeps every WebGL
# context a canvas hands out, so a test can count those not lost.
LEAK_PROBE = """(() => {
  const listeners = new Set();
  const add = EventTarget.prototype.addEventListener;
  const remove = EventTarget.prototype.removeEventListener;
  const key = (type, fn, options) => `${type} ${typeof options === "boolean" ? options : Boolean(options?.capture)}`;
  const ids = new WeakMap();
  let next = 0;
  const id = (fn) => (ids.has(fn) ? ids.get(fn) : (ids.set(fn, ++next), next));
  EventTarget.prototype.addEventListener = function (type, fn, options) {
    if (this === window && fn && !(typeof options === "object" && options?.once)) {
      const k = `${key(type, fn, options)} ${id(fn)}`;
      listeners.add(k);
      options?.signal?.addEventListener?.("abort", () => listeners.delete(k));
    }
    return add.call(this, type, fn, options);
  };
  EventTarget.prototype.removeEventListener = function (type, fn, options) {
    if (this === window && fn) listeners.delete(`${key(type, fn, options)} ${id(fn)}`);
    return remove.call(this, type, fn, options);
  };
  const contexts = [];
  const getContext = HTMLCanvasElement.prototype.getContext;
  HTMLCanvasElement.prototype.getContext = function (type, ...rest) {
    const gl = getContext.call(this, type, ...rest);
    if (gl && /webgl/.test(type) && !contexts.includes(gl)) contexts.push(gl);
    return gl;
  };
  window.__sdLeaks = () => ({
    windowListeners: listeners.size,
    webglContexts: contexts.filter((gl) => !gl.isContextLost()).length,
    ...SDLab.debug(),
  });
})();"""


def test_instant_navigation_back_and_forth_leaks_no_contexts_charts_or_listeners(page: Any, server: SiteServer) -> None:
    """Ten instant navigations between Home (a WebGL scene) and the Playground (four charts): live WebGL contexts,
    the chart and widget registries, and the window's listeners are the same after them as after the first."""
    page.add_init_script(LEAK_PROBE)
    open_page(page, server, "")
    expect_ready(page)

    def round_trip() -> None:
        for path in ("playground/", ""):
            follow_nav_link(page, server, path)
            expect_widgets_live(page)
            for chart in page.locator(".md-content .sd-chart:not([hidden])").all():
                expect(chart).to_have_attribute("data-sd-engine", "plotly", timeout=BOOT_MS)

    round_trip()
    # offline.js listens on the window until the reader pauses (then it installs the cache): a one-off, not a leak.
    page.wait_for_function("() => !['waiting', undefined].includes(document.documentElement.dataset.sdOffline)")
    first = page.evaluate("window.__sdLeaks()")
    assert first["webglContexts"] >= 1 and first["charts"] >= 1 and first["widgets"] == 1, first
    for _ in range(5):
        round_trip()
    assert page.evaluate("window.__sdLeaks()") == first


# A browser that offers no WebGL (turned off, or no graphics driver it trusts): every WebGL context is refused.
NO_WEBGL = """(() => {
  const original = HTMLCanvasElement.prototype.getContext;
  HTMLCanvasElement.prototype.getContext = function (type, ...rest) {
    return /webgl/i.test(String(type)) ? null : original.call(this, type, ...rest);
  };
})();"""


def test_without_webgl_the_3d_lab_stays_a_static_drawing_that_follows_the_controls(
    page: Any, server: SiteServer
) -> None:
    """plotly.js 4.1.1 puts "WebGL is not supported by your browser" in a 3D scene's place when it gets no WebGL
    context (Firefox 153 headless showed it on the home page). The lab keeps its static drawing instead, says why,
    drops the orbit hint, and redraws the drawing from every new result."""
    page.add_init_script(NO_WEBGL)
    open_page(page, server, "")
    expect_ready(page)
    lab = page.locator('.sd-widget[data-widget="lab3d"]')
    expect(lab).to_have_attribute("data-sd-live", "true", timeout=BOOT_MS)
    chart = lab.locator(".sd-chart")
    expect(chart).to_have_attribute("data-sd-static", "no-webgl")
    expect(chart.locator(".sd-chart__static")).to_contain_text("This browser offers no WebGL")
    expect(chart.locator(".sd-chart__static")).to_be_visible()
    # Every chart Plotly can draw is drawn (here: none), so the page counts as done.
    expect(page.locator("html")).to_have_attribute("data-sd-charts", "plotly", timeout=BOOT_MS)
    expect(chart).to_have_attribute("data-sd-engine", "sketch")
    expect(chart.locator("svg.sd-sketch")).to_have_count(1)
    expect(page.get_by_text("WebGL is not supported")).to_have_count(0)
    expect(lab.get_by_text("Drag to orbit")).to_be_hidden()
    expect(lab.locator(".sd-lab3d__caption")).to_contain_text(READY)

    # A change of alpha draws the new run: its figure and metrics are the native run's at that alpha.
    drawn = int(chart.get_attribute("data-sd-renders") or 0)
    slider = lab.get_by_label("Agreement rate \N{GREEK SMALL LETTER ALPHA}")
    slider.focus()
    for _ in range(30):
        slider.press("ArrowLeft")  # 0.80 -> 0.50
    args = {"gamma": 4, "alpha": 0.5, "cost": 0.05, "seed": 0, "rounds": 16}  # docs/index.md's run, at alpha 0.5
    expected = json.loads(web.call("home.run", json.dumps(args)))
    saved = lab.locator('[data-metric="target-calls-saved"]')
    expect(saved).to_have_attribute("data-value", js_number(expected["metrics"]["target-calls-saved"]), timeout=BOOT_MS)
    page.wait_for_function(
        "([el, n]) => Number(el.dataset.sdRenders || 0) > n", arg=[chart.element_handle(), drawn], timeout=BOOT_MS
    )
    expect(chart.locator("svg.sd-sketch")).to_have_count(1)
    expect(chart.locator(".sd-chart__static")).to_have_count(1)
    assert page.evaluate("() => document.querySelector('.sd-lab3d .sd-chart')._sdFigure.data.length") == len(
        expected["figure"]["data"]
    )


# Per chart on the page: what Plotly drew, and what sketch.js draws from the same figure at the same width.
DRAWN_BOTH_WAYS = """async (base) => {
  const { sketch } = await import(new URL("js/runtime/sketch.js", base).href);
  const theme = { fg: "#000", grid: "#ccc", zero: "#999", font: "sans-serif", series: ["#1f77b4"] };
  return [...document.querySelectorAll(".md-content .sd-chart")].filter((c) => c._fullLayout).map((c) => {
    const box = document.createElement("div");
    const svg = sketch(box, structuredClone(c._sdFigure), theme, c.clientWidth);
    const layout = c._fullLayout;
    const plotlyRanges = {};
    for (const id of Object.keys(JSON.parse(svg.dataset.ranges))) {
      const [name, letter] = id.startsWith("scene.") ? ["scene", id.slice(6)] : [null, id];
      const axis = name ? layout.scene[`${letter}axis`] : layout[`${letter[0]}axis${letter.slice(1)}`];
      plotlyRanges[id] = axis.range.map(Number);
    }
    return {
      label: c.getAttribute("aria-label").slice(0, 60),
      sketch: {
        traces: Number(svg.dataset.traces),
        ranges: JSON.parse(svg.dataset.ranges),
        legend: [...svg.querySelectorAll(".sd-sketch-legend text")].map((t) => t.textContent),
      },
      plotly: {
        traces: c._fullData.filter((t) => t.visible === true).length,
        ranges: plotlyRanges,
        // Plotly writes an invisible zero-width space after each part of a power (<sup>): no text a reader sees.
        legend: [...c.querySelectorAll(".legendtext")].map((t) => t.textContent.replaceAll("\u200b", "")),
      },
    };
  });
}"""


# --- every page, booted once: live, named, drawn as sketched, accessible in both schemes, keyboard-operable ---


def expect_gamma_labelled_speculation_length(page: Any) -> None:
    """One name for gamma on every page (the vocabulary of DESIGN.md): each control whose value is gamma reads
    "Speculation length" and the letter (a note may follow), never "Proposal length" or another name."""
    labels = page.locator(".md-content .sd-widget input[name=gamma]").evaluate_all(
        "els => els.map(el => el.labels[0]?.textContent ?? '(no label)')"
    )
    assert all(label.startswith("Speculation length \N{GREEK SMALL LETTER GAMMA}") for label in labels), labels


# Every chart Plotly drew that is on screen: its laid-out width against its box's, and how far the plot's bottom
# reaches past the box's (pixels).
CHART_FIT = """() => [...document.querySelectorAll('.md-content .sd-chart.js-plotly-plot')]
  .filter((gd) => gd.clientWidth > 0 && gd._fullLayout)
  .map((gd) => {
    const svg = gd.querySelector('.main-svg');
    return { label: gd.getAttribute('aria-label'), width: gd._fullLayout.width, box: gd.clientWidth,
             overflow: svg.getBoundingClientRect().bottom - gd.getBoundingClientRect().bottom };
  })"""


def expect_charts_fit_their_boxes_after_a_resize(page: Any) -> None:
    """A narrower window: Plotly relays every chart out to its box's new width, and no plot reaches below its box
    onto what follows (the tiles, the next control)."""
    size = page.viewport_size
    page.set_viewport_size({"width": 900, "height": size["height"]})
    try:
        page.wait_for_function(f"() => ({CHART_FIT})().every((c) => Math.abs(c.width - c.box) <= 1)", timeout=10_000)
        for chart in page.evaluate(CHART_FIT):
            assert chart["overflow"] <= 1, chart
    finally:
        page.set_viewport_size(size)


def expect_sketch_draws_what_plotly_draws(page: Any, server: SiteServer) -> None:
    """The static first paint (sketch.js) shows the same figure Plotly then draws: the same traces, the same legend
    entries, and axis ranges within 2% of the axis span of Plotly's (its autorange pads a little differently)."""
    drawn = page.evaluate(DRAWN_BOTH_WAYS, server.base)
    assert drawn, "no chart drawn by Plotly on this page"
    for chart in drawn:
        sketch, plotly = chart["sketch"], chart["plotly"]
        assert sketch["traces"] == plotly["traces"], chart
        assert sketch["legend"] == plotly["legend"], chart
        for axis, (lo, hi) in plotly["ranges"].items():
            tolerance = 0.02 * abs(hi - lo)
            assert sketch["ranges"][axis] == pytest.approx([lo, hi], abs=tolerance), (axis, chart)


def expect_accessible_and_charts_follow_the_scheme(page: Any, has_charts: bool) -> None:
    """axe-core finds nothing serious in light and in dark, and every drawn chart's text colour follows the
    palette: it changes on toggling to dark (before axe looks at the dark page) and comes back on light."""
    light_colours: list[str | None] = page.evaluate(FONT_COLOURS)
    if has_charts:
        assert any(light_colours), f"the build drew charts on this page, but none is drawn now: {light_colours}"
    assert NOT_PLOTLY not in light_colours, light_colours
    light = axe_violations(page)

    toggle_palette(page)
    expect(page.locator("body")).to_have_attribute("data-md-color-scheme", "slate")
    page.wait_for_function(
        f"light => ({FONT_COLOURS})().every((colour, i) => light[i] === null || (colour !== light[i]"
        f" && colour !== '{NOT_PLOTLY}'))",
        arg=light_colours,
    )
    dark = axe_violations(page)

    toggle_palette(page)
    expect(page.locator("body")).to_have_attribute("data-md-color-scheme", "default")
    page.wait_for_function(f"light => ({FONT_COLOURS})().every((colour, i) => colour === light[i])", arg=light_colours)
    assert (light, dark) == ([], []), f"light: {light}\ndark: {dark}"


def expect_headings_in_order(page: Any) -> None:
    """No heading skips a level, the widgets' own among the page's (the Playground's "Predict, then test" was an h3
    under the page's h1): a reader who moves by headings hears the page's outline."""
    levels = page.locator(".md-content").evaluate(
        "(root) => [...root.querySelectorAll('h1, h2, h3, h4, h5, h6')]"
        ".map((h) => [Number(h.tagName[1]), h.textContent])"
    )
    skips = [(a, b) for a, b in itertools.pairwise(levels) if b[0] > a[0] + 1]
    assert levels and not skips, skips


def expect_content_tabs_show_their_focus(page: Any) -> None:
    """A content tab set (a code listing's tabs) moved by an arrow key shows a focus ring: Material 9.8.2 marks the
    focused tab only by the accent colour the selected tab has anyway (css/theme.css)."""
    tabs = page.locator(".md-content .tabbed-set > input")
    if not tabs.count():
        return
    first = tabs.first
    first.evaluate("(el) => el.closest('.tabbed-set').scrollIntoView({block: 'center'})")
    first.focus()
    page.keyboard.press("ArrowRight")
    labels = page.locator(".md-content .tabbed-set:has(> input:focus) > .tabbed-labels")
    expect(labels).to_have_count(1)
    assert labels.evaluate("(el) => getComputedStyle(el).outlineStyle") == "solid"
    page.keyboard.press("ArrowLeft")


def expect_sliders_reachable_by_tab_and_moved_by_arrows(page: Any) -> None:
    """Tab from the start of each widget reaches each of its visible sliders; an arrow key then changes the value the
    widget shows beside it and, for a slider that feeds Python, the widget paints a new result."""
    widgets = page.locator(".md-content .sd-widget[data-widget]")
    for w in range(widgets.count()):
        widget = widgets.nth(w)
        sliders = widget.locator("input[type=range]:visible")
        count = sliders.count()
        if count == 0:
            continue
        for i in range(count):
            sliders.nth(i).evaluate("(el, i) => el.setAttribute('data-sd-test-slider', i)", i)
        # Focus lands on the widget itself (a programmatic starting point), then Tab walks its focus order.
        reached: list[str] = widget.evaluate(
            """el => {
                window.__sdReached = [];
                el.querySelectorAll('[data-sd-test-slider]').forEach(s => s.addEventListener('focus',
                    () => window.__sdReached.push(s.dataset.sdTestSlider), {once: true}));
                el.setAttribute('tabindex', '-1');
                el.focus();
                return window.__sdReached;
            }"""
        )
        for _ in range(MAX_TABS_PER_WIDGET):
            page.keyboard.press("Tab")
            reached, inside = widget.evaluate("el => [window.__sdReached, el.contains(document.activeElement)]")
            if len(reached) == count or not inside:
                break
        widget.evaluate("el => el.removeAttribute('tabindex')")
        missing = [sliders.nth(i).get_attribute("id") for i in range(count) if str(i) not in reached]
        assert not missing, f"{widget.get_attribute('data-widget')}: sliders that Tab does not reach: {missing}"

        # The arrow key moves the slider (Chromium's part); the widget's part is what follows: the value beside the
        # slider says the new value (also to screen readers), and a slider that feeds Python gets a new result.
        for i in range(count):
            slider = sliders.nth(i)
            shown = page.locator(f"output[for='{slider.get_attribute('id')}']")
            before = shown.text_content()
            paints = int(widget.get_attribute("data-sd-paints") or 0)
            at_max = slider.evaluate("el => Number(el.value) >= Number(el.max)")
            slider.focus()
            page.keyboard.press("ArrowLeft" if at_max else "ArrowRight")
            expect(shown).not_to_have_text(before or "")
            expect(slider).to_have_attribute("aria-valuetext", shown.text_content() or "")
            if slider.get_attribute("data-sd-refresh") is not None:
                page.wait_for_function(
                    "([el, n]) => Number(el.dataset.sdPaints || 0) > n", arg=[widget.element_handle(), paints]
                )
            slider.evaluate("el => el.removeAttribute('data-sd-test-slider')")


@pytest.mark.parametrize("path", PAGES, ids=page_id)
def test_every_page_arrives_with_its_math_typeset(path: str) -> None:
    """make site typesets the math into the built page (site_assets/typeset.mjs): each formula
    pymdownx.arithmatex wrote is KaTeX's HTML, no TeX source is left, and the page loads no KaTeX script (js/math.js
    loads it for search results only). Each of the formulas' unbreakable runs carries its width in em, measured
    with the fonts loaded (site_assets/prerender.py)."""
    html = page_html(path)
    formulas = re.findall(r'<(span|div) class="arithmatex">(.{0,40})', html)
    untypeset = [inner for _, inner in formulas if not inner.startswith('<span class="katex')]
    assert untypeset == [], untypeset[:5]
    assert "katex.min.js" not in html and "auto-render" not in html
    runs = re.findall(r'<span class="katex-base"([^>]*)>', html)
    assert len(runs) >= len(formulas)
    unsized = [run for run in runs if not re.fullmatch(r' style="width:\d+(\.\d+)?em"', run)]
    assert unsized == [], unsized[:5]


# The page's layout shifts so far (the Layout Instability API, buffered from navigation), each with when it came and
# what moved; taken once the page has loaded, its fonts have arrived and two more frames have been drawn.
LAYOUT_SHIFTS = """() => new Promise((resolve) => {
  const shifts = [];
  const keep = (entries) => entries.forEach((e) => e.hadRecentInput || shifts.push(e));
  const observer = new PerformanceObserver((list) => keep(list.getEntries()));
  observer.observe({ type: "layout-shift", buffered: true });
  document.fonts.ready.then(() => requestAnimationFrame(() => requestAnimationFrame(() => {
    keep(observer.takeRecords());
    observer.disconnect();
    resolve(shifts.map((e) => ({ at: Math.round(e.startTime), value: e.value,
      moved: e.sources.map((s) => `${s.node?.nodeName} ${(s.node?.textContent || "").trim().slice(0, 40)}`) })));
  })));
})"""
# Chromium's "good" cumulative layout shift (web.dev/articles/cls): at most 0.1.
SHIFT_LIMIT = 0.1
VIEWPORTS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.mark.parametrize("viewport", VIEWPORTS)
@pytest.mark.parametrize("path", PAGES, ids=page_id)
def test_every_page_sketches_its_charts_and_holds_still_while_python_boots(
    page: Any, server: SiteServer, path: str, viewport: str
) -> None:
    """While Python boots every chart is a sketch of its build-time figure and Plotly is not loaded. (How a page
    goes on from there to ready and live is checked on the pages test_first_paint_... and test_code_listings_...
    open, and by every page file's first test; the live checks of every page follow below.) Meanwhile the text
    does not move: the layout shifts from navigation until the page has loaded and its fonts have come add up to
    at most SHIFT_LIMIT. (The math comes typeset in the page, the KaTeX fonts it needs first are preloaded, and a
    widget holds its place until it mounts: without them, the Playground, Verify, Trees and Cost pages moved by
    0.12 to 0.33.) Each chart is sketched once: the theme's start-up used to have those already sketched drawn again."""
    page.set_viewport_size(VIEWPORTS[viewport])
    try:
        expect_sketches_while_python_boots(page, server, path)
        page.wait_for_load_state("load")
        shifts = page.evaluate(LAYOUT_SHIFTS)
        assert sum(s["value"] for s in shifts) <= SHIFT_LIMIT, shifts
        # The theme's start-up (before the load event) sets the colour scheme the page already has: no chart is drawn
        # again for it (js/runtime/charts.js redraws on a change of scheme only).
        renders = page.evaluate(
            "() => [...document.querySelectorAll('.md-content .sd-chart[data-sd-renders]')]"
            ".map((c) => c.dataset.sdRenders)"
        )
        assert renders and set(renders) == {"1"}, renders
    finally:
        page.close()  # before the manifest is released: this page's Python is not needed
        server.release()


# The KaTeX fonts of the page's math still loading (KaTeX's stylesheet declares them font-display: block).
KATEX_FONTS_LOADING = (
    "() => [...document.fonts].filter((f) => f.family.startsWith('KaTeX') && f.status === 'loading').length"
)


@pytest.mark.parametrize("path", PAGES, ids=page_id)
def test_the_math_keeps_its_width_while_its_fonts_load(page: Any, context: Any, server: SiteServer, path: str) -> None:
    """On a phone, a first visit whose KaTeX fonts come after the page's first paint: the text does not move when
    they come. Each formula run's width is in the page (site_assets/prerender.py); without it, the math is laid
    out in a fallback font until its own arrives, and the lines around it break anew: Trees moved by 0.155 when
    its fonts were held so. The fonts are held at the server (a fresh browser context: none is cached) until the
    page has painted, then released; the layout shifts until they have loaded add up to at most SHIFT_LIMIT."""
    page.set_viewport_size(VIEWPORTS["phone"])
    server.hold(MANIFEST, ".woff2")
    try:
        page.goto(server.base + path, wait_until="commit")  # the load event waits for the preloaded fonts
        page.wait_for_function("() => performance.getEntriesByName('first-contentful-paint').length > 0")
        assert page.evaluate(KATEX_FONTS_LOADING) > 0  # the page has painted with fonts still to come
        server.release()
        page.wait_for_load_state("load")
        shifts = page.evaluate(LAYOUT_SHIFTS)
        assert page.evaluate(KATEX_FONTS_LOADING) == 0
        assert sum(s["value"] for s in shifts) <= SHIFT_LIMIT, shifts
    finally:
        page.close()
        server.release()


# --- the first widget drawn into the page at build time (site_assets/prerender.py) ---------------------------------

# The page's first widget placeholder as the file has it: its name and the copy's top-level elements (their opening
# tags), and the copy's whole HTML.
COPY_OPENINGS = re.compile(r"<[a-z]+\b[^>]*\bdata-sd-pre=\"\"[^>]*>")
# Pages where the build drew the first widget in: its placeholder has a build-time result.
FIRST_INITIAL = re.compile(
    r'<div class="sd-widget[^"]*" data-widget="[a-z0-9-]+"[^>]*>\s*'
    r"(?:<template data-sd-settings\b[^>]*>.*?</template>\s*)?<template data-sd-initial\b",
    re.DOTALL,
)
COPY_PAGES = [p for p in PAGES if FIRST_INITIAL.match(page_html(p), page_html(p).find('<div class="sd-widget'))]
COPY_PAGES = COPY_PAGES or [NOT_BUILT]
# The theme's colours as the light scheme writes them, in an SVG attribute: the copy has none (see below).
THEME_COLOUR = re.compile(r'(?:fill|stroke)="rgba\(0, 0, 0, 0\.(?:87|32|07)\)"')
# The copy the file holds, as the browser parses and serializes it, for the page on screen.
FILE_COPY = """async () => {
  const html = await (await fetch(location.href)).text();
  const widget = new DOMParser().parseFromString(html, "text/html").querySelector(".sd-widget[data-widget]");
  const copy = [...widget.querySelectorAll(":scope > [data-sd-pre]")];
  return [widget.dataset.widget, copy.map((e) => e.outerHTML).join("")];
}"""


@pytest.mark.parametrize("path", COPY_PAGES, ids=page_id)
def test_each_page_arrives_with_its_first_widget_drawn_in_and_inert(path: str) -> None:
    """The build draws each page's first widget, as it first paints, into the HTML: the browser shows it with the
    page, before any script has run. Nothing in the copy can be focused or read out (inert, aria-hidden), and its
    charts take the theme's colours from CSS variables, so they follow the reader's scheme: no theme colour is
    written into them (the light scheme's text colour, rgba(0, 0, 0, 0.87), was, before the build replaced it)."""
    html = page_html(path)
    first = re.search(r'<div class="sd-widget[^"]*" data-widget="([a-z0-9-]+)"', html)
    assert first, path
    openings = COPY_OPENINGS.findall(html)
    assert openings, f"{path}: no build-time copy of the {first.group(1)} widget"
    assert all(" inert" in tag and 'aria-hidden="true"' in tag for tag in openings), openings
    assert THEME_COLOUR.findall(html) == []


@no_service_worker
@pytest.mark.parametrize("path", COPY_PAGES, ids=page_id)
def test_the_build_time_copy_is_what_the_first_widget_paints(page: Any, server: SiteServer, path: str) -> None:
    """At the width the build drew it (1280 px), the copy in the HTML is, to the character, the copy the same
    script makes of the widget's own first paint in the reader's browser (Python held back): the controls, their
    values, the sketches and the tiles. A change to a widget, the sketch or the theme that the build did not redraw
    fails here. Once the widget has bound, the copy is gone."""
    page.set_viewport_size(prerender.VIEWPORT)
    server.hold("vendor/pyodide/pyodide.mjs")  # as the build holds the runtime: the worker says no phase yet
    try:
        open_page(page, server, path)
        widget = page.locator(".md-content .sd-widget[data-widget]").first
        expect(widget).to_have_attribute("data-sd-paints", "1")
        expect(widget.locator(":scope > [data-sd-pre]")).to_have_count(0)
        name, built = page.evaluate(FILE_COPY)
        # A link in the copy is relative: the widget writes absolute URLs, which at build time named the build's server.
        assert re.findall(r'(?:href|src)="https?:[^"]*"', built) == []
        live_name, live = page.evaluate(prerender.COPY)
        at = next((i for i, (a, b) in enumerate(zip(live, built, strict=False)) if a != b), min(len(live), len(built)))
        assert (live_name, live) == (name, built), (live[at - 200 : at + 200], built[at - 200 : at + 200])
    finally:
        page.close()
        server.release()


# Per colour scheme set on <body>: the fill of the copy's first chart, and the scheme's foreground colour.
COPY_COLOURS = """(scheme) => {
  document.body.setAttribute("data-md-color-scheme", scheme);
  const svg = document.querySelector(".sd-widget > [data-sd-pre] svg.sd-sketch");
  const probe = document.createElement("span");
  probe.style.color = "var(--md-default-fg-color)";
  document.body.append(probe);
  const foreground = getComputedStyle(probe).color;
  probe.remove();
  return [getComputedStyle(svg).fill, foreground];
}"""


def expect_linked_copy_hidden_until_bound(page: Any, server: SiteServer, copy: Any) -> None:
    """On the Playground opened with ?gamma=8 and its widget module held: the copy (drawn for gamma = 4) is hidden
    under html.sd-linked; released, the widget binds with gamma = 8 and the copy is gone."""
    expect(page.locator("html")).to_have_class(re.compile(r"\bsd-linked\b"))
    expect(copy.locator("svg.sd-sketch").first).to_be_hidden()
    server.release()
    widget = page.locator('.md-content .sd-widget[data-widget="playground"]')
    gamma = widget.get_by_label("Speculation length \N{GREEK SMALL LETTER GAMMA}", exact=False).first
    expect(gamma).to_have_value("8")
    expect(copy).to_have_count(0)


@no_service_worker
def test_the_copy_shows_before_any_script_follows_the_scheme_and_hides_under_a_link(
    page: Any, server: SiteServer
) -> None:
    """With the Playground's widget module held back, the page shows the build-time copy: its charts are drawn,
    their text in the foreground colour of the scheme on <body> (the theme's start-up sets it; the test sets each
    scheme in turn, since holding the module holds the theme's bundle too), and nothing in it takes focus. On a
    phone its charts are not shown: drawn for 1280 px, they would show at about half their size. Opened from a
    link that sets gamma, the copy (drawn for the default gamma) keeps its place but is not shown; the module
    then binds the widget with gamma = 8."""
    server.hold("js/widgets/playground.js")
    try:
        page.goto(server.base + "playground/", wait_until="commit")
        copy = page.locator(".md-content .sd-widget > [data-sd-pre]")
        expect(copy.locator("svg.sd-sketch").first).to_be_visible()
        light, dark = page.evaluate(COPY_COLOURS, "default"), page.evaluate(COPY_COLOURS, "slate")
        assert light[0] == light[1] and dark[0] == dark[1] and light[1] != dark[1], (light, dark)
        # The line for readers without JavaScript is not there (test_without_javascript_...).
        widget = page.locator(".md-content .sd-widget").first
        assert widget.evaluate("(el) => getComputedStyle(el, '::before').content") == "none"
        slider = copy.locator("input[type=range]").first
        slider.evaluate("(el) => el.focus()")
        expect(slider).not_to_be_focused()
        # On a phone the charts drawn for 1280 px keep their place unseen; the controls and tiles show.
        page.set_viewport_size(VIEWPORTS["phone"])
        expect(copy.locator("svg.sd-sketch").first).to_be_hidden()
        expect(slider).to_be_visible()
        page.goto(server.base + "playground/?gamma=8", wait_until="commit")
        expect_linked_copy_hidden_until_bound(page, server, copy)
    finally:
        page.close()
        server.release()


@no_service_worker
def test_instant_navigation_to_a_link_that_sets_controls_hides_the_copy_until_the_widget_binds(
    page: Any, server: SiteServer
) -> None:
    """A reader on Verify follows a link to the Playground with gamma = 8 in its query, by instant navigation (no new
    document, so no <head> script runs), before the Playground's widget module has loaded: the Playground's copy of
    its first paint, drawn for gamma = 4, keeps its place unseen; once the module loads, the widget binds with
    gamma = 8, and the copy is gone."""
    open_page(page, server, "verify/")
    expect_ready(page)
    server.hold("js/widgets/playground.js")
    try:
        _navigate_instantly(page, server.base + "playground/?gamma=8")
        copy = page.locator(".md-content .sd-widget > [data-sd-pre]")
        expect(copy.first).to_be_attached()
        expect_linked_copy_hidden_until_bound(page, server, copy)
    finally:
        server.release()


@no_service_worker
def test_a_first_visit_paints_in_the_scheme_the_system_asks_for(page: Any, server: SiteServer) -> None:
    """A reader whose system asks for dark, on a first visit (no scheme stored): the page, and with it its first
    widget's build-time copy, is dark before the theme's bundle runs, so its first paint is. The bundle is held
    back here; without the script after the header (overrides/main.html) the page stayed light until the bundle
    ran, ~150-250 ms after the first paint. Once it runs, it keeps the scheme."""
    bundle = re.search(r"assets/javascripts/bundle\.[0-9a-f]+\.min\.js", page_html(""))
    assert bundle, "no theme bundle in the home page"
    page.emulate_media(color_scheme="dark")
    server.hold(bundle.group(0))
    try:
        page.goto(server.base + "playground/", wait_until="commit")
        # The header's palette inputs are parsed, and the script after them has run. (The widget's module runs
        # before the held bundle and may already have replaced the build-time copy, so the copy is not waited on.)
        expect(page.locator("input[data-md-color-media]").first).to_be_attached()
        expect(page.locator("body")).to_have_attribute("data-md-color-scheme", "slate")
        server.release()
        expect_ready(page)
        expect(page.locator("body")).to_have_attribute("data-md-color-scheme", "slate")
    finally:
        page.close()
        server.release()


@pytest.mark.browser_context_args(java_script_enabled=False)
def test_without_javascript_the_copy_says_its_controls_need_it(page: Any, server: SiteServer) -> None:
    """A reader without JavaScript gets the build-time copy of the first widget, whose controls cannot act: a line
    above it says why (test_the_copy_shows_before_any_script_... checks that it is not there with JavaScript)."""
    open_page(page, server, "playground/")
    widget = page.locator(".md-content .sd-widget").first
    expect(widget.locator(":scope > [data-sd-pre]").first).to_be_visible()
    said = widget.evaluate("(el) => getComputedStyle(el, '::before').content")
    assert "needs JavaScript" in said, said


@pytest.mark.browser_context_args(java_script_enabled=False, viewport={"width": 390, "height": 844})
def test_without_javascript_a_phone_shows_the_copys_charts_whole(page: Any, server: SiteServer) -> None:
    """On a phone, with JavaScript, the copy's charts (drawn for 1280 px) keep their place unseen until the widget
    draws its own. Without JavaScript nothing will: on every page with a copy, each of its charts shows, scaled to
    the column at the aspect it was drawn with (its height within a pixel of its width times the drawing's), so no
    empty space is held for it; the page does not scroll sideways; and the copy's "numbers, as tables", which a
    script fills when it opens, is not shown."""
    copies = [p for p in WIDGET_PAGES if 'data-sd-pre=""' in page_html(p)]
    assert copies, "no page holds a build-time copy of its first widget"
    charts = tables = 0
    for path in copies:
        open_page(page, server, path)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, path
        sketches = page.locator(".md-content .sd-widget > [data-sd-pre] svg.sd-sketch")
        for i in range(sketches.count()):
            expect(sketches.nth(i)).to_be_visible()
            box = sketches.nth(i).evaluate(
                """(s) => ({ width: s.getBoundingClientRect().width, height: s.getBoundingClientRect().height,
                    drawnWidth: s.viewBox.baseVal.width, drawnHeight: s.viewBox.baseVal.height })"""
            )
            scaled = box["width"] * box["drawnHeight"] / box["drawnWidth"]
            assert 0 < box["width"] <= 390 and abs(box["height"] - scaled) <= 1, (path, box)
            charts += 1
        tables += page.locator(".md-content .sd-widget > .sd-data[data-sd-pre]").count()
        expect(page.locator(".md-content .sd-widget > .sd-data[data-sd-pre]:visible")).to_have_count(0)
    assert charts and tables, (charts, tables)


# The page's controls that the link holds (data-sd-url names the key), but those a widget keeps hidden for now, in
# document order: each is marked with its index, and their keys, types and values are returned.
MARK_FIELDS = """() => [...document.querySelectorAll('.md-content .sd-widget :is(input, select)[data-sd-url]')]
    .filter((el) => !el.closest('[hidden]'))
    .map((el, i) => { el.dataset.sdTestField = String(i); return [el.dataset.sdUrl, el.type, el.value]; })"""


def query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def expect_mounted_and_shown(page: Any) -> None:
    """Every widget of the page is mounted; the sections held back during the boot are shown at once (as lab.js
    shows one the reader scrolls near), so a control can take focus wherever it is."""
    widgets = page.locator(".md-content .sd-widget[data-widget]")
    expect(widgets.first).to_be_attached()
    expect(page.locator(".md-content .sd-widget[data-widget]:not([data-sd-mounted])")).to_have_count(0)
    page.evaluate("document.documentElement.classList.remove('sd-boot')")


# Per group of controls stacked in one column (every control's box at one x): the x where each visible field
# (slider, number, select, text box) starts, less its own margin, and the control's label. A row of controls nested
# in a group (Draft's prompt picker and box) counts as part of it.
STACKED_FIELDS = """() => [...document.querySelectorAll('.md-content .sd-widget .sd-controls:not(.sd-controls--row)')]
  .map((group) => [...group.querySelectorAll(':scope > .sd-control, :scope > .sd-controls--row > .sd-control')]
    .filter((c) => c.checkVisibility() && c.querySelector(':scope > :is(input, select)')))
  .filter((controls) => controls.length > 1 &&
    controls.every((c) => Math.abs(c.getBoundingClientRect().left - controls[0].getBoundingClientRect().left) < 1))
  .map((controls) => controls.map((c) => {
    const field = c.querySelector(':scope > :is(input, select)');
    const left = field.getBoundingClientRect().left - parseFloat(getComputedStyle(field).marginLeft);
    return [c.querySelector('label').textContent, Math.round(left * 10) / 10];
  }))"""


def test_controls_stacked_in_one_column_start_their_fields_at_one_x(page: Any, server: SiteServer) -> None:
    """At 1280 px, in each group of controls stacked in one column, every slider, number, select and text box
    starts at the same x: the group's label column is as wide as its widest label (a long label once pushed its own
    slider right). Python is held back: the layout is the page's own."""
    server.hold(MANIFEST)
    groups = 0
    try:
        for path in WIDGET_PAGES:
            open_page(page, server, path)
            expect_mounted_and_shown(page)
            for fields in page.evaluate(STACKED_FIELDS):
                starts = {x for _, x in fields}
                assert max(starts) - min(starts) <= 0.5, f"{path}: fields start at different x: {fields}"
                groups += 1
    finally:
        server.release()
    assert groups >= 10, groups


@pytest.mark.parametrize("path", WIDGET_PAGES, ids=page_id)
def test_every_control_the_link_holds_comes_back_from_the_link(page: Any, server: SiteServer, path: str) -> None:
    """No lost state: each slider, select and text box the link holds is moved (a slider by one to three presses of
    its arrow key, a select to its next choice, a text box given new words), and the link then names its key.
    Opened again from that link, every control the link holds shows the value it had, with no note that a value was
    corrected. Two widgets of one page with a control of the same key move together (the link holds one value per
    key). Python is held back: the link is the page's own, written and read without it."""
    server.hold(MANIFEST)
    try:
        open_page(page, server, path)
        expect_mounted_and_shown(page)
        for i, (key, kind, _) in enumerate(page.evaluate(MARK_FIELDS)):
            field = page.locator(f'[data-sd-test-field="{i}"]')
            if kind.startswith("select"):
                now = field.evaluate("el => el.selectedIndex")
                field.select_option(index=(now + 1) % field.locator("option").count())
            elif kind == "range":
                # Each slider by another number of steps: two of one key moved alike would agree without the sync.
                for _ in range(1 + i % 3):
                    at_max = field.evaluate("el => Number(el.value) >= Number(el.max)")
                    field.focus()
                    page.keyboard.press("ArrowLeft" if at_max else "ArrowRight")
            elif kind == "text":
                # A reader's own words (Draft and Verify's prompt), committed as the box loses focus.
                field.fill(f"It was the best of times {i}")
                field.press("Tab")
            else:
                continue  # a number field (the seed) is left as it is, and must come back as it is
            # A committed change (its change event) writes the link within the same task (ui/url.js); Playwright
            # hears of the new address by an event of its own, so page.url is waited on, not read at once.
            expect(page).to_have_url(re.compile(rf"[?&]{re.escape(key)}="))
        moved = page.evaluate(MARK_FIELDS)
        values: dict[str, set[str]] = {}
        for key, _, value in moved:
            values.setdefault(key, set()).add(value)
        assert all(len(v) == 1 for v in values.values()), f"{path}: controls of one key disagree: {values}"
        link = page.url
        page.goto(link)
        expect_mounted_and_shown(page)
        expect(page.locator(".md-content .sd-notice")).to_have_count(0)
        back = page.evaluate(MARK_FIELDS)
        assert back == moved, f"{link}: [key, type, value] of each control moved, then opened from the link"
        assert query(page.url) == query(link)
    finally:
        page.close()  # before the manifest is released: this page's Python is not needed
        server.release()


@shared_page
@pytest.mark.parametrize("path", PAGES, ids=page_id)
def test_every_page_goes_live_and_is_accessible_and_keyboard_operable(page: Any, server: SiteServer, path: str) -> None:
    """The pages in turn in one shared page (instant navigation, one boot for them all): every widget goes live
    with no error and Plotly draws every chart; gamma is named "Speculation length"; each chart Plotly drew matches
    its static sketch; the charts' numbers open as tables; axe finds nothing serious in light or dark (tables open)
    and the charts follow the palette; every slider
    is reachable by Tab and acts on its arrow keys; a content tab set shows its focus; no heading skips a level; the
    charts fit their boxes after a resize."""
    visit(page, path)
    expect_ready(page)
    expect_widgets_live(page)  # and every chart drawn by Plotly
    expect(page.locator(".md-content svg.sd-sketch")).to_have_count(0)
    expect(page.locator(".sd-error")).to_have_count(0)
    expect_gamma_labelled_speculation_length(page)
    has_charts = path in CHART_PAGES
    if has_charts:
        expect_sketch_draws_what_plotly_draws(page, server)
        expect_no_button_sends_a_chart_away(page)
    if has_charts:
        expect_charts_readable_as_tables(page)
    expect_accessible_and_charts_follow_the_scheme(page, has_charts)
    expect_sliders_reachable_by_tab_and_moved_by_arrows(page)
    expect_content_tabs_show_their_focus(page)
    expect_headings_in_order(page)
    if has_charts:
        expect_charts_fit_their_boxes_after_a_resize(page)
