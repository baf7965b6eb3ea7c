"""The Sampling settings page in headless Chromium: controls redraw their charts, temperature moves alpha, the pitfall
shows its verdict and the fix restores the target, URL state, 390 px, axe.

Expected numbers come from the same handler run natively: it is deterministic given a seed, and Pyodide's
``random.Random`` is CPython's Mersenne Twister, so a result computed in the browser equals the native one exactly.
Each page boots once per test and checks several things, to keep the module's run short.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import (
    axe_violations,
    end_slow_call,
    expect_plotly,
    expect_query,
    js_number,
    queue_slow_call,
    renders,
    shared_page,
    switch_scheme,
    visit,
    wait_for_renders,
)
from playwright.sync_api import expect

from specdec_core import web
from specdec_core.web import sampling

pytestmark = [pytest.mark.browser, shared_page]

ARGS = sampling.EXAMPLE | {"rounds": 480, "samples": 2000}  # the page's settings (docs/sampling.md)


def native(**args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(web.call("sampling.explore", json.dumps(ARGS | args)))
    return result


def metric(widget: Any, name: str) -> Any:
    return widget.locator(f'[data-metric="{name}"]')


def open_live(page: Any, path: str = "sampling/") -> Any:
    visit(page, path)
    widget = page.locator('.sd-widget[data-widget="sampling-lab"]')
    expect(widget.locator(".sd-chart :is(svg.sd-sketch, .main-svg), .sd-pending").first).to_be_visible()
    expect(page.locator("[data-sd-status]")).to_have_attribute("data-sd-status", "ready", timeout=60_000)
    expect(widget).to_have_attribute("data-sd-live", "true", timeout=60_000)
    expect_plotly(page)
    return widget


def set_range(widget: Any, label: str, value: float) -> None:
    widget.get_by_label(label, exact=True).fill(str(value))


def set_number(widget: Any, label: str, value: int) -> None:
    field = widget.get_by_label(label)
    field.fill(str(value))
    field.press("Enter")


def test_each_control_moves_its_chart_and_temperature_moves_alpha(page: Any) -> None:
    """Top-p redraws the alpha curves; temperature moves alpha (at 0 it equals the share of agreeing argmaxes, exactly);
    top-k redraws beta per context; the seed moves the measured alpha, not the exact one. Numbers equal native runs."""
    widget = open_live(page)
    start = native()
    expect(metric(widget, "alpha-exact")).to_have_attribute("data-value", js_number(start["metrics"]["alpha-exact"]))
    alpha_chart, context_chart = widget.locator(".sd-chart").nth(0), widget.locator(".sd-chart").nth(1)

    before = renders(alpha_chart)
    set_range(widget, "Top-p", 0.5)
    top_p = native(top_p=0.5)["metrics"]
    expect(metric(widget, "alpha-exact")).to_have_attribute("data-value", js_number(top_p["alpha-exact"]))
    wait_for_renders(alpha_chart, before)

    before = renders(context_chart)
    set_range(widget, "Temperature", 0)
    greedy = native(top_p=0.5, temperature=0.0)["metrics"]
    assert greedy["alpha"] == greedy["argmax-agree"] != start["metrics"]["alpha"]
    expect(metric(widget, "alpha")).to_have_attribute("data-value", js_number(greedy["alpha"]))
    expect(metric(widget, "argmax-agree")).to_have_attribute("data-value", js_number(greedy["argmax-agree"]))
    expect(widget.locator(".sd-verdict").first).to_contain_text("the two argmaxes agree")
    wait_for_renders(context_chart, before)
    expect_query(page, temperature="0")

    set_range(widget, "Temperature", 1.5)
    before = renders(context_chart)
    set_number(widget, "Top-k", 5)
    top_k = native(top_p=0.5, temperature=1.5, top_k=5)["metrics"]
    expect(metric(widget, "alpha-exact")).to_have_attribute("data-value", js_number(top_k["alpha-exact"]))
    wait_for_renders(context_chart, before)

    set_number(widget, "Seed", 3)
    seeded = native(top_p=0.5, temperature=1.5, top_k=5, seed=3)["metrics"]
    assert seeded["alpha"] != top_k["alpha"] and seeded["alpha-exact"] == top_k["alpha-exact"]
    expect(metric(widget, "alpha")).to_have_attribute("data-value", js_number(seeded["alpha"]))
    expect_query(page, **{"seed": "3", "top-k": "5", "top-p": "0.5"})


def test_a_slow_answer_marks_the_widget_busy_until_it_is_painted(page: Any) -> None:
    """A change Python has not answered for a while says so: aria-busy on the widget, a "Computing…" badge, its
    charts dimmed (not its text, which would fall below 3:1). All of it goes once the answer is painted, and the
    numbers on screen are the new settings'."""
    widget = open_live(page)
    tiles, chart = widget.locator(".sd-tiles").first, widget.locator(".sd-chart").first
    expect(widget).not_to_have_attribute("aria-busy", "true")
    expect(chart).to_have_css("opacity", "1")
    queue_slow_call(page)
    set_range(widget, "Temperature", 0.5)
    expect(widget).to_have_attribute("aria-busy", "true")
    assert widget.evaluate("(el) => getComputedStyle(el, '::before').content") == '"Computing…"'
    expect(chart).to_have_css("opacity", "0.55")
    expect(tiles).to_have_css("opacity", "1")
    expected = native(temperature=0.5)["metrics"]
    expect(metric(widget, "alpha")).to_have_attribute("data-value", js_number(expected["alpha"]), timeout=60_000)
    expect(widget).not_to_have_attribute("aria-busy", "true")
    assert widget.get_attribute("data-sd-busy") is None
    expect(chart).to_have_css("opacity", "1")
    end_slow_call(page)  # the next test's calls do not wait behind it


