"""Offline and repeat visits: the service worker (site_assets/sw.js, registered by js/offline.js) and the Python
worker's memory snapshot (site_assets/js/runtime/worker.js).

After a first visit has gone ready, the service worker holds the runtime and the pages visited so far in a cache
named by the build digest, and the Python worker has stored a snapshot of Pyodide's memory in a cache of its own.
These tests check that a reload with the network off still boots Python and runs the widgets, that a repeat visit
asks the server for nothing and boots from the snapshot with the same results, that a damaged or refused snapshot
means a normal boot, and that a new build digest replaces the cache. Each test has a fresh browser context, so it
starts with no worker and no cache; the server's request log shows what reached it.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from conftest import BrowserLog, SiteServer, with_service_worker
from playwright.sync_api import expect
from test_site import change_a_control, expect_ready, expect_widgets_live, follow_nav_link

pytestmark = [pytest.mark.browser, with_service_worker]

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

# The Python worker's snapshot cache; polls until an entry of this site is stored without the header ``skip`` (a
# damaged copy the test put there) or the time is up, and returns the URLs it holds.
SNAPSHOTS = "sd-snapshot"
SNAPSHOT_STORED = """async ([name, skip, ms]) => {
  const deadline = performance.now() + ms;
  const cache = await caches.open(name);
  for (;;) {
    const entries = await Promise.all((await cache.keys()).map((r) => cache.match(r).then((hit) => [r.url, hit])));
    const good = entries.filter(([, hit]) => !hit.headers.has(skip));
    if (good.length || performance.now() > deadline) return good.map(([url]) => url);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}"""
# Damages the stored snapshot, marking it with the header x-test-damaged. "body": a word in the middle flipped, the
# header intact (only the worker's checksum can tell; Pyodide 314.0.7 would spin on it). "build": the build id in
# Pyodide's header flipped and the checksum recomputed as worker.js does, so Pyodide itself refuses it, as it
# refuses a snapshot of another Pyodide build.
DAMAGE = """async ([name, how]) => {
  const cache = await caches.open(name);
  const [request] = await cache.keys();
  const stored = await cache.match(request);
  const bytes = new Uint8Array(await stored.arrayBuffer());
  const words = new Uint32Array(bytes.buffer);
  const headers = new Headers(stored.headers);
  headers.set("x-test-damaged", how);
  words[how === "body" ? words.length >> 1 : 4] ^= 0xffffffff;
  if (how === "build") {
    let sum = bytes.byteLength;
    for (let i = 0; i < words.length; i++) sum = (Math.imul(sum, 31) + words[i]) | 0;
    headers.set("x-sd-checksum", String(sum >>> 0));
  }
  await cache.put(request, new Response(bytes, { headers }));
}"""
# Seeded calls whose answers must not depend on how Python booted; runtime.info imports a stdlib module on first
# use and reads the core's bytecode files, which a snapshot boot unpacks again.
SEEDED_CALLS = [
    ["bonus.simulate", {"alpha": 0.7, "gamma": 3, "rounds": 300, "seed": 11}],
    ["runtime.info", {}],
]
CALL = "([name, args]) => window.SDLab.call(name, args)"


def stored_snapshot(page: Any, server: SiteServer) -> str:
    """Wait until the Python worker has stored this site's snapshot (after ready); returns its URL."""
    stored = page.evaluate(SNAPSHOT_STORED, [SNAPSHOTS, "x-test-damaged", OFFLINE_MS])
    assert len(stored) == 1 and stored[0].startswith(server.base + "sd-snapshot/"), stored
    return str(stored[0])


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
    navigation back to verify/ works too. A page never visited gets the worker's page that says so and links the two
    visited. Nothing reaches the server meanwhile."""
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
        # A page never visited is not in the cache: the worker's own page says so, in the site, and links the
        # pages that work offline (the browser's error page had taken the reader out of the site).
        page.goto(server.base + "cost/")
        expect(page.get_by_role("heading", name="This page is not saved for offline reading")).to_be_visible()
        saved = page.get_by_role("list").get_by_role("link")
        assert sorted(saved.evaluate_all("(links) => links.map((a) => a.href)")) == [
            server.base,
            server.base + "verify/",
        ]
        saved.filter(has_text="Verify").click()
        expect_ready(page)
        expect_widgets_live(page)
    finally:
        context.set_offline(False)
    assert page_requests(server) == [], f"requests reached the server while offline: {page_requests(server)}"


def test_a_repeat_visit_is_served_from_the_cache(
    page: Any, context: Any, server: SiteServer, browser_log: BrowserLog
) -> None:
    """A second visit to a page (a new tab, network on) gets the page, the runtime and the core from the worker's
    cache: only the browser's update check for sw.js reaches the server. Python boots from the first visit's
    snapshot, a slider redraws its chart, and seeded calls answer as they did after the first visit's fresh boot."""
    first_visit(page, server, "")
    expect(page.locator("html")).to_have_attribute("data-sd-boot", "fresh")
    stored_snapshot(page, server)
    fresh = [page.evaluate(CALL, call) for call in SEEDED_CALLS]
    assert fresh[1]["precompiled"] is True, fresh[1]
    server.requests.clear()
    again = context.new_page()
    # Its console errors and uncaught errors fail the test too (the page fixture checks browser_log).
    again.on("console", lambda m: m.type == "error" and browser_log.errors.append(f"[error] {m.text}"))
    again.on("pageerror", lambda error: browser_log.errors.append(f"[pageerror] {error}"))
    again.goto(server.base)
    expect_ready(again)
    expect(again.locator("html")).to_have_attribute("data-sd-boot", "snapshot")
    expect_widgets_live(again)
    assert change_a_control(again), "the home page's lab has a slider"
    assert [again.evaluate(CALL, call) for call in SEEDED_CALLS] == fresh, "a snapshot boot answered differently"
    assert page_requests(server) == [], f"a repeat visit fetched from the server: {page_requests(server)}"


def test_a_damaged_or_refused_snapshot_means_a_normal_boot(page: Any, server: SiteServer) -> None:
    """A stored snapshot whose bytes were damaged, and one that Pyodide refuses (another build's), are not used:
    each reload boots Python from scratch with its widgets live and no console error (the page fixture fails the
    test on one; the worker only warns), and a good snapshot replaces the bad one."""
    warnings: list[str] = []
    page.on("worker", lambda worker: worker.on("console", lambda m: warnings.append(f"[{m.type}] {m.text}")))
    page.goto(server.base + "verify/")
    expect_ready(page)
    url = stored_snapshot(page, server)
    for how in ("body", "build"):
        page.evaluate(DAMAGE, [SNAPSHOTS, how])
        page.reload()
        expect_ready(page)
        expect(page.locator("html")).to_have_attribute("data-sd-boot", "fresh")
        expect_widgets_live(page)
        assert change_a_control(page), "verify/ has a slider next to a chart"
        assert stored_snapshot(page, server) == url, f"the {how}-damaged snapshot was not replaced"
    assert len([line for line in warnings if line.startswith("[warning] booting without the stored")]) == 2, warnings
    assert not [line for line in warnings if line.startswith("[error]")], warnings


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
