"""Smoke test of the page side: build-time figure, worker start-up, a live slider, instant navigation, theme.

Runs the example widget "pair" on the Verify page. Expected numbers come from the same handler run natively.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from conftest import expect_plotly, renders, wait_for_renders
from playwright.sync_api import expect

from specdec_core import web

pytestmark = pytest.mark.browser

READY = "Python is ready"
ARGS = {"p": [0.4, 0.35, 0.25], "q": [0.2, 0.2, 0.6], "labels": ["cat", "dog", "fox"]}


def native_metric(name: str, **args: Any) -> float:
    value: float = json.loads(web.call("verify.pair", json.dumps({**ARGS, **args})))["metrics"][name]
    return value


def test_verify_page_paints_goes_live_and_survives_navigation(page: Any) -> None:
    page.goto("verify/")
    widget = page.locator('.sd-widget[data-widget="pair"]')
    beta = widget.locator('[data-metric="beta"]')
    chart = widget.locator(".sd-chart")

    # The build-time figure paints (whether or not Python is up yet), then Python becomes ready.
    expect(chart.locator(":is(svg.sd-sketch, .main-svg)").first).to_be_visible()
    expect(beta).to_have_attribute("data-value", str(native_metric("beta", blend=0)))
    status = page.locator("[data-sd-status]")
    expect(status).to_have_attribute("data-sd-status", "ready", timeout=30_000)
    expect(status).to_have_text(READY)
    expect(widget).to_have_attribute("data-sd-live", "true")
    expect_plotly(page)

    # Keyboard moves the slider four steps (0 -> 0.2); the worker answers and the chart redraws.
    before = renders(chart)
    slider = widget.get_by_label("Draft blend toward the target")
    slider.focus()
    for _ in range(4):
        slider.press("ArrowRight")
    expect(beta).to_have_attribute("data-value", str(native_metric("beta", blend=0.2)))
    wait_for_renders(chart, before)

    # The theme toggle restyles the chart: the axis text takes the palette's foreground colour.
    tick = chart.locator(".xtick text").first
    before = tick.evaluate("el => getComputedStyle(el).fill")
    page.locator("label.md-header__button[for^='__palette']:visible").click()
    expect(tick).not_to_have_css("fill", before)

    # Instant navigation away and back: the same worker answers (no reload), the widget mounts again and is live.
    page.evaluate("window.__sameDocument = true")
    page.get_by_role("link", name="Home").first.click()
    # The home page's 3D lab writes its settings into the query string.
    expect(page).to_have_url(re.compile(r"/lab/(\?[^/]*)?$"))
    page.get_by_role("link", name="Verify: one pass judges every guess").first.click()
    expect(page.locator('.sd-widget[data-widget="pair"]')).to_have_attribute("data-sd-live", "true")
    assert page.evaluate("window.__sameDocument") is True
    expect(status).to_have_text(READY)
