"""The Correct, Bonus and Why-it-is-exact pages in headless Chromium: ready, live, controls redraw, honest samples.

Expected numbers come from the same handlers run natively. The handlers are deterministic given a seed, and Pyodide's
``random.Random`` is CPython's Mersenne Twister, so a sample drawn in the browser equals the native one exactly.
Every statistical check also holds on its own: an exact sampler's total variation over k cells from n draws exceeds

    tv_bound(n, k) = sqrt(k / n) / 2 + sqrt(ln(1 / delta) / (2 n)),   delta = 1e-9

with probability below 1e-9 (the bound of tests/_stats.py: mean bound by Jensen, tail by McDiarmid).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest
from conftest import (
    end_slow_call,
    expect_plotly,
    expect_query,
    js_number,
    queue_slow_call,
    renders,
    shared_page,
    visit,
    wait_for_renders,
)
from playwright.sync_api import expect

from specdec_core import theory, web

pytestmark = [pytest.mark.browser, shared_page]

READY = "Python is ready"
P = [0.4, 0.35, 0.25]
Q = [0.2, 0.2, 0.6]
# The labels the pages show (escaped: the linter flags Greek letters that look like Latin ones).
GAMMA_LABEL = "Speculation length \u03b3"
ALPHA_LABEL = "Agreement rate \u03b1"


def tv_bound(n: int, k: int, delta: float = 1e-9) -> float:
    return 0.5 * math.sqrt(k / n) + math.sqrt(math.log(1.0 / delta) / (2.0 * n))


def native(name: str, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(web.call(name, json.dumps(args)))
    return result


def metric(widget: Any, name: str) -> Any:
    return widget.locator(f'[data-metric="{name}"]')


def value(widget: Any, name: str) -> float:
    return float(metric(widget, name).get_attribute("data-value"))


def open_live(page: Any, path: str, widget_name: str) -> Any:
    visit(page, path)
    widget = page.locator(f'.sd-widget[data-widget="{widget_name}"]')
    # The build-time paint (a sketch or Plotly's chart, or a table), or the note that the URL asks for other numbers.
    expect(widget.locator(".sd-chart :is(svg.sd-sketch, .main-svg), table, .sd-pending").first).to_be_visible()
    status = page.locator("[data-sd-status]")
    expect(status).to_have_attribute("data-sd-status", "ready", timeout=60_000)
    expect(status).to_have_text(READY)
    expect(widget).to_have_attribute("data-sd-live", "true", timeout=30_000)
    expect_plotly(page)
    return widget


# Correct -------------------------------------------------------------------------------------------------------


def test_correct_presets_and_sliders_redraw_and_keep_the_identity(page: Any) -> None:
    widget = open_live(page, "correct/", "correct-split")
    worked = native("correct.split", preset="worked")
    expect(metric(widget, "beta")).to_have_attribute("data-value", js_number(worked["metrics"]["beta"]))
    expect(widget.get_by_role("button", name="Our example")).to_have_attribute("aria-pressed", "true")

    proof = widget.locator(".sd-chart").nth(1)
    before = renders(proof)
    widget.get_by_role("button", name="Disjoint supports").click()
    expect(widget.get_by_role("button", name="Disjoint supports")).to_have_attribute("aria-pressed", "true")
    expect(metric(widget, "beta")).to_have_attribute("data-value", "0")
    wait_for_renders(proof, before)

    # Keyboard: four steps of 0.05 on the blend slider; the numbers come from Python in the page.
    blend = widget.get_by_label("Blend draft toward target")
    blend.focus()
    for _ in range(4):
        blend.press("ArrowRight")
    moved = native("correct.split", preset="disjoint", blend=0.2)["metrics"]
    expect(metric(widget, "beta")).to_have_attribute("data-value", js_number(moved["beta"]))
    expect(metric(widget, "reject-rate")).to_have_attribute("data-value", js_number(moved["reject-rate"]))
    # The stacked picture's claim, checked by Python for the reader's current pair.
    assert value(widget, "identity-gap") <= 1e-12
    expect_query(page, preset="disjoint", temperature="1", shift="0", blend="0.2")  # the pair is in the link
    # The pair is no longer the preset: no chip claims it; pressing the chip again restores the preset and its tick.
    expect(widget.locator('.sd-chips button[aria-pressed="true"]')).to_have_count(0)
    widget.get_by_role("button", name="Disjoint supports").click()
    expect(widget.get_by_role("button", name="Disjoint supports")).to_have_attribute("aria-pressed", "true")
    expect(blend).to_have_value("0")

    # Temperature cannot bend a one-hot draft, and the widget says so (only for that draft).
    note = widget.locator('[data-sd-note="temperature"]')
    expect(note).to_be_hidden()
    widget.get_by_role("button", name="One-hot draft").click()
    expect(note).to_contain_text("a one-hot draft stays one-hot at any temperature")
    temperature = widget.get_by_label("Draft temperature")
    temperature.focus()
    temperature.press("End")
    hot = native("correct.split", preset="one-hot", temperature=4.0)
    assert hot["q"] == native("correct.split", preset="one-hot")["q"]
    expect(metric(widget, "beta")).to_have_attribute("data-value", js_number(hot["metrics"]["beta"]))
    expect(note).to_be_visible()
    widget.get_by_role("button", name="Our example").click()
    expect(note).to_be_hidden()


def test_correct_pair_comes_back_from_the_link(page: Any) -> None:
    """A link to a bent pair reopens that pair: its sliders, its numbers from Python, and no chip ticked."""
    widget = open_live(page, "correct/?preset=disjoint&temperature=1.5&blend=0.2", "correct-split")
    expected = native("correct.split", preset="disjoint", temperature=1.5, shift=0, blend=0.2)["metrics"]
    expect(widget.get_by_label("Blend draft toward target")).to_have_value("0.2")
    expect(metric(widget, "beta")).to_have_attribute("data-value", js_number(expected["beta"]))
    expect(widget.locator(".sd-chips button")).to_have_count(4)
    expect(widget.locator('.sd-chips button[aria-pressed="true"]')).to_have_count(0)
    expect(page.locator(".sd-notice")).to_have_count(0)


def test_correct_pair_from_a_link_with_an_unknown_preset_says_so_and_keeps_the_default(page: Any) -> None:
    """A chip row in the link accepts only its own values (its options: ui/url.js reads them as the choices)."""
    widget = open_live(page, "correct/?preset=bogus", "correct-split")
    expect(page.locator(".sd-notice")).to_have_text(
        "preset \u201cbogus\u201d is not one of worked, disjoint, equal, one-hot; using worked"
    )
    expect(widget.get_by_role("button", name="Our example")).to_have_attribute("aria-pressed", "true")
    expect_query(page, preset="worked")  # the corrected link


def test_correct_sample_button_runs_the_real_round_in_the_browser(page: Any) -> None:
    """10,000 rounds at our worked pair: TV <= tv_bound(10_000, 3) ~ 0.041, and equal to the native run."""
    widget = open_live(page, "correct/", "correct-split")
    n = 10_000
    sample = widget.get_by_role("button", name="Sample 10,000 rounds")
    expect(metric(widget, "tv-distance")).to_have_text("not sampled")  # nothing measured yet, not "loading"
    sample.click()
    expect(metric(widget, "tv-distance")).to_have_attribute("data-value", re.compile(r"\d"), timeout=60_000)
    # The page shows the native sample of the same seed exactly; that sample's statistics are stated on it here.
    expected = native("correct.sample", p=P, q=Q, n=n, seed=0)["metrics"]
    assert expected["tv-distance"] <= tv_bound(n, 3)
    expect(metric(widget, "tv-distance")).to_have_attribute("data-value", js_number(expected["tv-distance"]))
    expect(metric(widget, "p-value")).to_have_attribute("data-value", js_number(expected["p-value"]))
    expect(metric(widget, "exact")).to_have_attribute("data-value", js_number(expected["exact"]))
    expect(widget.locator(".sd-chart").nth(2)).to_be_visible()
    # The seed is the reader's: Sample never changes it, so a second press shows the same sample again.
    seed = widget.get_by_role("spinbutton", name="Seed")
    expect(seed).to_have_value("0")
    paints = int(widget.get_attribute("data-sd-paints") or 0)
    # Its answer waits behind a long call: the widget's own message says it is running until the sample is painted,
    # and the binding's busy mark stays off (it would dim that message as stale).
    widget.evaluate(
        """(el) => { el.sdBusySeen = false;
            new MutationObserver(() => { el.sdBusySeen ||= "sdBusy" in el.dataset; })
              .observe(el, { attributes: true, attributeFilter: ["data-sd-busy"] }); }"""
    )
    queue_slow_call(page)
    sample.click()
    expect(widget.get_by_text("Running 10,000 rounds of the real algorithm")).to_be_visible()
    expect(sample).to_be_disabled()
    page.wait_for_function(
        "([el, n]) => Number(el.dataset.sdPaints) > n", arg=[widget.element_handle(), paints], timeout=60_000
    )
    assert widget.evaluate("(el) => el.sdBusySeen") is False  # never set for an action, however long it waited
    expect(sample).to_be_enabled()
    end_slow_call(page)
    expect(seed).to_have_value("0")
    expect(metric(widget, "tv-distance")).to_have_attribute("data-value", js_number(expected["tv-distance"]))
    # Changing the pair makes the sample stale: its metrics are cleared, not left standing for another pair.
    widget.get_by_role("button", name="One-hot draft").click()
    expect(metric(widget, "tv-distance")).not_to_have_attribute("data-value", re.compile(r"."))


def test_correct_sample_asked_for_one_pair_is_not_shown_for_the_next(page: Any) -> None:
    """Sample is pressed and the blend slider moves before the sample's answer can arrive (one task in the page):
    the answer belongs to the old pair, so it is never shown as the new pair's verdict."""
    widget = open_live(page, "correct/", "correct-split")
    sample = widget.get_by_role("button", name="Sample 10,000 rounds")
    widget.evaluate(
        """el => {
            [...el.querySelectorAll('button')].find((b) => b.textContent.startsWith('Sample')).click();
            const blend = el.querySelector('input[name=blend]');
            blend.value = '0.5';
            blend.dispatchEvent(new Event('input', { bubbles: true }));
        }"""
    )
    expect(sample).to_be_enabled(timeout=60_000)  # the sample's call has ended
    moved = native("correct.split", preset="worked", blend=0.5)["metrics"]
    expect(metric(widget, "beta")).to_have_attribute("data-value", js_number(moved["beta"]))
    expect(widget.locator(".sd-verdict")).to_contain_text("sample again")
    for name in ("tv-distance", "p-value", "exact"):
        expect(metric(widget, name)).not_to_have_attribute("data-value", re.compile(r"."))
    expect(widget.locator(".sd-chart").nth(2)).to_be_hidden()
    expect(widget.get_by_role("spinbutton", name="Seed")).to_have_value("0")  # no sample was counted as drawn


