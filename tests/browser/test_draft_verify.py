"""The Draft and Verify pages in Chromium: build-time paint, live n-gram rounds, Step, sliders, URL state, axe.

Expected numbers come from the same handlers run natively (``specdec_core.web.call``), so a test fails if the
browser shows anything other than what the package computes for the same arguments.
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

PROMPT = "Mr. Darcy looked at her and"
# Spelled out: ruff flags literal Greek letters as confusable.
GAMMA_LABEL = "Speculation length \N{GREEK SMALL LETTER GAMMA}"
ALPHA_LABEL = "Per-token acceptance rate \N{GREEK SMALL LETTER ALPHA}"
ARGS = {"prompt": PROMPT, "gamma": 4, "temperature": 0.8, "top_k": 0, "top_p": 1, "seed": 12}


def native(name: str, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(web.call(name, json.dumps({**ARGS, **args})))
    return result


def live(page: Any, selector: str) -> Any:
    widget = page.locator(selector)
    expect(page.locator("[data-sd-status]")).to_have_attribute("data-sd-status", "ready", timeout=30_000)
    expect(widget).to_have_attribute("data-sd-live", "true", timeout=30_000)
    expect_plotly(page)
    return widget


def metric(widget: Any, name: str) -> Any:
    return widget.locator(f'[data-metric="{name}"]')


# --- Draft ------------------------------------------------------------------------------------------------------


def test_draft_step_drafts_the_next_seeds_words(page: Any) -> None:
    visit(page, "draft/")
    widget = page.locator('.sd-widget[data-widget="draft"]').first
    chips = widget.locator(".sd-token--drafted")
    # Build-time paint: the seed-12 draft is on the page before Python is ready.
    expected = [pos["word"] for pos in native("draft.ngram")["positions"]]
    expect(chips).to_have_count(4)
    expect(chips.first).to_contain_text(expected[0])
    widget = live(page, '.sd-widget[data-widget="draft"] >> nth=0')

    chart = widget.locator(".sd-chart")
    before = renders(chart)
    # A button's change is one step, not a drag's burst: the link holds it within the same task (js/ui/widget.js, set).
    seed_in_link = widget.get_by_role("button", name="Step").evaluate(
        "button => (button.click(), new URLSearchParams(location.search).get('seed'))"
    )
    assert seed_in_link == "13"
    expect(widget.get_by_role("spinbutton", name="Seed")).to_have_value("13")
    step = native("draft.ngram", seed=13)
    expect(widget.locator(".sd-verdict")).to_contain_text("seed 13")
    words = [pos["word"] for pos in step["positions"]]
    expect(chips).to_have_count(4)
    for chip, word in zip(chips.all(), words, strict=True):
        expect(chip).to_contain_text(word)
    expect(metric(widget, "all-accepted-prob")).to_have_attribute(
        "data-value", str(step["metrics"]["all-accepted-prob"])
    )
    wait_for_renders(chart, before)
    expect(page).to_have_url(re.compile(r"seed=13"))


def test_draft_gamma_slider_changes_the_figure_and_metrics(page: Any) -> None:
    visit(page, "draft/")
    widget = live(page, '.sd-widget[data-widget="draft"] >> nth=0')
    chart = widget.locator(".sd-chart")
    before = renders(chart)
    slider = widget.get_by_role("slider", name=GAMMA_LABEL)
    slider.focus()
    slider.press("ArrowRight")
    slider.press("ArrowRight")
    expect(metric(widget, "draft-steps")).to_have_attribute("data-value", "6")
    expected = native("draft.ngram", gamma=6)["metrics"]
    expect(metric(widget, "alpha-to-gamma")).to_have_attribute("data-value", str(expected["alpha-to-gamma"]))
    expect(widget.locator(".sd-token--drafted")).to_have_count(6)
    wait_for_renders(chart, before)
    # Six panels, one per drafted word.
    assert chart.locator(".annotation").count() == 6


def test_draft_prompt_choice_and_typed_text_as_pieces(page: Any) -> None:
    visit(page, "draft/")
    widget = live(page, '.sd-widget[data-widget="draft"] >> nth=0')
    widget.get_by_label("Prompt", exact=True).select_option("Elizabeth could not help")
    expect(widget.get_by_label("Or type your own")).to_have_value("Elizabeth could not help")
    expected = native("draft.ngram", prompt="Elizabeth could not help")
    expect(widget.locator(".sd-token--drafted").first).to_contain_text(expected["positions"][0]["word"])

    box = widget.get_by_label("Or type your own")
    box.fill("Mr. Darcy bought a zeppelin")
    box.press("Tab")  # commits the text (a change event), as leaving the box does
    pieces = native("draft.ngram", prompt="Mr. Darcy bought a zeppelin")["prompt_pieces"]
    assert "▁Darcy" in pieces  # readable pieces, the leading space marked; no <unk> exists
    expect(widget.locator(".sd-dv-piece")).to_have_text(pieces)
    expect(widget.get_by_label("Prompt", exact=True)).to_have_value("")


def test_draft_prompt_is_in_the_link_and_comes_back_from_it(page: Any) -> None:
    """A reader's own prompt is state to share: the link holds it, and the link opened again drafts after the same
    words, with the preset picker on "(your own text)". A preset's words in a link pick that preset. A prompt over
    the box's 400 characters is cut, and the page says so."""
    visit(page, "draft/")
    widget = live(page, '.sd-widget[data-widget="draft"] >> nth=0')
    box = widget.get_by_label("Or type your own")
    box.fill("Mr. Darcy bought a zeppelin")
    box.press("Tab")
    expect(page).to_have_url(re.compile(r"[?&]prompt=Mr\.\+Darcy\+bought\+a\+zeppelin(&|$)"))
    link = page.url
    visit(page, "cost/")
    visit(page, link)
    widget = live(page, '.sd-widget[data-widget="draft"] >> nth=0')
    expect(widget.get_by_label("Or type your own")).to_have_value("Mr. Darcy bought a zeppelin")
    expect(widget.get_by_label("Prompt", exact=True)).to_have_value("")
    pieces = native("draft.ngram", prompt="Mr. Darcy bought a zeppelin")["prompt_pieces"]
    expect(widget.locator(".sd-dv-piece")).to_have_text(pieces)

    visit(page, "draft/?prompt=Elizabeth+could+not+help")
    widget = live(page, '.sd-widget[data-widget="draft"] >> nth=0')
    expect(widget.get_by_label("Prompt", exact=True)).to_have_value("Elizabeth could not help")

    visit(page, "draft/?prompt=" + "a" * 450)
    widget = page.locator('.sd-widget[data-widget="draft"]').first
    expect(widget.locator(".sd-notice")).to_contain_text("prompt is longer than 400 characters; cut to its first 400")
    expect(widget.get_by_label("Or type your own")).to_have_value("a" * 400)