def test_the_pitfall_shows_its_verdict_and_the_fix_restores_the_target(page: Any) -> None:
    """The pitfall: 2,000 rounds whose TV from p is far above the noise level, and the chi-square rejects. The fix
    (the one-hot declared): exact TV 0 and a sample consistent with p. Both equal the native results."""
    widget = open_live(page)
    broken = native()["metrics"]
    expect(metric(widget, "exact")).to_have_attribute("data-value", "0")
    expect(metric(widget, "tv-distance")).to_have_attribute("data-value", js_number(broken["tv-distance"]))
    assert broken["tv-distance"] > 5 * broken["tv-noise"]
    verdict = widget.locator(".sd-sampling-pitfall .sd-verdict").last
    expect(verdict).to_contain_text("The output is not the target")
    expect(widget.get_by_role("button", name="Its softmax (the pitfall)")).to_have_attribute("aria-pressed", "true")

    pitfall_chart = widget.locator(".sd-sampling-pitfall .sd-chart")
    before = renders(pitfall_chart)
    widget.get_by_role("button", name="The one-hot it sampled from (the fix)").click()
    fixed = native(declared="sampled")["metrics"]
    assert fixed["exact"] == 1 and fixed["exact-tv"] == 0
    expect(metric(widget, "exact")).to_have_attribute("data-value", "1", timeout=60_000)
    expect(metric(widget, "exact-tv")).to_have_text("0 (exactly p)")
    expect(metric(widget, "tv-distance")).to_have_attribute("data-value", js_number(fixed["tv-distance"]))
    expect(verdict).to_contain_text("the output is the target again")
    wait_for_renders(pitfall_chart, before)

    # Settings that leave one token to sample (a top-p only the likeliest token reaches, at temperature 1; then
    # temperature 0): no noise to compare with, and the verdict names the setting that did it (it once blamed
    # temperature 0 at temperature 1.00 and top-p 0.05).
    for label, setting, said in (
        ("Top-p", {"top_p": 0.05}, "With top-p 0.05, the target is one token"),
        ("Temperature", {"temperature": 0.0}, "At temperature 0 the target is one token"),
    ):
        one = native(declared="sampled", **setting)["metrics"]
        assert one["tv-noise"] == 0 == one["tv-distance"]
        slider = widget.get_by_role("slider", name=label)
        slider.focus()
        slider.press("Home")
        expect(verdict).to_contain_text(f"{said}, and every round emitted it", timeout=60_000)
        expect(verdict).to_contain_text("with no sampling noise at all")
        slider.press("End")
        expect(verdict).to_contain_text("the output is the target again", timeout=60_000)


def test_url_state_is_clamped_and_said(page: Any) -> None:
    widget = open_live(page, "sampling/?temperature=5&top-k=-3&top-p=0.5&seed=7")
    notices = widget.locator(".sd-notice")
    expect(notices.filter(has_text="temperature 5 is out of range; clamped to 2")).to_have_count(1)
    expect(notices.filter(has_text="top-k -3 is out of range; clamped to 0")).to_have_count(1)
    expect(widget.get_by_label("Temperature", exact=True)).to_have_value("2")
    expect(widget.get_by_label("Top-p", exact=True)).to_have_value("0.5")
    clamped = native(temperature=2.0, top_k=0, top_p=0.5, seed=7)["metrics"]
    expect(metric(widget, "alpha")).to_have_attribute("data-value", js_number(clamped["alpha"]), timeout=60_000)
    expect_query(page, **{"temperature": "2", "top-k": "0"})


@pytest.mark.browser_context_args(viewport={"width": 390, "height": 844})
def test_fits_390px_and_passes_axe_in_both_schemes(page: Any) -> None:
    widget = open_live(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    for label in ("Temperature", "Top-p", "Top-k", "Seed"):
        box = widget.get_by_label(label).first.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, label
    for name in ("Its softmax (the pitfall)", "The one-hot it sampled from (the fix)"):
        box = widget.get_by_role("button", name=name).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, name
    serious = axe_violations(page, ".md-content")
    assert not serious, serious
    switch_scheme(page)
    serious = axe_violations(page, ".md-content")
    assert not serious, serious
