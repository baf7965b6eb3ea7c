"""Every page on a phone (390 x 844, then 360 x 780): nothing scrolls sideways, every control of every widget is on
screen.

The pages come from the built site's sitemap.xml, so a page added to the nav is checked without editing this file.
The fit checks need the layout only, not Python: the build-time first paint mounts every widget with its controls
and numbers, so each waits for the widgets to be mounted and painted (data-sd-mounted, data-sd-paints), never for
Pyodide. Charts drawn for a phone (Draft's panels, the Home lab's axes, Tuning's map) are checked as Plotly drew
them, some at settings only Python answers. The phone tests share one page that goes from page to page by instant
navigation (conftest, ``visit``), so Python boots once for them all. Display math starts inside the text column and
fits a 360 px screen; on a 320 px one, an equation wider than the screen scrolls in its own box, which takes keyboard
focus. Also here: the chart toolbar (Plotly's mode bar) never covers a legend, and headings read as text in the
table of contents and the search index (no raw LaTeX such as "\\(\\gamma\\)").
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any

import pytest
from conftest import BUILT_FOR, CHARTS_MS, SITE, axe_violations, shared_page, visit
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, shared_page]

PHONE = {"width": 390, "height": 844}
ANDROID = {"width": 360, "height": 780}
SMALL_PHONE = {"width": 320, "height": 640}
on_a_phone = pytest.mark.browser_context_args(viewport=PHONE, service_workers="block")


def site_pages() -> list[str]:
    """Every page's path relative to the site root ("" for Home), in sitemap order."""
    sitemap = (SITE / "sitemap.xml").read_text("utf-8")
    return [loc[len(BUILT_FOR) :] for loc in re.findall(r"<loc>([^<]+)</loc>", sitemap)]


PAGES = site_pages()

# True once every widget placeholder is mounted and shows its first result (or says what it is computing).
WIDGETS_PAINTED = """() => [...document.querySelectorAll('.sd-widget[data-widget]')].every((w) =>
  w.dataset.sdMounted && (Number(w.dataset.sdPaints || 0) > 0 || w.querySelector(':scope > .sd-pending')))"""

# Visible form controls, buttons and range values of every widget that stick out of the screen sideways. A control
# inside a box that scrolls sideways on its own (a wide table) is reached by scrolling that box, so it is skipped.
OFF_SCREEN = """() => {
  const inScrollBox = (el) => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const x = getComputedStyle(a).overflowX;
      if ((x === 'auto' || x === 'scroll') && a.scrollWidth > a.clientWidth) return true;
    }
    return false;
  };
  const sel = '.sd-widget :is(input, select, textarea, button, .md-button, .sd-control output)';
  return [...document.querySelectorAll(sel)].flatMap((el) => {
    const r = el.getBoundingClientRect();
    if (!r.width || !el.checkVisibility() || inScrollBox(el)) return [];
    if (r.left >= -0.5 && r.right <= innerWidth + 0.5) return [];
    const label = el.labels?.[0]?.textContent || el.getAttribute('aria-label') || el.textContent || el.name;
    const widget = el.closest('.sd-widget').dataset.widget;
    const what = `${el.tagName.toLowerCase()} "${label.trim().slice(0, 40)}"`;
    return [`${widget}: ${what} spans ${r.left.toFixed(0)}..${r.right.toFixed(0)} px`];
  });
}"""


MATH_TYPESET = "() => [...document.querySelectorAll('div.arithmatex')].every((d) => d.querySelector('.katex-html'))"

