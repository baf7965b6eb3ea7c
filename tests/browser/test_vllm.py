"""The Tuning page's vLLM metrics widget in the browser: paste, read the analysis, see a message for bad text.

Expected numbers and sentences come from the same handler run natively (tuning.vllm), so these tests check that
the page shows what Python in the browser computed from the reader's text. Waits are on visible state only.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from conftest import axe_violations, expect_plotly, renders, shared_page, switch_scheme, visit
from playwright.sync_api import expect

from specdec_core import web
from specdec_core.web.vllm import example

pytestmark = [pytest.mark.browser, shared_page]

BOOT_MS = 60_000
WIDGET = '.sd-widget[data-widget="tuning-vllm"]'
METRICS = ("accept-rate", "tokens-per-pass", "alpha", "optimal-gamma", "optimal-gamma-iid", "gamma")


def native(metrics: str, later: str = "", cost: float = 0.05) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(
        web.call("tuning.vllm", json.dumps({"metrics": metrics, "later": later, "cost": cost}))
    )
    return result


def open_ready(page: Any) -> Any:
    visit(page, "tuning/")
    expect(page.locator("[data-sd-status]")).to_have_attribute("data-sd-status", "ready", timeout=BOOT_MS)
    widget = page.locator(WIDGET)
    expect(widget).to_have_attribute("data-sd-live", "true", timeout=BOOT_MS)
    return widget


def expect_metrics(widget: Any, expected: dict[str, float]) -> None:
    """Wait until every tile's data-value is the native number (within 1e-9: the browser parses the JSON float)."""
    for name in METRICS:
        widget.page.wait_for_function(
            "([el, v]) => el.dataset.value !== undefined && el.dataset.value !== '' "
            "&& Math.abs(Number(el.dataset.value) - v) <= 1e-9",
            arg=[widget.locator(f'[data-metric="{name}"]').element_handle(), expected[name]],
            timeout=BOOT_MS,
        )


def rest(page: Any) -> None:
    """No focus and no pointer on the widget: a pressed button's hover and focus colours are Material's, site-wide,
    and axe should judge the page at rest."""
    page.evaluate("document.activeElement?.blur()")
    page.mouse.move(0, 0)
    # Material eases a button back from its hover colour: axe must see where it ends, not a frame of the way.
    page.wait_for_function(
        "sel => [...document.querySelectorAll(`${sel} button`)].every((b) => b.getAnimations().length === 0)",
        arg=WIDGET,
    )


def overflowing(widget: Any, width: int = 390) -> list[str]:
    """Elements of the widget whose box reaches past ``width`` (a text area's long lines scroll inside it)."""
    found: list[str] = widget.evaluate(
        "(el, w) => [el, ...el.querySelectorAll('*')].filter((e) => e.getBoundingClientRect().right > w + 0.5)"
        ".map((e) => `${e.tagName}.${e.getAttribute('class')} ${Math.round(e.getBoundingClientRect().right)}`)",
        width,
    )
    return found


def test_pasting_the_example_fills_the_metrics_figures_and_verdict(page: Any) -> None:
    """The page opens with an empty area and a prompt; the example, pasted from the clipboard, is analysed at once:
    the tiles hold the native numbers, both charts are drawn by Plotly, and the pasted text stays out of the URL."""
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    widget = open_ready(page)
    message = widget.locator(".sd-vllm-message")
    expect(message).to_have_attribute("data-state", "empty")
    expect(widget.locator(".sd-vllm-results")).to_be_hidden()
    expect(widget.get_by_text("stays in this browser tab")).to_be_visible()

    texts = example()
    area = widget.get_by_label("vLLM metrics")
    page.evaluate("text => navigator.clipboard.writeText(text)", texts["metrics"])
    area.focus()
    page.keyboard.press("ControlOrMeta+V")
    expect(area).to_have_value(texts["metrics"])
    one = native(texts["metrics"])
    expect_metrics(widget, one["metrics"])
    expect(widget.locator(".sd-vllm-summary")).to_have_text(one["summary"])

    # The Example button fills both areas: the window between the dumps is analysed.
    widget.get_by_role("button", name="Example").click()
    expect(widget.get_by_label("Later /metrics dump")).to_have_value(texts["later"])
    both = native(texts["metrics"], texts["later"])
    expect_metrics(widget, both["metrics"])
    expect(widget.locator(".sd-vllm-verdict")).to_have_text(both["verdict"]["text"])
    expect(widget.locator(".sd-vllm-evidence")).to_have_text(both["verdict"]["evidence"])
    expect(widget.locator(".sd-vllm-advice")).to_have_text(both["recommendation"])
    expect(widget.locator(".sd-vllm-table tbody tr")).to_have_count(len(both["rows"]))
    expect_plotly(page)
    for chart in widget.locator(".sd-chart").all():
        page.wait_for_function("el => Number(el.dataset.sdRenders || 0) > 0", arg=chart.element_handle())
        assert renders(chart) > 0
    assert "spec_decode" not in page.url and "metrics=" not in page.url
    # Charts made after the widget bound get their numbers as tables too, one captioned table per chart at least.
    details = widget.locator(":scope > details.sd-data")
    expect(details).to_have_count(1)
    expect(details.locator("summary")).to_have_text("The charts' numbers, as tables")
    details.locator("summary").click()
    expect(details).to_have_attribute("data-sd-tables", re.compile(r"^[1-9]"))
    captions = details.locator("caption").all_inner_texts()
    labels = widget.locator(".sd-chart").evaluate_all("(els) => els.map((e) => e.getAttribute('aria-label'))")
    assert len(labels) == 2 and all(any(c.startswith(label) for c in captions) for label in labels), captions


