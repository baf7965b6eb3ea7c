"""The Drafters page in the browser: each control moves its chart, URL state, 390 px.

Every expected number comes from the same handler run natively with the same arguments, so these tests also check
that Pyodide and CPython agree. Waits are on visible state only; each test boots the page once. Accessibility
(axe, light and dark), keyboard operation and the build-time sketches are checked for every page in test_site.py.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from conftest import expect_plotly, renders, shared_page, visit, wait_for_renders
from playwright.sync_api import expect

from specdec_core import web

pytestmark = [pytest.mark.browser, shared_page]

BOOT_MS = 60_000
COMPARE = '.sd-widget[data-widget="drafters-compare"]'
TYPICAL = '.sd-widget[data-widget="drafters-typical"]'
PUBLISHED = '.sd-widget[data-widget="drafters-published"]'
GAMMA_LABEL = "Speculation length \N{GREEK SMALL LETTER GAMMA}"
EPSILON_LABEL = "Threshold \N{GREEK SMALL LETTER EPSILON}"
DELTA_LABEL = "Entropy factor \N{GREEK SMALL LETTER DELTA}"
COMPARE_ARGS = {"passage": "repetitive", "drafter": "lookup", "gamma": 4, "tokens": 160, "seed": 0}
TYPICAL_ARGS = {"epsilon": 0.01, "delta": 0.02, "gamma": 4, "tokens": 160, "seed": 0, "passage": "ordinary"}


def native(name: str, **args: Any) -> dict[str, float]:
    metrics: dict[str, float] = json.loads(web.call(name, json.dumps(args)))["metrics"]
    return metrics


def expect_metric(page: Any, root: str, name: str, value: float, tol: float = 1e-9) -> None:
    page.wait_for_function(
        "([sel, v, tol]) => { const el = document.querySelector(sel); "
        "return el && el.dataset.value !== '' && Math.abs(Number(el.dataset.value) - v) <= tol; }",
        arg=[f'{root} [data-metric="{name}"]', value, tol],
        timeout=BOOT_MS,
    )


def open_live(page: Any, query: str = "") -> None:
    visit(page, "drafters/" + query)
    expect(page.locator("[data-sd-status]")).to_have_attribute("data-sd-status", "ready", timeout=BOOT_MS)
    for widget in (COMPARE, TYPICAL):
        expect(page.locator(widget)).to_have_attribute("data-sd-live", "true", timeout=BOOT_MS)
    expect_plotly(page)


def step(slider: Any, key: str, times: int = 1) -> None:
    slider.focus()
    for _ in range(times):
        slider.press(key)


def test_compare_each_control_moves_its_charts(page: Any) -> None:
    open_live(page)
    widget = page.locator(COMPARE)
    positions, passes = widget.locator(".sd-chart").nth(0), widget.locator(".sd-chart").nth(1)
    args = dict(COMPARE_ARGS)
    expect_metric(page, COMPARE, "tokens-per-pass", native("drafters.compare", **args)["tokens-per-pass"])
    expect(widget.locator(".sd-table tbody tr")).to_have_count(3)

    def set_seed() -> None:
        widget.get_by_label("Seed", exact=True).fill("3")
        widget.get_by_label("Seed", exact=True).press("Tab")  # a number input commits its value on change

    changes: list[tuple[str, Any]] = [
        ("gamma", lambda: step(widget.get_by_label(GAMMA_LABEL, exact=True), "ArrowRight")),
        ("passage", lambda: widget.get_by_label("Passage", exact=True).select_option("ordinary")),
        ("drafter", lambda: widget.get_by_label("Drafter shown in the tiles", exact=True).select_option("heads")),
        ("seed", set_seed),
    ]
    values = {"gamma": 5, "passage": "ordinary", "drafter": "heads", "seed": 3}
    for key, change in changes:
        before = (renders(positions), renders(passes))
        change()
        args[key] = values[key]
        expected = native("drafters.compare", **args)
        expect_metric(page, COMPARE, "tokens-per-pass", expected["tokens-per-pass"])
        expect_metric(page, COMPARE, "accept-rate", expected["accept-rate"])
        wait_for_renders(positions, before[0])
        wait_for_renders(passes, before[1])
    expect(page).to_have_url(re.compile(r"gamma=5.*seed=3|seed=3.*gamma=5"))
    # The chosen drafter is the wide line; gamma = 5 gives five positions.
    lines = positions.evaluate("el => el.data.map(t => [t.name, t.x.length, t.line.width])")
    assert lines == [["draft model (bigram)", 5, 2], ["prompt lookup", 5, 2], ["independent heads", 5, 4]]
    expect(widget.locator(".sd-drafters-sample .sd-token").first).to_be_visible()


def test_typical_controls_move_charts_and_the_distance_stays_above_zero(page: Any) -> None:
    open_live(page)
    widget = page.locator(TYPICAL)
    positions, law = widget.locator(".sd-chart").nth(0), widget.locator(".sd-chart").nth(1)
    args = dict(TYPICAL_ARGS)
    first = native("drafters.typical", **args)
    expect_metric(page, TYPICAL, "tv-distance", first["tv-distance"])
    assert first["tv-distance"] > 0.1 and first["accept-rate-typical"] > first["accept-rate-exact"]
    expect_metric(page, TYPICAL, "tv-distance-exact", 0.0, tol=1e-12)
    expect(widget.locator(".sd-verdict")).to_contain_text("it is lossy")

    # epsilon and delta move the lossy rule (both charts); gamma moves the acceptance chart.
    for label, key, value, times in ((EPSILON_LABEL, "epsilon", 0.03, 4), (DELTA_LABEL, "delta", 0.05, 3)):
        before = (renders(positions), renders(law))
        step(widget.get_by_label(label, exact=True), "ArrowRight", times)
        args[key] = value
        expected = native("drafters.typical", **args)
        expect_metric(page, TYPICAL, "tv-distance", expected["tv-distance"])
        expect_metric(page, TYPICAL, "accept-rate-typical", expected["accept-rate-typical"])
        assert expected["tv-distance"] > 0
        wait_for_renders(positions, before[0])
        wait_for_renders(law, before[1])
        # The bar is min(epsilon, delta * e^-H) and e^-H <= 1: with epsilon at or above delta, epsilon is inert
        # (natively, 0.03 and 0.2 give the same run), and the verdict says so; below delta it says nothing of it.
        said = "so ε changes nothing: it acts only where it is below δ·e^("
        inert = widget.locator(".sd-verdict").filter(has_text=said)
        if args["epsilon"] >= args["delta"]:
            assert native("drafters.typical", **(args | {"epsilon": 0.2})) == expected
            expect(inert).to_have_count(1)
        else:
            expect(inert).to_have_count(0)
    before = renders(positions)
    step(widget.get_by_label(GAMMA_LABEL, exact=True), "ArrowLeft")
    args["gamma"] = 3
    expect_metric(page, TYPICAL, "accept-rate-exact", native("drafters.typical", **args)["accept-rate-exact"])
    wait_for_renders(positions, before)


def test_url_state_is_read_clamped_and_reproduced(page: Any) -> None:
    open_live(page, "?gamma=99&seed=7")
    widget = page.locator(COMPARE)
    expect(widget.locator(".sd-notice")).to_contain_text("gamma 99 is out of range; clamped to 8")
    expected = native("drafters.compare", **(COMPARE_ARGS | {"gamma": 8, "seed": 7}))
    expect_metric(page, COMPARE, "tokens-per-pass", expected["tokens-per-pass"])
    step(widget.get_by_label(GAMMA_LABEL, exact=True), "ArrowLeft")
    expect(page).to_have_url(re.compile(r"gamma=7"))
    url = page.url
    page.goto(url)
    expect(widget).to_have_attribute("data-sd-live", "true", timeout=BOOT_MS)
    again = native("drafters.compare", **(COMPARE_ARGS | {"gamma": 7, "seed": 7}))
    expect_metric(page, COMPARE, "tokens-per-pass", again["tokens-per-pass"])
    expect(widget.locator(".sd-notice")).to_have_count(0)

    # Typical acceptance's epsilon and delta live in the link as gamma does, read and clamped with a note.
    page.goto(url.split("?")[0] + "?epsilon=0.5&delta=0.25")
    typical = page.locator(TYPICAL)
    expect(typical.locator(".sd-notice")).to_have_text(["epsilon 0.5 is out of range; clamped to 0.2"])
    expect(typical.get_by_label("Entropy factor", exact=False)).to_have_value("0.25")
    expect(page).to_have_url(re.compile(r"epsilon=0\.2(&|$)"))


def test_narrow_screen_keeps_every_control_on_screen(page: Any) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    open_live(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    for control in page.locator(".md-content .sd-widget :is(input, select)").all():
        box = control.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    rows = page.locator(f"{PUBLISHED} tbody tr")
    expect(rows.first).to_contain_text("Leviathan")
    assert rows.count() >= 10
    # The published table may scroll inside its frame, never the page.
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