# Display equations that start left of the text column (at the screen's edge, looking cut off), or that are wider
# than their box without that box taking keyboard focus, or whose end stays off-screen when the box is scrolled to
# its end. Returns [problems, how many boxes scroll sideways].
EQUATIONS = """() => {
  const inner = document.querySelector('.md-content__inner');
  const column = inner.getBoundingClientRect().left + parseFloat(getComputedStyle(inner).paddingLeft);
  const problems = [];
  let scrolling = 0;
  for (const box of document.querySelectorAll('.md-content div.arithmatex')) {
    const glyphs = () => [...box.querySelectorAll('.katex-html > *')]
      .map((g) => g.getBoundingClientRect()).filter((r) => r.width);
    const tex = (box.querySelector('annotation')?.textContent || box.textContent).trim().slice(0, 40);
    const start = Math.min(...glyphs().map((r) => r.left));
    if (start < column - 0.5) problems.push(`"${tex}" starts at ${start.toFixed(0)} px, left of the text's ${column}`);
    if (box.scrollWidth <= box.clientWidth) continue;
    scrolling += 1;
    if (box.tabIndex !== 0) problems.push(`"${tex}" scrolls sideways but takes no keyboard focus`);
    box.scrollLeft = box.scrollWidth;
    const end = Math.max(...glyphs().map((r) => r.right));
    box.scrollLeft = 0;
    if (end > innerWidth + 0.5) problems.push(`"${tex}" ends at ${end.toFixed(0)} px when scrolled to its end`);
  }
  return [problems, scrolling];
}"""


@on_a_phone
@pytest.mark.parametrize("path", PAGES, ids=[p.strip("/") or "home" for p in PAGES])
def test_page_fits_a_phone_screen(page: Any, path: str) -> None:
    """At 390 px, then on the same page at 360 px (a common Android width)."""
    visit(page, path)
    page.wait_for_function(WIDGETS_PAINTED)
    # The table of contents lists the headings as text: math in a heading must not leave its TeX source there.
    toc = page.locator(".md-nav--secondary .md-nav__link").all_text_contents()
    assert not [t for t in toc if "\\(" in t or "\\[" in t], toc
    page.wait_for_function(MATH_TYPESET)
    for viewport in (PHONE, ANDROID):
        page.set_viewport_size(viewport)
        screen = f"a {viewport['width']} px screen"
        # Plotly's charts follow a resize in the next frames: wait for the page to fit, then say what is wrong.
        with contextlib.suppress(PlaywrightTimeoutError):
            page.wait_for_function("document.documentElement.scrollWidth <= innerWidth", timeout=5_000)
        widths = page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
        assert widths[1] == viewport["width"], widths
        assert widths[0] <= widths[1], f"/{path} is {widths[0]} px wide on {screen}"
        assert page.evaluate(OFF_SCREEN) == [], screen
        # math.js sets the focus once it has seen the box's width (a ResizeObserver): wait for that too.
        with contextlib.suppress(PlaywrightTimeoutError):
            page.wait_for_function(f"() => ({EQUATIONS})()[0].length === 0", timeout=5_000)
        problems, scrolling = page.evaluate(EQUATIONS)
        assert problems == [], screen
        assert scrolling == 0, f"{scrolling} display equation(s) on /{path} are wider than {screen}"


def test_equation_wider_than_a_small_phone_scrolls_in_its_own_box(page: Any) -> None:
    """At 390 and 360 px every equation fits (above); on a 320 px screen Cost's t_pass equation does not. It scrolls
    in its own box, which takes keyboard focus and shows its end when scrolled, while the page itself does not."""
    page.set_viewport_size(SMALL_PHONE)
    visit(page, "cost/")
    page.wait_for_function(MATH_TYPESET)
    with contextlib.suppress(PlaywrightTimeoutError):
        page.wait_for_function(f"() => ({EQUATIONS})()[0].length === 0", timeout=5_000)
    problems, scrolling = page.evaluate(EQUATIONS)
    assert problems == []
    assert scrolling >= 1
    widths = page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
    assert widths[0] <= widths[1], widths


@on_a_phone
def test_header_keeps_room_for_the_site_title(page: Any) -> None:
    """On a phone the status shows its dot and one word, so the site's title is not cut to three letters ("Spe…"
    beside "Python is ready", at 55 px); the whole status text stays in the page for screen readers."""
    visit(page, "")
    status = page.locator("[data-sd-status]")
    expect(status).to_have_attribute("data-sd-status", "ready", timeout=CHARTS_MS)
    expect(status).to_have_text("Python is ready")
    expect(status).to_have_attribute("data-sd-short", "Ready")
    status_box, title_box = status.bounding_box(), page.locator(".md-header__topic").first.bounding_box()
    assert status_box and title_box
    assert status_box["width"] <= 96, status_box  # 6rem: the dot and one word
    assert title_box["width"] >= 90, title_box  # "Speculati…"
    assert axe_violations(page, ".md-header") == []