def test_draft_risk_chart_follows_its_sliders(page: Any) -> None:
    visit(page, "draft/")
    widget = live(page, '.sd-widget[data-widget="draft"] >> nth=1')
    chart = widget.locator(".sd-chart")
    before = renders(chart)
    cost = widget.get_by_role("slider", name="Draft cost c")
    cost.fill("0.5")
    expected = json.loads(web.call("draft.risk", json.dumps({"alpha": 0.8, "cost": 0.5})))["metrics"]
    expect(metric(widget, "optimal-gamma")).to_have_attribute("data-value", str(expected["optimal-gamma"]))
    expect(metric(widget, "speedup")).to_have_attribute("data-value", str(expected["speedup"]))
    wait_for_renders(chart, before)


# --- Verify -----------------------------------------------------------------------------------------------------


def test_verify_round_shows_the_packages_decisions(page: Any) -> None:
    visit(page, "verify/")
    widget = live(page, '.sd-widget[data-widget="verify"] >> nth=0')
    for seed in (12, 13):
        if seed == 13:
            widget.get_by_role("button", name="Step").click()
            expect(widget.get_by_role("spinbutton", name="Seed")).to_have_value("13")
        result = native("verify.ngram", seed=seed)
        expect(metric(widget, "accepted")).to_have_attribute("data-value", str(result["metrics"]["accepted"]))
        expect(metric(widget, "tokens-emitted")).to_have_attribute(
            "data-value", str(result["metrics"]["tokens-emitted"])
        )
        rows = widget.locator(".sd-dv-table tbody tr")
        expect(rows).to_have_count(5)  # gamma + 1 rows from one target pass
        # Row by row, the page shows the package's u, threshold and verdict (columns: row, q, p, min(1, p/q), u,
        # verdict), and each verdict it shows follows from the u and threshold it shows: accepted iff u < min(1, p/q).
        for row, pos in zip(rows.all()[:4], result["positions"], strict=True):
            expect(row).to_have_attribute("data-outcome", pos["outcome"])
            cells = row.locator("td").all_inner_texts()
            if pos["u"] is None:
                assert cells[4] == "\N{EM DASH}" and pos["outcome"] == "discarded", cells
                continue
            assert cells[4] == f"{pos['u']:.3f}", cells
            shown_u, shown_threshold = float(cells[4]), float(cells[3])
            if abs(shown_u - shown_threshold) > 1e-3:  # both shown to 3 decimals: a closer pair could round across
                assert (shown_u < shown_threshold) == (cells[5] == "accepted"), cells
        expect(widget.locator(".sd-verdict")).to_contain_text(f"accepted {result['metrics']['accepted']}")
        expect(widget.locator(f".sd-token--{result['final']['kind']}")).to_have_text(
            re.compile(re.escape(result["final"]["word"]))
        )
    # At the default 1280 px the table fits the page's column (it scrolled sideways before), and its last column
    # wraps between the target's top tokens, never inside one ("1.5e-7").
    assert page.viewport_size["width"] == 1280
    table = widget.locator(".sd-dv-table")
    assert table.evaluate("el => el.scrollWidth <= el.clientWidth"), table.evaluate(
        "el => [el.scrollWidth, el.clientWidth]"
    )
    tops = widget.locator(".sd-dv-table .sd-dv-top")
    expect(tops).to_have_count(sum(len(row["top"]) for row in result["rows"]))
    assert tops.evaluate_all("spans => spans.every((s) => s.getClientRects().length === 1)")


