"""The Cost page in the browser: the speedup across batch sizes, URL state, memory, the race, 390 px, axe.

Expected numbers come from the same handlers run natively, so the page is checked against what Python computes,
in Pyodide and in CPython alike. Waits are on visible state (data attributes), never on time.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from conftest import axe_violations, expect_plotly, expect_query, js_number, shared_page, switch_scheme, visit
from playwright.sync_api import expect

from specdec_core import web

pytestmark = [pytest.mark.browser, shared_page]

BOOT_MS = 60_000
RACE_MS = 60_000  # the race plays in about 6 s of animation; a busy machine draws frames slowly
ROOT = '.sd-widget[data-widget="cost"]'
DEFAULTS: dict[str, Any] = dict(web.EXAMPLES["cost.model"])


def native(name: str, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(web.call(name, json.dumps(DEFAULTS | args)))
    return result


def expect_metric(page: Any, name: str, value: float, tol: float = 1e-9) -> None:
    page.wait_for_function(
        "([sel, v, tol]) => { const el = document.querySelector(sel); "
        "return el && el.dataset.value !== undefined && Math.abs(Number(el.dataset.value) - v) <= tol; }",
        arg=[f'{ROOT} [data-metric="{name}"]', value, tol],
        timeout=BOOT_MS,
    )


def open_live(page: Any, query: str = "") -> None:
    visit(page, "cost/" + query)
    expect(page.locator("[data-sd-status]")).to_have_attribute("data-sd-status", "ready", timeout=BOOT_MS)
    expect(page.locator(ROOT)).to_have_attribute("data-sd-live", "true", timeout=BOOT_MS)
    expect_plotly(page)


def test_batch_size_moves_the_speedup_across_break_even_and_the_url_round_trips(page: Any) -> None:
    """At 128 tokens of context the defaults pay at batch 1 and lose at batch 1,024; the link carries the state."""
    open_live(page, "?context=128")
    root = page.locator(ROOT)
    expect_metric(page, "speedup", native("cost.model", context=128)["metrics"]["speedup"])
    verdict = root.locator(".sd-cost-verdict")
    expect(verdict).to_have_attribute("data-pays", "true")
    batch = root.get_by_role("slider", name="Batch size")
    batch.focus()
    batch.press("End")  # the largest batch, 1,024
    slow = native("cost.model", context=128, batch=1024)["metrics"]
    assert slow["speedup"] < 1
    expect_metric(page, "speedup", slow["speedup"])
    expect(verdict).to_have_attribute("data-pays", "false")
    expect(verdict).to_contain_text("compute-bound, and every draft token the target checks now costs arithmetic time")
    expect(root.locator('[data-metric="compute-bound"]')).to_have_text("compute-bound")
    expect_query(page, batch="1024", context="128")

    # The same link in a fresh load paints the same state.
    page.goto(page.url)
    expect_metric(page, "speedup", slow["speedup"])
    expect(root.get_by_role("slider", name="Batch size")).to_have_attribute("aria-valuetext", "1,024")
    expect(root.get_by_role("slider", name="Context length")).to_have_attribute("aria-valuetext", "128")

    # Slower at batch 1 too when no draft is accepted: the pass is memory-bound there, so the verdict blames the
    # drafts, not arithmetic (it named arithmetic time for a memory-bound pass).
    open_live(page, "?context=128&batch=1&alpha=0")
    expect_metric(page, "speedup", native("cost.model", context=128, alpha=0.0)["metrics"]["speedup"])
    expect(verdict).to_have_attribute("data-pays", "false")
    expect(verdict).to_contain_text("memory-bound, so checking costs what generating one token does, but too few")


def test_out_of_range_links_are_clamped_and_said_and_70b_does_not_fit(page: Any) -> None:
    """batch=100 snaps to 128, context=99999 clamps to 32,768, weights=7 rounds to 8 bits (the select's values are
    text: the note had said "using 16"), an unknown preset falls back; the page says each.
    Then the 70B target in 16-bit weights on one H100: the page warns that it does not fit."""
    open_live(page, "?batch=100&context=99999&weights=7&hardware=tpu&gamma=4&alpha=0.8")
    root = page.locator(ROOT)
    notices = root.locator(".sd-notice")
    expect(notices.filter(has_text="batch 100")).to_contain_text("128")
    expect(notices.filter(has_text="context 99999")).to_contain_text("32768")
    expect(notices.filter(has_text="hardware")).to_contain_text("h100")
    expect(notices.filter(has_text="weights")).to_have_text("weights 7 is not one of 16, 8, 4; rounded to 8")
    expect_query(page, batch="128", context="32768", hardware="h100", weights="8")
    expect_metric(page, "speedup", native("cost.model", batch=128, context=32768, weights=8)["metrics"]["speedup"])

    root.get_by_role("slider", name="Context length").focus()
    root.get_by_role("slider", name="Context length").press("Home")
    root.get_by_label("Weights").select_option("16")
    root.get_by_label("Target model").select_option("llama-3.1-70b")
    memory = root.locator(".sd-cost-memory")
    expect(memory).to_have_attribute("data-fits", "false", timeout=BOOT_MS)
    expect(memory).to_contain_text("Does not fit")
    root.get_by_label("Hardware").select_option("8xh100")
    expect(memory).to_have_attribute("data-fits", "true", timeout=BOOT_MS)
    expect(root.locator(".sd-cost-sources")).to_contain_text("config.json")


def test_the_race_runs_both_lanes_to_the_end_and_reset_clears_it(page: Any) -> None:
    """Run plays the engine's rounds on one clock; both lanes end with the totals cost.race computes natively.
    Under prefers-reduced-motion the final state shows at once."""
    open_live(page)
    root = page.locator(ROOT)
    race = root.locator(".sd-cost-race")
    expect(race).to_have_attribute("data-race", "idle")
    want = native("cost.race", tokens=24, seed=0)
    root.get_by_role("button", name="Run").click()
    expect(race).to_have_attribute("data-race", "done", timeout=RACE_MS)
    for lane in ("plain", "speculative"):
        expect(race.locator(f'[data-lane="{lane}"]')).to_have_attribute("data-done", "true")
        expect_metric(page, f"race-{lane}-ms", want[lane]["total"], tol=1e-6)
    plain_tokens = race.locator('[data-lane="plain"] .sd-cost-race__tokens .sd-token:visible')
    expect(plain_tokens).to_have_count(24)
    emitted = race.locator(
        '[data-lane="speculative"] :is(.sd-token--accepted, .sd-token--correction, .sd-token--bonus):visible'
    )
    expect(emitted).to_have_count(24)
    verifies = [s for s in want["speculative"]["steps"] if s["kind"] == "verify"]
    expect(race.locator('[data-lane="speculative"] .sd-cost-race__seg--pass')).to_have_count(len(verifies))

    root.get_by_role("button", name="Reset").click()
    expect(race).to_have_attribute("data-race", "idle")
    expect(race.locator(".sd-cost-race__seg")).to_have_count(0)

    page.emulate_media(reduced_motion="reduce")
    root.get_by_role("button", name="Run").click()  # the second run: seed 1
    expect(race).to_have_attribute("data-race", "done", timeout=BOOT_MS)
    expect_metric(page, "race-speculative-ms", native("cost.race", tokens=24, seed=1)["speculative"]["total"], 1e-6)


def test_the_race_started_by_keyboard_keeps_the_focus_and_its_clock_never_runs_negative(page: Any) -> None:
    """Run pressed by keyboard keeps the focus through the race: disabling the focused button had dropped it to
    the page. Meanwhile Run is aria-disabled, and its presses do nothing. The clock is no live region (it ticks
    every frame), and none of its readings is below 0: the first frame's time stamp can precede the start."""
    open_live(page)
    root = page.locator(ROOT)
    race, run = root.locator(".sd-cost-race"), root.get_by_role("button", name="Run")
    clock = race.locator(".sd-cost-race__clock")
    expect(clock).to_have_attribute("aria-live", "off")
    clock.evaluate(
        "(el) => { window.__sdClock = []; new MutationObserver(() => window.__sdClock.push(el.textContent))"
        ".observe(el, { childList: true, characterData: true, subtree: true }); }"
    )
    run.focus()
    page.keyboard.press("Enter")
    expect(race).to_have_attribute("data-race", "running", timeout=BOOT_MS)
    expect(run).to_be_focused()
    expect(run).to_have_attribute("aria-disabled", "true")
    expect(race).to_have_attribute("data-race", "done", timeout=RACE_MS)
    expect(run).to_be_focused()
    expect(run).not_to_have_attribute("aria-disabled", "true")
    expect(run).to_be_enabled()
    readings = page.evaluate("window.__sdClock")
    assert readings and not [r for r in readings if r.startswith("t = -")], readings[:5]