def test_search_index_titles_have_no_raw_latex() -> None:
    """Search shows each section's title: a heading with TeX in it would show "\\(\\gamma\\)" there."""
    docs = json.loads((SITE / "search" / "search_index.json").read_text("utf-8"))["docs"]
    assert docs, "the search index is empty"
    raw = [d["location"] for d in docs if re.search(r"\\[(\[]", d["title"])]
    assert raw == []


# The mode bar shows on hover, at the chart's top right; every legend entry's box must stay clear of it.
MODEBAR_OVERLAPS = """(chart) => {
  const bar = chart.querySelector('.modebar');
  if (!bar) return ['no mode bar'];
  const b = bar.getBoundingClientRect();
  return [...chart.querySelectorAll('.legend .traces')].filter((t) => {
    const r = t.getBoundingClientRect();
    return r.left < b.right && b.left < r.right && r.top < b.bottom && b.top < r.bottom;
  }).map((t) => t.textContent);
}"""


@pytest.mark.parametrize("viewport", [PHONE, {"width": 1280, "height": 900}], ids=["phone", "desktop"])
def test_chart_toolbar_never_covers_a_legend_on_verify(page: Any, viewport: dict[str, int]) -> None:
    page.set_viewport_size(viewport)
    visit(page, "verify/")
    page.wait_for_function(WIDGETS_PAINTED)
    # Plotly itself draws every chart (the toolbar is Plotly's); no Python needed for that.
    expect(page.locator("html")).to_have_attribute("data-sd-charts", "plotly", timeout=CHARTS_MS)
    charts = page.locator(".md-content .sd-chart:has(.legend)")
    names = []
    for chart in charts.all():
        chart.scroll_into_view_if_needed()
        chart.hover(position={"x": 10, "y": 40})  # the mode bar appears on hover
        overlaps = chart.evaluate(MODEBAR_OVERLAPS)
        assert overlaps == [], f"the mode bar covers legend entries {overlaps}"
        names += chart.locator(".legend .traces").all_text_contents()
    # The legend entry the toolbar used to cover ("alpha^gamma") is among those checked.
    assert any("\N{GREEK SMALL LETTER GAMMA}" in n for n in names), names


@on_a_phone
def test_home_lab_labels_fewer_rounds_on_a_phone(page: Any) -> None:
    """Plotly does not thin a 3D axis's tick labels: at 390 px the lab's 16 round labels ran into each other, so
    there the lab labels every 4th round (lab3d.js, fit); Plotly's own layout of the scene says which it drew."""
    visit(page, "")
    chart = page.locator('.sd-widget[data-widget="lab3d"] .sd-chart')
    expect(chart).to_have_attribute("data-sd-engine", "plotly", timeout=CHARTS_MS)
    dtick, span = chart.evaluate("(c) => [c._fullLayout.scene.xaxis.dtick, c._fullLayout.scene.xaxis.range]")
    assert dtick >= 4, f"the round axis labels every {dtick} round(s) on a phone"
    assert span[1] - span[0] >= 16  # the whole run is still on the axis
    # At gamma 8 the draft position's nine labels ran into one smear: every other one is labelled, and the bonus.
    visit(page, "?gamma=8")
    page.wait_for_function(
        "() => document.querySelector('.sd-widget[data-widget=\"lab3d\"] .sd-chart')"
        "?._fullLayout?.scene?.yaxis?.range?.[1] > 9"
    )
    labels = chart.evaluate("(c) => c._fullLayout.scene.yaxis.ticktext")
    assert labels == ["1", "3", "5", "7", "bonus"], labels