def test_verify_url_state_is_clamped_and_reproduces_the_round(page: Any) -> None:
    visit(page, "verify/?gamma=99&seed=5")
    widget = page.locator('.sd-widget[data-widget="verify"]').first
    expect(widget.locator(".sd-notice")).to_contain_text("gamma 99 is out of range; clamped to 8")
    widget = live(page, '.sd-widget[data-widget="verify"] >> nth=0')
    expect(widget.get_by_role("slider", name=GAMMA_LABEL)).to_have_value("8")
    result = native("verify.ngram", gamma=8, seed=5)
    expect(metric(widget, "all-accepted-prob")).to_have_attribute(
        "data-value", str(result["metrics"]["all-accepted-prob"])
    )
    expect(widget.locator(".sd-dv-table tbody tr")).to_have_count(9)


def test_a_note_on_a_typed_value_comes_into_a_live_region_already_in_the_page(page: Any) -> None:
    """A note on a corrected value is a live region (role=status) that gets its text once it is in the page: one
    inserted with its text already in it is skipped by many screen readers."""
    visit(page, "verify/")
    widget = live(page, '.sd-widget[data-widget="verify"] >> nth=0')
    widget.evaluate(
        "(el) => { window.__sdNotes = []; new MutationObserver((records) => { for (const r of records)"
        " for (const n of r.addedNodes) if (n.classList?.contains('sd-notice'))"
        " window.__sdNotes.push([n.getAttribute('role'), n.textContent]); }).observe(el, { childList: true }); }"
    )
    box = widget.get_by_label("Top-k (0 = all tokens)")
    box.fill("100000")
    box.press("Enter")
    note = widget.locator(".sd-notice")
    expect(note).to_contain_text("top-k 100000 is out of range; clamped to")
    assert page.evaluate("window.__sdNotes") == [["status", ""]]