def test_roofline_numbers_list_the_marked_passes_in_one_table(page: Any) -> None:
    """The roofline's series lie at different intensities, so ui/numbers.js gives the roof and the ridge a table
    each, and the three passes marked by a single point one table, a pass per row. Intensities and TFLOP/s read as
    the log axes show them (10 to the plotted value), from the native figure painted at build time."""
    visit(page, "cost/")
    details = page.locator(f"{ROOT} > details.sd-data")
    details.locator("summary").click()
    figure = native("cost.model")["figures"]["roofline"]
    marked = [t for t in figure["data"] if len(t["x"]) == 1]
    assert len(marked) == 3

    def cell(value: float) -> str:
        return js_number(float(f"{10**value:.4g}"))

    axes = [figure["layout"][a]["title"]["text"] for a in ("xaxis", "yaxis")]
    tables = details.locator("table").filter(has=page.locator("caption", has_text="Roofline"))
    expect(tables).to_have_count(3)
    last = tables.nth(2)
    expect(last.locator("caption")).to_have_text(re.compile(re.escape(", ".join(t["name"] for t in marked)) + r"\)$"))
    cells = last.evaluate("(t) => [...t.rows].map((r) => [...r.cells].map((c) => c.textContent))")
    assert cells == [["series", *axes], *([t["name"], cell(t["x"][0]), cell(t["y"][0])] for t in marked)]


@pytest.mark.browser_context_args(viewport={"width": 390, "height": 844})
def test_fits_390px_and_axe_finds_nothing_in_light_or_dark(page: Any) -> None:
    open_live(page)
    root = page.locator(ROOT)
    page.emulate_media(reduced_motion="reduce")
    root.get_by_role("button", name="Run").click()
    expect(root.locator(".sd-cost-race")).to_have_attribute("data-race", "done", timeout=BOOT_MS)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    for control in root.locator("input, select, button").all():
        box = control.bounding_box()
        where = control.evaluate("e => e.outerHTML.slice(0, 80)")
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, where
    for _ in range(2):
        # The page at rest: pointer off the Run button and nothing focused (Material's hover and focus colours are
        # not the state under test), and each button's colour transition over, so axe sees where it ends.
        page.mouse.move(0, 0)
        page.evaluate("document.activeElement?.blur()")
        page.wait_for_function(
            "sel => [...document.querySelectorAll(`${sel} button`)].every((b) => b.getAnimations().length === 0)",
            arg=ROOT,
        )
        assert axe_violations(page, ROOT) == []
        switch_scheme(page)
