"""Offline and repeat visits: the service worker (site_assets/sw.js, registered by js/offline.js).

After a first visit has gone ready, the worker holds the runtime and the pages visited so far in a cache named by
the build digest. These tests check that a reload with the network off still boots Python and runs the widgets,
that a repeat visit asks the server for nothing, and that a new build digest replaces the cache. Each test has a
fresh browser context, so it starts with no worker and no cache; the server's request log shows what reached it.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from conftest import BrowserLog, SiteServer
from playwright.sync_api import expect
from test_site import change_a_control, expect_ready, expect_widgets_live, follow_nav_link

pytestmark = pytest.mark.browser

# Installing the worker fetches the whole runtime again (revalidated against the HTTP cache) after the page is ready.
OFFLINE_MS = 60_000
CACHE_PREFIX = "sd-lab-"
# Polls the page's caches until ``want`` is the only cache of the lab, or the time is up; returns what it saw last.
CACHES_BECOME = """async ([prefix, want, ms]) => {
  const deadline = performance.now() + ms;
  for (;;) {
    const keys = (await caches.keys()).filter((key) => key.startsWith(prefix));
    if ((keys.length === 1 && keys[0] === want) || performance.now() > deadline) return keys;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}"""


def page_requests(server: SiteServer) -> list[str]:
    """What reached the server, but for the browser's own update checks of sw.js: Chromium makes them on every
    navigation, and Playwright's offline switch does not cover them (offline, they fail quietly)."""
    return [path for path in server.requests if not path.endswith("/sw.js")]


def first_visit(page: Any, server: SiteServer, path: str) -> str:
    """Open ``path``, wait until it is live and the service worker holds everything; returns the build version."""
    page.goto(server.base + path)
    expect_ready(page)
    expect_widgets_live(page)
    root = page.locator("html")
    expect(root).to_have_attribute("data-sd-offline", "ready", timeout=OFFLINE_MS)
    version = root.get_attribute("data-sd-offline-version") or ""
    assert re.fullmatch(r"[0-9a-f]{16}", version), version
    scope = page.evaluate("navigator.serviceWorker.controller && navigator.serviceWorker.ready.then((r) => r.scope)")
    assert scope == server.base, f"the worker's scope should be the site root under its sub-path: {scope}"
    return version


def test_an_offline_reload_goes_ready_and_widgets_go_live(page: Any, context: Any, server: SiteServer) -> None:
    """Pages once visited work offline: after visiting verify/ and then the home page (by instant navigation, so
    through the worker), a reload offline boots Python from the cache and a slider redraws its chart; instant
    navigation back to verify/ works too. Nothing reaches the server meanwhile."""
    first_visit(page, server, "verify/")
    follow_nav_link(page, server, "")
    expect_widgets_live(page)
    server.requests.clear()
    context.set_offline(True)
    try:
        page.reload()
        expect_ready(page)
        expect_widgets_live(page)
        assert change_a_control(page), "the home page's lab has a slider"
        follow_nav_link(page, server, "verify/")
        expect_widgets_live(page)
        assert change_a_control(page), "verify/ has a slider next to a chart"
        expect(page.locator(".sd-error")).to_have_count(0)
    finally:
        context.set_offline(False)
    assert page_requests(server) == [], f"requests reached the server while offline: {page_requests(server)}"


def test_a_repeat_visit_is_served_from_the_cache(
    page: Any, context: Any, server: SiteServer, browser_log: BrowserLog
) -> None:
    """A second visit to a page (a new tab, network on) gets the page, the runtime and the core from the worker's
    cache: only the browser's update check for sw.js reaches the server."""
    first_visit(page, server, "")
    server.requests.clear()
    again = context.new_page()
    # Its console errors and uncaught errors fail the test too (the page fixture checks browser_log).
    again.on("console", lambda m: m.type == "error" and browser_log.errors.append(f"[error] {m.text}"))
    again.on("pageerror", lambda error: browser_log.errors.append(f"[pageerror] {error}"))
    again.goto(server.base)
    expect_ready(again)
    expect_widgets_live(again)
    assert page_requests(server) == [], f"a repeat visit fetched from the server: {page_requests(server)}"


def test_a_new_build_digest_replaces_the_cache(page: Any, server: SiteServer) -> None:
    """A redeploy changes sw.js (its build digest): the browser installs the new worker, which drops the old cache,
    and the page still goes ready."""
    old = first_visit(page, server, "")
    assert page.evaluate(CACHES_BECOME, [CACHE_PREFIX, CACHE_PREFIX + old, 0]) == [CACHE_PREFIX + old]
    new = "0123456789abcdef"
    source = (server.site / "sw.js").read_bytes()
    assert f'"version":"{old}"'.encode() in source
    server.replace("/sw.js", source.replace(f'"version":"{old}"'.encode(), f'"version":"{new}"'.encode()))
    page.reload()  # a navigation makes the browser compare sw.js with the installed one
    expect_ready(page)
    assert page.evaluate(CACHES_BECOME, [CACHE_PREFIX, CACHE_PREFIX + new, OFFLINE_MS]) == [CACHE_PREFIX + new]
    expect_widgets_live(page)