# Bonus ---------------------------------------------------------------------------------------------------------


def test_bonus_sliders_change_the_figure_metrics_and_url(page: Any) -> None:
    widget = open_live(page, "bonus/", "bonus-sim")
    # The slider's name is the contract's; its description ties it to the tiles' per-token acceptance rate.
    expect(widget.get_by_label(ALPHA_LABEL)).to_have_accessible_description("the per-token acceptance rate \u03b1")
    theory_metric = metric(widget, "tokens-per-pass-theory")
    expect(theory_metric).to_have_attribute("data-value", js_number(round(theory.expected_tokens(0.8, 4), 12)))
    counts = widget.locator(".sd-chart").first
    before = renders(counts)

    gamma = widget.get_by_label(GAMMA_LABEL)
    gamma.focus()
    gamma.press("ArrowRight")
    expect(theory_metric).to_have_attribute("data-value", js_number(round(theory.expected_tokens(0.8, 5), 12)))
    wait_for_renders(counts, before)
    expect(page).to_have_url(re.compile(r"gamma=5"))
    # The page shows the native simulation of the same seed exactly (its statistics are tests/test_web_bonus.py's).
    simulated = native("bonus.simulate", alpha=0.8, gamma=5, rounds=2000, seed=0)["metrics"]
    for name in ("tokens-per-pass", "bonus-share", "alpha"):
        expect(metric(widget, name)).to_have_attribute("data-value", js_number(simulated[name]))

    summary = widget.locator(".sd-verdict")
    expect(summary).to_contain_text("the rounds emitted between 1 and 6 tokens")

    # alpha = 0: every first draft is rejected; one token (the correction) per pass, never a bonus.
    alpha = widget.get_by_label(ALPHA_LABEL)
    alpha.focus()
    alpha.press("Home")
    expect(metric(widget, "tokens-per-pass")).to_have_attribute("data-value", "1")
    expect(metric(widget, "bonus-share")).to_have_attribute("data-value", "0")
    expect(summary).to_contain_text("every round emitted exactly 1 token.")
    # alpha = 1: every round accepts all 5 drafts and takes the bonus; the summary says exactly that, and the last
    # bar's simulated marker (at 1) lies inside the chart's y range.
    alpha.press("End")
    expect(metric(widget, "bonus-share")).to_have_attribute("data-value", "1")
    expect(summary).to_contain_text("every round emitted exactly 6 tokens.")
    expect(summary).not_to_contain_text("between")
    top = counts.evaluate("el => el._fullLayout.yaxis.range[1]")
    assert top > 1.0


