"""The Token trees page in the browser: tree rounds verified live, Step in words, URL state, 390 px, axe.

Expected numbers come from the same package natively (theory of a full tree, the handler's own output); waits are
on visible state only. Each test boots the page once.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from conftest import (
    axe_violations,
    expect_plotly,
    js_number,
    renders,
    shared_page,
    switch_scheme,
    visit,
    wait_for_renders,
)
from playwright.sync_api import expect

from specdec_core import web

pytestmark = [pytest.mark.browser, shared_page]

BOOT_MS = 90_000
ROUND = '.sd-widget[data-widget="trees-round"]'
BUDGET = '.sd-widget[data-widget="trees-budget"]'
K_LABEL = "Candidates per position k"


def value(page: Any, name: str) -> float:
    return float(page.locator(f'{ROUND} [data-metric="{name}"]').get_attribute("data-value"))


def open_live(page: Any, query: str = "") -> Any:
    visit(page, "trees/" + query)
    expect(page.locator("[data-sd-status]")).to_have_attribute("data-sd-status", "ready", timeout=BOOT_MS)
    widget = page.locator(ROUND)
    expect(widget).to_have_attribute("data-sd-live", "true", timeout=BOOT_MS)
    expect_plotly(page)
    return widget


def run_to_end(page: Any, widget: Any) -> int:
    """Press Run and wait until its 200 rounds are played; returns the rounds in the tally."""
    widget.get_by_role("button", name="Run", exact=True).click()
    progress = widget.locator(".sd-trees-progress")
    expect(progress).to_have_text(re.compile(r"^Run: 200 / 200 rounds played; [\d,]+ in the tally$"), timeout=BOOT_MS)
    expect(widget).not_to_have_attribute("data-sd-running", "true", timeout=BOOT_MS)
    # The Run adds to the tally the verdict counts (the rounds before it included), and both say the same number.
    tally = re.search(r"; ([\d,]+) in the tally", progress.inner_text()).group(1)  # type: ignore[union-attr]
    expect(widget.locator(".sd-verdict")).to_contain_text(f" {tally} rounds, each from the same context")
    return int(tally.replace(",", ""))


def test_more_candidates_give_more_tokens_per_pass_and_step_explains_a_round(page: Any) -> None:
    """alpha = .5, depth 3: the full-tree theory is 1.875 tokens per pass for k = 1 and 3.005 for k = 4; 200+
    rounds put each measurement within about .3 of it (tokens per pass lies in 1..4)."""
    widget = open_live(page, "?k=1&depth=3&alpha=0.5&seed=3")
    run_to_end(page, widget)
    one = value(page, "tokens-per-pass")
    assert value(page, "tokens-per-pass-theory") == pytest.approx(1.875)

    slider = widget.get_by_label(K_LABEL, exact=True)
    slider.focus()
    for _ in range(3):
        slider.press("ArrowRight")
    expect(page).to_have_url(re.compile(r"[?&]k=4(&|$)"))
    expect(widget.locator('[data-metric="tokens-per-pass-theory"]')).to_have_attribute(
        "data-value", re.compile(r"^3\.00508"), timeout=BOOT_MS
    )
    expect(widget.locator(".sd-trees-progress")).to_have_text("")  # new settings, a new tally: the Run's line goes
    tally = run_to_end(page, widget)
    four = value(page, "tokens-per-pass")
    assert abs(one - 1.875) < 0.3 and abs(four - 3.005) < 0.3 and four > one + 0.5
    assert value(page, "exact") == 1  # 200 rounds: the first tokens pass the goodness-of-fit check

    # Step: one more round, explained level by level, the tree redrawn.
    tree = widget.locator(".sd-chart").first
    before = renders(tree)
    widget.get_by_role("button", name="Step", exact=True).click()
    wait_for_renders(tree, before)
    # The Step added one round to the Run's tally, and the progress line says so.
    expect(widget.locator(".sd-trees-progress")).to_have_text(f"Run: 200 / 200 rounds played; {tally + 1} in the tally")
    expect(widget.locator(".sd-verdict")).to_contain_text(f" {tally + 1} rounds, each from the same context")
    lines = widget.locator(".sd-trees-explain li")
    expect(lines.first).to_have_text(re.compile(r"^Round \d+: the draft built a tree of \d+ nodes"))
    expect(lines.nth(1)).to_have_text(re.compile(r"^Level 1: 4 candidates"))
    expect(lines.last).to_have_text(re.compile(r"^Emitted \d tokens? from one pass: "))
    assert re.search(r"(Correction|Bonus) “", widget.locator(".sd-trees-explain").inner_text())


def test_alpha_is_off_for_the_ngram_pair_and_says_why(page: Any) -> None:
    """alpha sets the synthetic pair only: with the n-gram pair its slider is disabled, with a line saying why (read
    out as its description), and both come back with the synthetic pair."""
    widget = open_live(page, "")
    alpha = widget.get_by_role("slider", name=re.compile("^Agreement rate"))
    why = widget.get_by_text("The n-gram pair's agreement comes from the text")
    expect(alpha).to_be_enabled()
    expect(why).to_be_hidden()
    widget.get_by_label("Model pair", exact=True).select_option("ngram")
    expect(alpha).to_be_disabled()
    expect(why).to_be_visible()
    expect(alpha).to_have_accessible_description(re.compile("^The n-gram pair's agreement comes from the text"))
    widget.get_by_label("Model pair", exact=True).select_option("agreement")
    expect(alpha).to_be_enabled()
    expect(why).to_be_hidden()
    expect(alpha).to_have_accessible_description("the per-token acceptance rate \N{GREEK SMALL LETTER ALPHA}")


def test_url_state_is_clamped_said_and_round_trips(page: Any) -> None:
    widget = open_live(page, "?k=9&depth=2&alpha=0.6&seed=7")
    expect(widget.locator(".sd-notice").first).to_contain_text("k 9 is out of range; clamped to 4")
    expect(page).to_have_url(re.compile(r"[?&]k=4(&|$)"))
    assert widget.get_by_label(K_LABEL, exact=True).input_value() == "4"
    # The round painted is the one the handler computes natively for these settings.
    native = json.loads(
        web.call(
            "trees.round",
            json.dumps({"pair": "agreement", "alpha": 0.6, "k": 4, "depth": 2, "replacement": True, "seed": 7}),
        )
    )
    expect(widget.locator(".sd-trees-explain li").first).to_have_text(native["explain"][0], timeout=BOOT_MS)

    depth = widget.get_by_label("Tree depth", exact=True)
    depth.focus()
    depth.press("ArrowRight")
    expect(page).to_have_url(re.compile(r"[?&]depth=3(&|$)"))
    page.reload()
    expect(page.locator("[data-sd-status]")).to_have_attribute("data-sd-status", "ready", timeout=BOOT_MS)
    widget = page.locator(ROUND)
    assert widget.get_by_label("Tree depth", exact=True).input_value() == "3"
    assert widget.get_by_label(K_LABEL, exact=True).input_value() == "4"
    assert widget.get_by_label("Seed", exact=True).input_value() == "7"
    expect(widget.locator(".sd-notice")).to_have_count(0)


def test_back_from_a_heading_link_keeps_the_link_at_the_state_on_screen(page: Any) -> None:
    """A table-of-contents link adds a history entry; a control moved there writes into that entry. Back lands on
    the entry before it, on the same page: its link must hold the state on screen, not the one before the move."""
    widget = open_live(page)
    page.locator(".md-sidebar--secondary a.md-nav__link", has_text="Play it").click()
    expect(page).to_have_url(re.compile(r"#play-it$"))
    k = widget.get_by_label(K_LABEL, exact=True)
    k.focus()
    k.press("ArrowRight")
    k.press("ArrowRight")
    expect(page).to_have_url(re.compile(r"[?&]k=4(&|#)"))
    page.go_back()
    expect(page).not_to_have_url(re.compile(r"#play-it"))
    expect(page).to_have_url(re.compile(r"[?&]k=4(&|$)"))
    assert k.input_value() == "4"


def cell(value: float) -> str:
    """A number as ui/numbers.js writes it in a table: an integer grouped, else 4 significant digits."""
    return f"{int(value):,}" if float(value).is_integer() else js_number(float(f"{value:.4g}"))


def test_budget_numbers_give_series_at_different_x_a_table_each(page: Any) -> None:
    """The chain and the trees are scored at different node counts: a table with a column per series would be
    mostly blank (17 rows, one value in each), so ui/numbers.js gives each series a table of its own, named in its
    caption. The tables hold the native handler's figure, the one painted at build time."""
    visit(page, "trees/")
    details = page.locator(f"{BUDGET} > details.sd-data")
    details.locator("summary").click()
    args = {"alpha": 0.7, "k": 2, "depth": 3, "replacement": True, "seed": 0, "rounds": 150}
    figure = json.loads(web.call("trees.budget", json.dumps(args)))["figures"]["budget"]
    head = [figure["layout"]["xaxis"]["title"]["text"], figure["layout"]["yaxis"]["title"]["text"]]
    tables = details.locator("table").filter(has=page.locator("caption", has_text="against nodes scored per pass"))
    expect(tables).to_have_count(len(figure["data"]))
    for n, trace in enumerate(figure["data"]):
        caption = tables.nth(n).locator("caption")
        expect(caption).to_have_text(re.compile(rf"\({n + 1} of {len(figure['data'])}: {re.escape(trace['name'])}\)$"))
        rows = [[cell(x), cell(y)] for x, y in zip(trace["x"], trace["y"], strict=True)]
        cells = tables.nth(n).evaluate("(t) => [...t.rows].map((r) => [...r.cells].map((c) => c.textContent))")
        assert cells == [head, *rows], trace["name"]
    assert sum(len(t["x"]) for t in figure["data"]) == 17


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_page_fits_390_px_and_passes_axe(page: Any, scheme: str) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    widget = open_live(page)
    expect(page.locator(BUDGET)).to_have_attribute("data-sd-live", "true", timeout=BOOT_MS)
    if scheme == "dark":
        switch_scheme(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    for control in page.locator(
        f"{ROUND} input, {ROUND} select, {ROUND} button, {BUDGET} input, {BUDGET} select"
    ).all():
        box = control.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, control.get_attribute("name")
    widget.get_by_role("button", name="Step", exact=True).click()
    expect(widget.locator(".sd-trees-explain li").last).to_have_text(re.compile(r"^Emitted "))
    # The page at rest: the pointer off the buttons and nothing focused (a hovered button takes the theme's accent).
    page.mouse.move(0, 0)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    step = widget.get_by_role("button", name="Step", exact=True).element_handle()
    page.wait_for_function("(b) => getComputedStyle(b).backgroundColor === 'rgba(0, 0, 0, 0)'", arg=step)
    serious = axe_violations(page, ".md-content")
    assert not serious, serious
