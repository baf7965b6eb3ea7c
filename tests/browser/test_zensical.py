"""The site built by Zensical 0.0.73 (``make site-zensical``, into site-zensical/) works like the mkdocs build.

Zensical reads mkdocs.yml but runs no hooks, which is why everything a page needs is written by
site_assets/prebuild.py before either builder runs. These tests check the result: the same pages with the same
widget settings and build-time results, every page going live by instant navigation (Zensical's bundle provides
``document$`` too) with sliders that redraw their charts, and offline reloads through the service worker (whose
theme files have other names under Zensical).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from conftest import BUILT_FOR, MANIFEST, SITE, ZENSICAL_SITE, SiteServer, no_service_worker, with_service_worker
from playwright.sync_api import expect
from test_offline import first_visit, page_requests
from test_site import change_a_control, expect_ready, expect_widgets_live, follow_nav_link, pages_in_reading_order

pytestmark = pytest.mark.browser

NOT_BUILT = "(site-zensical not built)"
WIDGET = re.compile(
    r'<div class="sd-widget[^"]*" data-widget="([a-z0-9-]+)">\s*'
    r"<template data-sd-settings\b[^>]*>(.*?)</template>\s*"
    r"(?:<template data-sd-initial\b[^>]*>(.*?)</template>)?",
    re.DOTALL,
)


def sitemap_pages(site: Path) -> list[str]:
    sitemap = site / "sitemap.xml"
    if not sitemap.exists():
        return []
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = [el.text or "" for el in ET.parse(sitemap).getroot().findall("s:url/s:loc", ns)]
    return sorted(loc.removeprefix(BUILT_FOR) for loc in locs)


def widgets(site: Path, path: str) -> list[tuple[str, Any, Any]]:
    """Each widget of a built page: (name, settings, build-time result), parsed."""
    html = (site / path / "index.html").read_text("utf-8")
    return [
        (name, json.loads(settings), json.loads(initial) if initial else None)
        for name, settings, initial in WIDGET.findall(html)
    ]


PAGES = sitemap_pages(ZENSICAL_SITE) or [NOT_BUILT]


def test_both_builders_write_the_same_pages_and_build_time_results() -> None:
    """Same sitemap; on every page the same widgets, settings and build-time results, as mkdocs wrote them."""
    if PAGES == [NOT_BUILT] or not (SITE / "sitemap.xml").exists():
        pytest.fail("build both sites first: `make site site-zensical`")
    assert sitemap_pages(ZENSICAL_SITE) == sitemap_pages(SITE)
    for path in PAGES:
        found = widgets(ZENSICAL_SITE, path)
        assert found == widgets(SITE, path), path
        assert all(initial is not None for _, settings, initial in found if "handler" in settings), path


def test_every_zensical_page_goes_live_and_its_sliders_redraw_charts(page: Any, zensical_server: SiteServer) -> None:
    """Home loaded directly, then every other page in turn by clicking its link, then home again (instant
    navigation: one document and one Python boot for the lot, as Zensical's bundle provides ``document$`` too):
    each page's widgets mount and go live, a slider next to a chart redraws it, and no error shows."""
    if PAGES == [NOT_BUILT]:
        pytest.fail("build the Zensical site first: `make site-zensical`")
    page.goto(zensical_server.base)
    expect_ready(page)
    home_widgets = expect_widgets_live(page)
    assert change_a_control(page), "the home page's lab has a slider"
    page.evaluate("window.__sdSameDocument = true")
    for path in pages_in_reading_order():
        follow_nav_link(page, zensical_server, path)
        expect_widgets_live(page)
        moved = change_a_control(page)  # False on a page without a slider next to a chart
        assert moved or path != "verify/", "Verify has a slider next to a chart"
        expect(page.locator(".sd-error")).to_have_count(0)
    follow_nav_link(page, zensical_server, "")
    assert expect_widgets_live(page) == home_widgets, "home after the walk"
    assert change_a_control(page), "the home page's lab redraws after the walk"
    assert page.evaluate("window.__sdSameDocument") is True, "a link reloaded the page (no instant navigation)"


@with_service_worker
def test_a_zensical_page_reloads_offline(page: Any, context: Any, zensical_server: SiteServer) -> None:
    """After a first visit the service worker holds Zensical's theme files too: an offline reload goes ready and
    a slider redraws its chart, with nothing but sw.js update checks reaching the server."""
    first_visit(page, zensical_server, "correct/")
    zensical_server.requests.clear()
    context.set_offline(True)
    try:
        page.reload()
        expect_ready(page)
        expect_widgets_live(page)
        assert change_a_control(page), "Correct has a slider next to a chart"
    finally:
        context.set_offline(False)
    assert page_requests(zensical_server) == [], page_requests(zensical_server)


@no_service_worker
def test_zensical_search_answers_while_python_boots(page: Any, zensical_server: SiteServer) -> None:
    """The lab holds the theme's search worker back until Python is ready (js/search-later.js), unless the reader
    opens the search box. Zensical's box sits in a shadow root: focusing it starts the worker all the same, and a
    query gets results while Python still boots."""
    zensical_server.hold(MANIFEST)  # the core's manifest waits: Python cannot be ready
    try:
        page.goto(zensical_server.base + "draft/")
        page.keyboard.press("/")  # the theme's shortcut: open the search box
        box = page.get_by_role("combobox", name="Search")
        expect(box).to_be_focused()
        box.press_sequentially("residual")
        expect(page.get_by_text(re.compile(r"^\d+ results?$"))).to_be_visible()
        expect(page.locator("[data-sd-status]")).to_have_attribute("data-sd-status", "loading")
    finally:
        zensical_server.release()


def test_zensical_search_results_read_math_as_symbols(page: Any, zensical_server: SiteServer) -> None:
    """Zensical 0.0.73 draws its results from its index as written: ``make site-zensical`` rewrites the index's TeX
    into symbols (site_assets/search_math.py), so no result quotes TeX source. The home page's "stem as tall as
    \\(\\min\\left(1, \\frac{p(x)}{q(x)}\\right)\\)" reads "min(1, (p(x))/(q(x)))"."""
    items = json.loads((ZENSICAL_SITE / "search.json").read_text("utf-8"))["items"]
    assert not [item["location"] for item in items if re.search(r"\\[(\[]", item["title"] + item["text"])]
    page.goto(zensical_server.base + "draft/")
    page.keyboard.press("/")
    box = page.get_by_role("combobox", name="Search")
    expect(box).to_be_focused()
    box.press_sequentially("uniform")
    results = page.get_by_role("dialog").get_by_role("listbox").get_by_role("option")
    expect(results.filter(has_text="stem as tall as min(1, (p(x))/(q(x)))")).to_have_count(1)
    texts = results.all_inner_texts()
    assert texts and not [t for t in texts if re.search(r"\\[(\[]", t)], texts