def test_bad_text_shows_its_message_in_place(page: Any) -> None:
    """Unreadable text and counters that go backwards each show the parser's own message inside the widget, as an
    alert, with no error banner and no numbers left on screen; fixing the text brings the analysis back. Axe finds
    nothing serious in the dark scheme, with the message and with the results."""
    widget = open_ready(page)
    area = widget.get_by_label("vLLM metrics")
    # Typed text is read once typing pauses, with the focus still in the area (it waited for the area to lose focus,
    # and the figures of the text before stayed on screen meanwhile).
    area.fill("this is not a metrics page")
    expect(area).to_be_focused()
    message = widget.locator(".sd-vllm-message")
    expect(message).to_have_attribute("data-state", "error", timeout=BOOT_MS)
    expect(message).to_have_text(native("this is not a metrics page")["message"])
    expect(message).to_have_attribute("role", "alert")
    expect(widget.locator(".sd-error")).to_have_count(0)
    expect(widget.locator(".sd-vllm-results")).to_be_hidden()

    texts = example()
    area.fill(texts["later"])  # the later dump first: every counter goes backwards
    later = widget.get_by_label("Later /metrics dump")
    later.fill(texts["metrics"])
    later.press("Tab")
    expect(message).to_contain_text("went backwards", timeout=BOOT_MS)
    expect(message).to_have_text(native(texts["later"], texts["metrics"])["message"])
    for name in METRICS:  # no number from the last good text stays on screen
        assert widget.locator(f'[data-metric="{name}"]').get_attribute("data-value") is None, name

    switch_scheme(page)  # the message, in the dark scheme, passes axe too
    rest(page)
    assert axe_violations(page, WIDGET) == []

    widget.get_by_role("button", name="Example").click()
    expect(message).to_be_hidden(timeout=BOOT_MS)
    expect(widget.locator(".sd-vllm-results")).to_be_visible()
    expect_plotly(page)
    rest(page)
    assert axe_violations(page, WIDGET) == []
    switch_scheme(page)  # back to light: the module's other tests go on in this page instead of booting another


def test_the_widget_fits_a_phone_and_passes_axe(page: Any) -> None:
    """At 390 x 844 the page does not scroll sideways, nothing in the widget reaches past the screen's right edge and
    every control shown is on screen, with results (under either cost model) and with a message; axe finds nothing
    serious in any of these states, and the settings (never the text) go into the link."""
    page.set_viewport_size({"width": 390, "height": 844})
    widget = open_ready(page)
    widget.get_by_role("button", name="Example").click()
    expect_metrics(widget, native(example()["metrics"], example()["later"])["metrics"])
    expect_plotly(page)
    assert overflowing(widget) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 390

    def on_screen() -> None:
        rest(page)
        for control in widget.locator("textarea, input, select, button").all():
            if not control.is_visible():  # the other cost model's settings
                continue
            box = control.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, control.get_attribute("name")
        assert axe_violations(page, WIDGET) == []

    on_screen()
    cost = widget.get_by_label("Draft cost c")
    cost.focus()
    page.keyboard.press("ArrowRight")
    expect(page).to_have_url(re.compile(r"[?&]cost=0\.06\b"))
    assert "spec_decode" not in page.url

    widget.get_by_label("Cost model").select_option("roofline")
    expect(widget.locator(".sd-vllm-roofline")).to_be_visible(timeout=BOOT_MS)
    assert overflowing(widget) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    on_screen()

    area = widget.get_by_label("vLLM metrics")
    area.fill("garbage")
    area.press("Tab")
    expect(widget.locator(".sd-vllm-message")).to_have_attribute("data-state", "error", timeout=BOOT_MS)
    assert overflowing(widget) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert axe_violations(page, WIDGET) == []


def test_choosing_the_roofline_changes_the_recommendation(page: Any) -> None:
    """On the example, the draft cost c = 0.05 recommends the native gamma; choosing the roofline shows its settings
    (and hides c), recommends the roofline's gamma at batch 1 and, with the batch slider at its end (1,024), the
    shorter gamma of a compute-bound verification, each time as Python natively computes it, with a link to the
    Cost page at the same settings; the settings (not the text) go into the URL."""
    widget = open_ready(page)
    widget.get_by_role("button", name="Example").click()
    texts = example()
    paper = native(texts["metrics"], texts["later"])
    expect_metrics(widget, paper["metrics"])
    expect(widget.get_by_label("Batch size")).to_be_hidden()
    expect(widget.locator(".sd-vllm-roofline")).to_be_hidden()

    widget.get_by_label("Cost model").select_option("roofline")
    expect(widget.get_by_label("Draft cost c")).to_be_hidden()
    for batch in (1, 1024):
        if batch != 1:
            slider = widget.get_by_label("Batch size")
            slider.focus()
            page.keyboard.press("End")
        args = {"metrics": texts["metrics"], "later": texts["later"], "costmodel": "roofline", "batch": batch}
        roof = json.loads(web.call("tuning.vllm", json.dumps(args)))
        expect_metrics(widget, roof["metrics"])
        expect(widget.locator(".sd-vllm-advice")).to_have_text(roof["recommendation"])
        expect(widget.locator(".sd-vllm-roofline")).to_contain_text(roof["roofline"]["text"])
        link = widget.get_by_role("link", name="See these settings on the Cost page")
        href = link.get_attribute("href") or ""
        assert href.startswith("../cost/?") and f"batch={batch}&" in href and "hardware=h100" in href
        expect(page).to_have_url(re.compile(rf"[?&]batch={batch}\b"))
    expect(page).to_have_url(re.compile(r"[?&]costmodel=roofline\b"))
    assert roof["metrics"]["optimal-gamma"] < paper["metrics"]["optimal-gamma"]
    assert "spec_decode" not in page.url