# The panel titles and x tick labels of a chart, as boxes on screen.
TITLES_AND_TICKS = """(c) => [[...c.querySelectorAll('.annotation')], [...c.querySelectorAll('.xtick text')]]
  .map((els) => els.map((e) => e.getBoundingClientRect().toJSON()).filter((r) => r.width > 0))"""


def boxes_meet(a: dict[str, float], b: dict[str, float]) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]


@on_a_phone
def test_playground_rounds_of_eight_drafts_wrap_inside_the_token_stream(page: Any) -> None:
    """A round of 8 drafts with a correction and discarded drafts is wider than the token stream's box on a phone:
    it ran past the box's right edge, cut off, with nothing to show the box scrolled. Each round now wraps inside
    itself, so every token is inside the box and the box does not scroll sideways."""
    visit(page, "playground/?gamma=8&quality=0.3&seed=3")
    widget = page.locator('.sd-widget[data-widget="playground"]')
    expect(widget).to_have_attribute("data-sd-live", "true", timeout=60_000)
    step = widget.get_by_role("button", name="Step", exact=True)
    for n in range(1, 4):
        step.click()
        expect(widget.locator('[data-metric="rounds"]')).to_have_attribute("data-value", str(n))
    stream = widget.locator(".sd-pg-stream")
    expect(stream.locator(".sd-pg-round")).to_have_count(3)
    assert stream.locator(".sd-token").count() >= 3 * 8  # eight drafts a round (and a correction or bonus)
    sizes = stream.evaluate("(el) => [el.scrollWidth, el.clientWidth]")
    assert sizes[0] <= sizes[1], sizes
    box = stream.bounding_box()
    right = box["x"] + box["width"]
    tokens = stream.locator(".sd-token").evaluate_all("(els) => els.map((e) => e.getBoundingClientRect().right)")
    assert max(tokens) <= right + 0.5, (max(tokens), right)


@on_a_phone
def test_draft_panels_stand_one_to_a_row_on_a_phone(page: Any) -> None:
    """Two to a row, the Draft page's eight panels got ~100 px each at 390 px: their titles ran into each other and
    past the chart's edge, and their upright tick labels into the titles below. On a phone they stand one to a row
    (js/widgets/draft.js), so no title meets another title or a tick label, and every title is inside the chart."""
    visit(page, "draft/?gamma=8&temperature=2&seed=13")
    widget = page.locator('.sd-widget[data-widget="draft"]').first
    chart = widget.locator(".sd-chart")
    expect(widget).to_have_attribute("data-sd-live", "true", timeout=60_000)
    expect(chart).to_have_attribute("data-sd-engine", "plotly", timeout=CHARTS_MS)
    domains = chart.evaluate(
        "(c) => Object.keys(c._fullLayout).filter((k) => /^xaxis\\d*$/.test(k)).map((k) => c._fullLayout[k].domain)"
    )
    assert domains == [[0, 1]] * 8, domains
    titles, ticks = chart.evaluate(TITLES_AND_TICKS)
    box = chart.bounding_box()
    assert len(titles) == 8 and ticks
    assert all(t["left"] >= box["x"] - 0.5 and t["right"] <= box["x"] + box["width"] + 0.5 for t in titles), titles
    met = [(a, b) for i, a in enumerate(titles) for b in titles[i + 1 :] + ticks if boxes_meet(a, b)]
    assert not met, met


@on_a_phone
def test_tuning_map_keeps_the_phones_width_for_its_cells(page: Any) -> None:
    """The optimal-gamma map's colour bar lies under the plot, as wide as it, below the x axis's title: at its side,
    with "0: none pays" beside it, the bar took ~100 px and left the cells ~140 px of a 324 px chart. Plotly's own
    layout says where it drew them."""
    visit(page, "tuning/")
    chart = page.locator('.sd-widget[data-widget="tuning-calculator"] .sd-chart[aria-label^="Heatmap"]')
    expect(chart).to_have_attribute("data-sd-engine", "plotly", timeout=CHARTS_MS)
    plot, width, bar, title = chart.evaluate(
        """(c) => [c._fullLayout._size.w, c._fullLayout.width,
                   c.querySelector('.colorbar').getBoundingClientRect().toJSON(),
                   c.querySelector('.xtitle').getBoundingClientRect().toJSON()]"""
    )
    assert plot >= 0.75 * width, f"the map's cells get {plot} of the chart's {width} px"
    assert bar["top"] >= title["bottom"], (bar, title)
    assert bar["width"] >= 0.75 * width, bar