def test_bonus_reports_alpha_and_links_to_the_converter(page: Any, base_url: str) -> None:
    """accepted / checked estimates alpha (metric ``alpha``, beside the set ``alpha-theory``), not the draft
    acceptance rate; the widget says how alpha gives tokens per pass and links to the Tuning calculator."""
    widget = open_live(page, "bonus/", "bonus-sim")
    expected = native("bonus.simulate", alpha=0.8, gamma=4, rounds=2000, seed=0)["metrics"]
    expect(metric(widget, "alpha")).to_have_attribute("data-value", js_number(expected["alpha"]))
    expect(metric(widget, "alpha-theory")).to_have_attribute("data-value", "0.8")
    expect(widget.locator('[data-metric="accept-rate"]')).to_have_count(0)
    relation = widget.locator(".sd-relation")
    expect(relation).to_contain_text("Tokens per target pass = (1 \u2212 \u03b1\u03b3+1) / (1 \u2212 \u03b1)")
    expect(relation.locator("sup").first).to_have_text("\u03b3+1")  # the power is raised, not a caret formula
    # Where the link leads (the theme's start-up may turn the widget's relative href into an absolute one).
    expect(widget.locator(".sd-relation a")).to_have_js_property("href", base_url + "tuning/#the-calculator")


def test_bonus_url_state_is_clamped_with_a_notice(page: Any) -> None:
    widget = open_live(page, "bonus/?gamma=99&alpha=0.5", "bonus-sim")
    expect(widget.locator(".sd-notice")).to_contain_text("gamma 99 is out of range; clamped to 8")
    expect(widget.get_by_label(GAMMA_LABEL)).to_have_value("8")
    expected = round(theory.expected_tokens(0.5, 8), 12)
    expect(metric(widget, "tokens-per-pass-theory")).to_have_attribute("data-value", js_number(expected))