def test_verify_top_k_and_top_p_live_in_the_link(page: Any) -> None:
    """A link or a reload keeps the sampling knobs as it keeps the temperature: top-k and top-p are in the link, read
    from it (clamped, with a note) and written back when they move."""
    visit(page, "verify/?top-k=5&top-p=0.33&seed=5")
    widget = live(page, '.sd-widget[data-widget="verify"] >> nth=0')
    expect(widget.locator(".sd-notice")).to_have_text(["top-p 0.33 is between steps of 0.05; rounded to 0.35"])
    expect(widget.get_by_label("Top-k (0 = all tokens)")).to_have_value("5")
    result = native("verify.ngram", top_k=5, top_p=0.35, seed=5)
    expect(metric(widget, "beta")).to_have_attribute("data-value", str(result["metrics"]["beta"]))
    slider = widget.get_by_role("slider", name="Top-p")
    slider.focus()
    slider.press("ArrowRight")
    expect(page).to_have_url(re.compile(r"[?&]top-p=0\.4(&|$)"))
    expect(page).to_have_url(re.compile(r"[?&]top-k=5(&|$)"))


def test_verify_temperature_changes_the_figure_and_metrics(page: Any) -> None:
    visit(page, "verify/")
    widget = live(page, '.sd-widget[data-widget="verify"] >> nth=0')
    chart = widget.locator(".sd-chart")
    before = renders(chart)
    slider = widget.get_by_role("slider", name="Temperature")
    slider.focus()
    for _ in range(4):
        slider.press("ArrowRight")  # 0.8 -> 1.0
    expected = native("verify.ngram", temperature=1.0)["metrics"]
    expect(metric(widget, "beta")).to_have_attribute("data-value", str(expected["beta"]))
    wait_for_renders(chart, before)


def test_acceptance_rates_widget_follows_alpha(page: Any) -> None:
    visit(page, "verify/")
    widget = live(page, '.sd-widget[data-widget="verify"] >> nth=1')
    slider = widget.get_by_role("slider", name=ALPHA_LABEL)
    slider.focus()
    slider.press("ArrowLeft")
    expected = json.loads(web.call("verify.rates", json.dumps({"alpha": 0.79, "gamma": 4})))["metrics"]
    expect(metric(widget, "alpha")).to_have_attribute("data-value", "0.79")
    expect(metric(widget, "accept-rate")).to_have_attribute("data-value", str(expected["accept-rate"]))
    expect(metric(widget, "tokens-per-pass")).to_have_attribute("data-value", str(expected["tokens-per-pass"]))


@pytest.mark.parametrize(
    ("path", "nth", "names"),
    [
        ("draft/", 0, ["draft-steps", "beta", "all-accepted-prob", "alpha-to-gamma"]),
        ("verify/", 1, ["accepted", "tokens-emitted", "all-accepted-prob", "beta"]),
        ("verify/", 2, ["alpha", "accept-rate", "all-accepted-prob", "tokens-per-pass"]),
    ],
)
def test_metrics_use_the_vocabulary_and_link_to_the_converter(
    page: Any, base_url: str, path: str, nth: int, names: list[str]
) -> None:
    """Mean beta is ``beta``, accepted / drafted is ``accept-rate``: a widget that shows two of the vocabulary's
    quantities says how they relate and links to the Tuning calculator, which converts between them."""
    visit(page, path)
    widget = page.locator(".md-content .sd-widget").nth(nth)
    metrics = widget.locator("[data-metric]")
    expect(metrics).to_have_count(len(names))
    assert [m.get_attribute("data-metric") for m in metrics.all()] == names
    link = widget.locator(".sd-relation a")
    # Where the link leads (the theme's start-up may turn the widget's relative href into an absolute one).
    expect(link).to_have_js_property("href", base_url + "tuning/#the-calculator")
    link.click()
    expect(page).to_have_url(re.compile(r"/tuning/#the-calculator$"))