@on_a_phone
def test_home_lab_run_keeps_its_cards_still(page: Any) -> None:
    """A Run replays each round drafted, then checked: a two-line frame and a three-line one every 260 ms on a phone.
    The cards under the replay's line stay where they are (they moved by 24 px at each frame)."""
    visit(page, "")
    widget = page.locator('.sd-widget[data-widget="lab3d"]')
    expect(widget).to_have_attribute("data-sd-live", "true", timeout=60_000)
    widget.evaluate(
        """(w) => { const cards = w.querySelector('.sd-tiles'), line = w.querySelector('.sd-lab3d__latest');
          window.__sdTops = new Set(); window.__sdLines = new Set();
          const note = () => { __sdTops.add(Math.round(cards.getBoundingClientRect().top + scrollY));
            __sdLines.add(line.textContent);
            if (w.dataset.sdRunning || __sdLines.size < 2) requestAnimationFrame(note); };
          note(); }"""
    )
    widget.get_by_role("button", name="Run", exact=True).click()
    expect(widget.get_by_role("button", name="Run", exact=True)).to_be_visible(timeout=60_000)
    lines, tops = page.evaluate("[__sdLines.size, [...__sdTops]]")
    assert lines > 10, lines  # the replay's frames were seen
    assert len(tops) == 1, tops


@pytest.mark.browser_context_args(viewport=PHONE, service_workers="block", has_touch=True)
def test_home_lab_hint_on_a_touch_screen_names_no_wheel_or_hover(page: Any) -> None:
    """On a touch screen (pointer: coarse) the 3D lab's hint names no mouse wheel and no hover, which a finger lacks:
    plotly.js 4.1.1 orbits a 3D scene with one finger and has no pinch zoom there. The hint is in the build-time first
    paint, so this needs no Python (last in the module: its page is closed, boot and all, right after)."""
    visit(page, "")
    caption = page.locator('.sd-widget[data-widget="lab3d"] .sd-lab3d__caption')
    expect(caption).to_contain_text("Drag to orbit · the table under the lab lists each round's tokens")
    assert "wheel" not in caption.inner_text() and "hover" not in caption.inner_text()


# Where the keyboard's focus is: [its tag and first class, whether any of it is on the screen, inside a widget]. The
# palette toggle is a radio of no size whose label, the button on screen, shows its focus (Material 9.8).
FOCUSED = """() => {
  const e = document.activeElement;
  const r = (e.matches("input.md-option") ? e.nextElementSibling : e).getBoundingClientRect();
  const shown = r.right > 0 && r.left < innerWidth && r.width > 0 && r.height > 0;
  return [`${e.tagName}.${String(e.className).split(" ")[0]}`, shown, !!e.closest(".sd-widget")];
}"""


@on_a_phone
def test_tab_from_the_top_of_a_phone_page_reaches_nothing_off_screen(page: Any) -> None:
    """The closed navigation drawer lies off screen; its links had stayed in the Tab order, so 20-odd presses moved
    an unseen focus. Every stop until the first widget control is on screen; opened, the drawer's links are."""
    visit(page, "playground/")
    page.evaluate("() => { document.activeElement?.blur(); window.scrollTo(0, 0); }")
    stops = []
    for _ in range(40):
        page.keyboard.press("Tab")
        stops.append(page.evaluate(FOCUSED))
        if stops[-1][2]:
            break
    assert stops[-1][2], stops  # a widget's control was reached
    assert [s for s in stops if not s[1]] == [], stops
    page.locator("label.md-header__button[for='__drawer']").click()
    first = page.locator(".md-sidebar--primary .md-nav__link").first
    expect(first).to_be_visible()
    first.focus()
    expect(first).to_be_focused()