# Why it is exact -----------------------------------------------------------------------------------------------


def test_exact_check_tables_are_computed_for_the_readers_weights(page: Any) -> None:
    widget = open_live(page, "exactness/", "exact-check")
    expect(metric(widget, "exact")).to_have_attribute("data-value", "1")
    expect(widget.locator(".sd-cbe-check--ok")).to_have_count(12)

    widget.get_by_label("Target weight C").fill("0")
    widget.get_by_label("Target weight C").press("Tab")  # a number input commits on change
    expected = native("exactness.check", p=[8, 7, 0], q=[1, 1, 3], gamma=2)
    cells = expected["metrics"]["cells-checked"]
    expect(metric(widget, "cells-checked")).to_have_attribute("data-value", js_number(cells))
    expect(widget.locator(".sd-cbe-check--ok")).to_have_count(cells)
    expect(widget.locator(".sd-cbe-check--bad")).to_have_count(0)
    expect(widget.locator("tbody").first).to_contain_text(expected["position"][0]["emitted"])

    # gamma decides how far the whole-round check reaches: the first gamma + 1 tokens, counted and named.
    verdict = widget.locator(".sd-verdict")
    expect(verdict).to_contain_text("with \u03b3 = 2")
    gamma = widget.get_by_label(GAMMA_LABEL)
    gamma.focus()
    gamma.press("End")
    expect(gamma).to_have_value("3")
    deeper = native("exactness.check", p=[8, 7, 0], q=[1, 1, 3], gamma=3)
    prefixes = deeper["metrics"]["round-prefixes"]
    assert prefixes > expected["metrics"]["round-prefixes"]
    expect(metric(widget, "round-prefixes")).to_have_attribute("data-value", js_number(prefixes))
    expect(verdict).to_contain_text(f"all {prefixes} prefixes of 4 tokens, as many as one round with \u03b3 = 3")
    expect(metric(widget, "exact")).to_have_attribute("data-value", "1")

    # The reader's weights and gamma are in the link, and come back from it: the same tables, computed for them.
    expect(page).to_have_url(re.compile(r"[?&]p2=0(&|$)"))
    expect(page).to_have_url(re.compile(r"[?&]gamma=3(&|$)"))
    widget = open_live(page, page.url, "exact-check")  # an absolute URL: the link as it stands
    expect(widget.get_by_label("Target weight C")).to_have_value("0")
    expect(widget.get_by_label("Target weight A")).to_have_value("8")
    expect(widget.get_by_label(GAMMA_LABEL)).to_have_value("3")
    expect(page.locator(".sd-notice")).to_have_count(0)
    expect(metric(widget, "round-prefixes")).to_have_attribute("data-value", js_number(prefixes))
    expect(widget.locator(".sd-cbe-check--ok")).to_have_count(cells)
    verdict = widget.locator(".sd-verdict")

    # No target weight left: nothing can be checked, so no verdict, tile or table row from the last weights stays.
    for token in ("A", "B"):
        widget.get_by_label(f"Target weight {token}").fill("0")
        widget.get_by_label(f"Target weight {token}").press("Tab")
    expect(verdict).to_have_text("Give the target and the draft at least one positive weight each.")
    for name in ("exact", "cells-checked", "round-prefixes", "beta"):
        expect(metric(widget, name)).not_to_have_attribute("data-value", re.compile(r"."))
    expect(metric(widget, "exact")).not_to_contain_text("yes")
    expect(widget.locator("tbody tr")).to_have_count(0)


