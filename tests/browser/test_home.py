"""The home page: hero, the 3D lab (Python in the worker, WebGL chart), its controls, URL state and theme.

Expected numbers come from the same handler (``home.run``) run natively with the same arguments: the browser's
Python must reproduce them exactly, seed for seed.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from conftest import expect_plotly, js_number, renders, shared_page, visit, wait_for_renders
from playwright.sync_api import expect

from specdec_core import web
from specdec_core.web import home

pytestmark = [pytest.mark.browser, shared_page]

READY = "Python is ready"
RUN = {"rounds": 16}  # the page's run, as in docs/index.md
# Waits on Python's answers: generous, because a busy test machine can take seconds per worker call.
LIVE = 60_000


def native(**args: Any) -> dict[str, Any]:
    full = {"gamma": 4, "alpha": 0.8, "cost": 0.05, "seed": 0, **RUN, **args}
    result: dict[str, Any] = json.loads(web.call("home.run", json.dumps(full)))
    return result


def expect_metrics(lab: Any, metrics: dict[str, float]) -> None:
    for name in ("target-calls-saved", "relative-latency", "discarded-fraction"):
        for key in (name, f"{name}-theory"):
            metric = lab.locator(f'[data-metric="{key}"]')
            expect(metric).to_have_attribute("data-value", js_number(metrics[key]), timeout=LIVE)


def open_home(page: Any, query: str = "") -> Any:
    visit(page, query)
    status = page.locator("[data-sd-status]")
    expect(status).to_have_attribute("data-sd-status", "ready", timeout=LIVE)
    lab = page.locator('.sd-widget[data-widget="lab3d"]')
    expect(lab).to_have_attribute("data-sd-live", "true", timeout=LIVE)
    expect_plotly(page)
    return lab


def scene_colours(page: Any) -> list[str]:
    return page.evaluate(
        """() => {
            const scene = document.querySelector('.sd-lab3d .sd-chart')._fullLayout.scene;
            return [scene.xaxis.gridcolor, scene.zaxis.tickfont.color, scene.yaxis.title.font.color];
        }"""
    )


def test_home_is_ready_with_the_hero_and_a_live_3d_lab(page: Any) -> None:
    lab = open_home(page)
    expect(page.get_by_role("heading", level=1)).to_contain_text(
        "Draft fast. Verify once. Keep the exact distribution."
    )
    # The calls to action lead to pages that exist (the strict build checks them; here, where they point).
    hero = page.locator(".sd-hero")
    expect(hero.get_by_role("link", name="Open the Playground")).to_have_attribute("href", re.compile(r"/playground/$"))
    expect(hero.get_by_role("link", name="How it works")).to_have_attribute("href", re.compile(r"/lab/draft/$"))

    # The single status element reads ready; the lab's caption mirrors it without a second [data-sd-status].
    expect(page.locator("[data-sd-status]")).to_have_text(READY)
    expect(page.locator("[data-sd-status]")).to_have_count(1)
    expect(lab.locator(".sd-lab3d__caption")).to_contain_text(READY)
    expect(lab.locator(".sd-lab3d__caption")).to_contain_text("Drag to orbit · wheel to zoom · hover a token")

    # A WebGL scene with every token kind in the legend, and metrics equal to the native run's.
    chart = lab.locator(".sd-chart")
    expect(chart.locator("canvas").first).to_be_visible()
    # Drawn at the screen's pixel ratio (1 here), not plotly.js's fixed 2, which is four times the pixels shown.
    scale = chart.locator(".gl-container canvas").first.evaluate("(c) => c.width / c.getBoundingClientRect().width")
    assert scale == pytest.approx(1, abs=0.01)
    for name, _, _ in home.KINDS.values():
        expect(chart.locator(".legendtext", has_text=name)).to_have_count(1)
    expected = native()
    expect_metrics(lab, expected["metrics"])
    expect(lab.locator(".sd-lab3d__summary")).to_have_text(expected["summary"], timeout=LIVE)

    # The same rounds as a table, for keyboards and screen readers.
    lab.get_by_text("The rounds in the chart, as a table").click()
    expect(lab.locator(".sd-lab3d__details tbody tr")).to_have_count(16)
    expect(lab.locator(".sd-lab3d__details tbody tr").first).to_contain_text(expected["table"][0]["final"])


def test_alpha_slider_changes_the_figure_and_the_metrics(page: Any) -> None:
    lab = open_home(page)
    chart = lab.locator(".sd-chart")
    expect_metrics(lab, native()["metrics"])
    drawn = renders(chart)
    before = page.evaluate("() => JSON.stringify(document.querySelector('.sd-lab3d .sd-chart').data)")

    slider = lab.get_by_label("Agreement rate \u03b1")
    slider.focus()
    for _ in range(30):
        slider.press("ArrowLeft")  # 0.80 -> 0.50, one step of 0.01 at a time
    expect_metrics(lab, native(alpha=0.5)["metrics"])
    wait_for_renders(chart, drawn)
    after = page.evaluate("() => JSON.stringify(document.querySelector('.sd-lab3d .sd-chart').data)")
    assert after != before
    expect(page).to_have_url(re.compile(r"[?&]alpha=0\.5(&|$)"))


# Records the alpha of each replaceState call that carries one (the theme also calls it, for its scroll offset), after
# writing any link the page still holds back (a change event makes js/ui/url.js write at once).
RECORD_WRITES = """() => {
    dispatchEvent(new Event("change"));
    window.__alphaWrites = [];
    window.__ownReplaceState = history.replaceState;
    history.replaceState = function (state, title, url) {
        const alpha = url && new URL(url, location.href).searchParams.get("alpha");
        if (alpha !== null && alpha !== undefined) window.__alphaWrites.push(alpha);
        return window.__ownReplaceState.call(this, state, title, url);
    };
}"""
# Sets the slider to each value in turn, as a drag does (input events only), or, with release, ends with the change
# event a released slider fires; returns the address bar's alpha right after, in the same task.
SLIDE = """(slider, [values, release]) => {
    for (const value of values) {
        slider.value = String(value);
        slider.dispatchEvent(new Event("input", { bubbles: true }));
    }
    if (release) slider.dispatchEvent(new Event("change", { bubbles: true }));
    return new URLSearchParams(location.search).get("alpha");
}"""


def test_a_dragged_slider_writes_the_link_once_it_rests_and_a_released_one_at_once(page: Any) -> None:
    """A drag's burst of input events writes the link once, with its last value, when the controls rest; a released
    slider (its change event) writes it at once. Each write costs the browser process ~16 ms (js/ui/url.js)."""
    lab = open_home(page)
    slider = lab.get_by_label("Agreement rate \u03b1")
    page.evaluate(RECORD_WRITES)
    try:
        drag = [0.61, 0.62, 0.63, 0.64, 0.65, 0.66, 0.67]
        assert slider.evaluate(SLIDE, [drag, False]) != "0.67"  # nothing written while the burst runs
        expect_metrics(lab, native(alpha=0.67)["metrics"])
        expect(page).to_have_url(re.compile(r"[?&]alpha=0\.67(&|$)"))
        assert page.evaluate("window.__alphaWrites") == ["0.67"]  # seven changes, one write

        assert slider.evaluate(SLIDE, [[0.66], True]) == "0.66"  # released: written in the same task
        assert page.evaluate("window.__alphaWrites") == ["0.67", "0.66"]
        expect_metrics(lab, native(alpha=0.66)["metrics"])
    finally:
        page.evaluate("() => { history.replaceState = window.__ownReplaceState; }")


def test_url_round_trip_and_clamping(page: Any) -> None:
    lab = open_home(page, "?gamma=99&alpha=0.35&cost=-2&seed=7")
    expect(lab.get_by_text("gamma 99 is out of range; clamped to 8")).to_be_visible()
    expect(lab.get_by_text("cost -2 is out of range; clamped to 0")).to_be_visible()
    expect(lab.get_by_label("Speculation length \u03b3")).to_have_value("8")
    expect(lab.get_by_label("Draft cost c")).to_have_value("0")
    expected = native(gamma=8, alpha=0.35, cost=0, seed=7)["metrics"]
    expect_metrics(lab, expected)

    # The page rewrites the query with the clamped values; that link reproduces the same run, with no notice.
    expect(page).to_have_url(re.compile(r"gamma=8"))
    lab = open_home(page, page.url)
    expect(lab.locator(".sd-notice")).to_have_count(0)
    expect_metrics(lab, expected)


def test_step_explains_one_round_and_reset_starts_over(page: Any) -> None:
    lab = open_home(page, "?seed=3")
    latest = lab.locator(".sd-lab3d__latest")
    summary = lab.locator(".sd-lab3d__summary")
    # The lab opens on the whole run: Step starts it over, round 1 drafted (it was disabled there, with no hint).
    lab.get_by_role("button", name="Step", exact=True).click()
    expect(latest).to_have_text(native(seed=3, shown=1, pending=True)["latest"], timeout=LIVE)
    lab.get_by_role("button", name="Reset", exact=True).click()
    expect(latest).to_have_text(native(seed=3, shown=1, pending=True)["latest"], timeout=LIVE)
    # Round 1 is drafted but not checked: the summary and the cards must not tell its outcome yet.
    expect(summary).to_have_text(native(seed=3, shown=1, pending=True)["summary"], timeout=LIVE)
    expect(summary).to_contain_text("0 rounds played")
    expect(lab.locator('[data-metric="target-calls-saved"]')).to_have_text("\u2014")
    lab.get_by_role("button", name="Step", exact=True).click()
    checked = native(seed=3, shown=1)
    expect(latest).to_have_text(checked["latest"], timeout=LIVE)
    expect(summary).to_have_text(checked["summary"], timeout=LIVE)
    expect_metrics(lab, checked["metrics"])
    lab.get_by_role("button", name="Step", exact=True).click()
    expect(latest).to_have_text(native(seed=3, shown=2, pending=True)["latest"], timeout=LIVE)
    lab.get_by_role("button", name="Step", exact=True).click()
    expect(latest).to_have_text(native(seed=3, shown=2)["latest"], timeout=LIVE)
    # The newest round waits as drafted between its two half-steps: the legend shows that state too.
    lab.get_by_role("button", name="Step", exact=True).click()
    expect(latest).to_have_text(native(seed=3, shown=3, pending=True)["latest"], timeout=LIVE)
    drafted = home.KINDS["drafted"][0]
    expect(lab.locator(".legendtext", has_text=drafted)).to_have_count(1)


def test_run_replays_every_round(page: Any) -> None:
    lab = open_home(page)
    lab.get_by_role("button", name="Run", exact=True).click()
    expect(lab.get_by_role("button", name="Stop", exact=True)).to_be_visible()
    # The replay ends on the last shown round, checked; the button reads Run again.
    expect(lab.get_by_role("button", name="Run", exact=True)).to_be_visible(timeout=LIVE)
    expect(lab.locator(".sd-lab3d__latest")).to_have_text(native()["latest"], timeout=LIVE)


def test_theme_toggle_restyles_the_3d_scene(page: Any) -> None:
    lab = open_home(page)
    expect(lab.locator(".sd-chart")).to_have_attribute("data-sd-renders", re.compile(r"\d+"), timeout=LIVE)
    before = scene_colours(page)
    legend = lab.locator(".legendtext").first
    legend_fill = legend.evaluate("el => getComputedStyle(el).fill")
    page.locator("label.md-header__button[for^='__palette']:visible").click()
    page.wait_for_function(
        "before => { const s = document.querySelector('.sd-lab3d .sd-chart')._fullLayout.scene;"
        " return s.xaxis.gridcolor !== before[0] && s.zaxis.tickfont.color !== before[1]; }",
        arg=before,
        timeout=LIVE,
    )
    after = scene_colours(page)
    assert after[2] != before[2]  # axis titles too
    expect(legend).not_to_have_css("fill", legend_fill)


def test_instant_navigation_away_and_back_keeps_the_lab_live(page: Any) -> None:
    lab = open_home(page, "?alpha=0.6")
    expect_metrics(lab, native(alpha=0.6)["metrics"])
    page.evaluate("window.__sameDocument = true")
    page.locator(".sd-hero").get_by_role("link", name="Open the Playground").click()
    expect(page).to_have_url(re.compile(r"/playground/"))
    page.get_by_role("link", name="Home").first.click()
    expect(page).to_have_url(re.compile(r"/lab/(\?.*)?$"))  # the lab writes its settings into the query
    lab = page.locator('.sd-widget[data-widget="lab3d"]')
    expect(lab).to_have_attribute("data-sd-live", "true", timeout=LIVE)
    assert page.evaluate("window.__sameDocument") is True  # no reload: the same worker answered
    expect(lab.locator(".sd-lab3d__caption")).to_contain_text(READY)
    expect_metrics(lab, native()["metrics"])  # the link home carries no query: the defaults again


# The four steps' cards: how many distinct columns they stand in, and by how much each formula in them is wider
# than its box (more than 0: it scrolls, cut off behind the box's edge).
STEPS = """() => {
  const cards = [...document.querySelectorAll('.grid.sd-steps > ul > li')];
  const columns = new Set(cards.map((c) => Math.round(c.getBoundingClientRect().left))).size;
  const over = [...document.querySelectorAll('.grid.sd-steps .arithmatex')].map((a) => a.scrollWidth - a.clientWidth);
  return [cards.length, columns, over];
}"""


def test_the_four_steps_stand_four_two_or_one_to_a_row_with_every_formula_whole(page: Any) -> None:
    """Home's four steps (Draft, Verify, Correct, Bonus) never stand three to a row with a lone fourth below, where
    a card was too narrow for Correct's formula (768 px: cut off at "max(0, p -"); at every width each formula
    fits its card. Widths on both sides of each change of layout."""
    open_home(page)
    for width, columns in ((390, 1), (599, 1), (600, 2), (768, 2), (1215, 2), (1216, 4), (1280, 4), (1600, 4)):
        page.set_viewport_size({"width": width, "height": 900})
        cards, found, over = page.evaluate(STEPS)
        assert (cards, found) == (4, columns), (width, cards, found)
        assert over and max(over) <= 0, (width, over)


# The lab's cards: for each row (cards sharing a top), the cards' widths plus the gaps between them, and the row's.
CARD_ROWS = """() => {
  const tiles = document.querySelector('.sd-widget[data-widget="lab3d"] .sd-tiles--large');
  const gap = parseFloat(getComputedStyle(tiles).columnGap);
  const rows = new Map();
  for (const card of tiles.children) {
    const r = card.getBoundingClientRect();
    rows.set(Math.round(r.top), (rows.get(Math.round(r.top)) || []).concat(r.width));
  }
  return [...rows.values()].map((ws) => [ws.reduce((a, b) => a + b, 0) + gap * (ws.length - 1), tiles.clientWidth]);
}"""


def test_the_labs_cards_fill_every_row_they_stand_in(page: Any) -> None:
    """Where three cards do not fit a row, the one under two spans the row: at 768 px it stood alone in half of it,
    beside a blank."""
    open_home(page)
    for width in (390, 600, 768, 1024, 1280):  # the fixture puts the page's own size back
        page.set_viewport_size({"width": width, "height": 900})
        rows = page.evaluate(CARD_ROWS)
        assert all(abs(used - whole) <= 1 for used, whole in rows), (width, rows)