def test_broken_variants_fail_the_test_and_the_real_round_passes(page: Any) -> None:
    """Each sample has n = 10,000 over 3 tokens: an exact round stays within tv_bound ~ 0.041; the broken one is
    0.0875 away from p exactly, so its sample lies beyond that bound and the chi-square p-value is below 1e-6."""
    widget = open_live(page, "exactness/", "exact-broken")
    n = 10_000
    chart = widget.locator(".sd-chart")
    before = renders(chart)
    widget.get_by_label("Implementation", exact=True).select_option("correct-from-p")
    expected = native("exactness.broken", variant="correct-from-p", p=P, q=Q)["metrics"]["exact-tv"]
    expect(metric(widget, "exact-tv")).to_have_attribute("data-value", js_number(expected))
    wait_for_renders(chart, before)
    sample = widget.get_by_role("button", name="Sample 10,000 rounds")
    sample.click()
    expect(metric(widget, "exact")).to_have_attribute("data-value", "0", timeout=60_000)
    assert value(widget, "tv-distance") > tv_bound(n, 3)
    assert value(widget, "p-value") < 1e-6

    widget.get_by_label("Implementation", exact=True).select_option("exact")
    expect(metric(widget, "exact-tv")).to_have_attribute("data-value", "0")
    sample.click()
    expect(metric(widget, "tv-distance")).to_have_attribute("data-value", re.compile(r"\d"), timeout=60_000)
    assert value(widget, "tv-distance") <= tv_bound(n, 3)

    # The seed is the reader's: Sample keeps it, so the sample on screen is the native one of seed 0, and a new
    # seed clears it (the seed used to step on by itself after each press, so no number could be reproduced).
    seed = widget.get_by_role("spinbutton", name="Seed")
    expect(seed).to_have_value("0")
    drawn = native("exactness.broken", variant="exact", p=P, q=Q, n=n, seed=0)["metrics"]["tv-distance"]
    expect(metric(widget, "tv-distance")).to_have_attribute("data-value", js_number(drawn))
    seed.fill("1")
    seed.press("Tab")
    expect(metric(widget, "tv-distance")).to_have_text("not sampled")


def test_greedy_draft_declared_soft_shows_its_law_and_fails_the_test(page: Any) -> None:
    """The greedy-draft-declared-as-soft-q tab: exact law [1/3, 1/4, 5/12] in fractions, TV 1/6 from p; a sample of
    n = 10,000 lies beyond tv_bound(10_000, 3) ~ 0.041 and the chi-square p-value is below 1e-6."""
    widget = open_live(page, "exactness/", "exact-broken")
    select = widget.get_by_label("Implementation", exact=True)
    expect(select.locator("option")).to_have_count(9)
    select.select_option(label="Greedy draft declared as soft q")
    expect(metric(widget, "exact-tv")).to_have_attribute("data-value", js_number(1 / 6))
    expect(widget.locator(".sd-verdict--quiet")).to_contain_text("cat 1/3, dog 1/4, fox 5/12")
    widget.get_by_role("button", name="Sample 10,000 rounds").click()
    expect(metric(widget, "exact")).to_have_attribute("data-value", "0", timeout=60_000)
    assert value(widget, "tv-distance") > tv_bound(10_000, 3)
    assert value(widget, "p-value") < 1e-6
    # The chi-square tail of so far a sample is 0 in floating point: the page says "below 1e-12", never "0.0e+0".
    drawn = native("exactness.broken", variant="greedy-soft", p=P, q=Q, n=10_000, seed=0)["metrics"]["p-value"]
    assert drawn == 0.0
    expect(metric(widget, "p-value")).to_have_text("below 1e-12")
    expect(widget.get_by_text(re.compile("p-value below 1e-12. The output is not p"))).to_have_count(1)

    # The page's "Draft probability 0" tab, both ways: an honest draft with a zero stays exact, a naive p/0 does not.
    select.select_option(label="Draft probability 0, honest draft")
    expect(metric(widget, "exact-tv")).to_have_attribute("data-value", "0")
    expect(widget.locator(".sd-verdict--quiet")).to_contain_text("dog 7/20")
    select.select_option(label="Draft probability 0, naive p/0")
    expect(metric(widget, "exact-tv")).to_have_attribute("data-value", js_number(0.13))


# All three ------------------------------------------------------------------------------------------------------


def test_instant_navigation_between_the_pages_keeps_widgets_live(page: Any) -> None:
    open_live(page, "correct/", "correct-split")
    page.evaluate("window.__sameDocument = true")
    page.get_by_role("link", name="Bonus").first.click()
    expect(page.locator('.sd-widget[data-widget="bonus-sim"]')).to_have_attribute("data-sd-live", "true")
    page.get_by_role("link", name="Why it is exact").first.click()
    for name in ("exact-check", "exact-broken"):
        expect(page.locator(f'.sd-widget[data-widget="{name}"]')).to_have_attribute("data-sd-live", "true")
    assert page.evaluate("window.__sameDocument") is True
