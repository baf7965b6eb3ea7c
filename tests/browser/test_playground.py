"""The Playground (/playground/) in headless Chromium: ready, sliders, Run, Step, URL state, experiments, axe-core.

Expected numbers come from the same handler run natively (``specdec_core.web``): a run is a deterministic function
of its seed and settings, so the browser must show exactly what CPython computes.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from typing import Any

import pytest
from conftest import SiteServer, expect_plotly, js_number, renders, shared_page, visit, wait_for_renders
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from specdec_core import web

pytestmark = [pytest.mark.browser, shared_page]

READY = "Python is ready"
WIDGET = '.sd-widget[data-widget="playground"]'
GAMMA_SIGN = "\N{GREEK SMALL LETTER GAMMA}"
GAMMA = "Speculation length " + GAMMA_SIGN
RUN_TIMEOUT = 180_000  # a 2,000-round Run takes seconds on an idle machine; a loaded CI box is slower


def native(**args: Any) -> dict[str, Any]:
    full = {"quality": 0.85, "gamma": 4, "cost": 0.05, "seed": 0, "rounds": 0, **args}
    result: dict[str, Any] = json.loads(web.call("playground.run", json.dumps(full)))
    return result


def metric(page: Any, name: str) -> Any:
    return page.locator(f'{WIDGET} [data-metric="{name}"]')


def open_live(page: Any, query: str = "") -> Any:
    visit(page, "playground/" + query)
    widget = page.locator(WIDGET)
    # The build-time figure paints first (a sketch until Plotly has loaded), unless the URL asks for other settings:
    # then the widget says what it is computing.
    expect(widget.locator(".sd-chart :is(svg.sd-sketch, .main-svg), .sd-pending").first).to_be_visible()
    expect(page.locator("[data-sd-status]")).to_have_attribute("data-sd-status", "ready", timeout=60_000)
    expect(page.locator("[data-sd-status]")).to_have_text(READY)
    expect(widget).to_have_attribute("data-sd-live", "true")
    expect_plotly(page)
    return widget


def test_reaches_ready_and_shows_the_code_that_runs(page: Any) -> None:
    widget = open_live(page)
    for label in ("Draft quality", GAMMA, "Draft cost c", "Seed"):
        expect(widget.get_by_label(label)).to_be_visible()
    for name in ("Run", "Step", "Reset"):
        expect(widget.get_by_role("button", name=name, exact=True)).to_be_visible()
    expect(metric(page, "exact")).to_contain_text("too few tokens yet")
    expect(metric(page, "exact")).to_have_attribute("data-value", "")
    # Both acceptance rates, and in words why the draft acceptance rate sits below alpha, with the converter.
    expect(widget.get_by_text("Draft acceptance rate", exact=True)).to_be_visible()
    expect(widget.get_by_text("Per-token acceptance rate \N{GREEK SMALL LETTER ALPHA}", exact=True)).to_be_visible()
    expect(metric(page, "alpha-theory")).to_have_attribute("data-value", js_number(native()["metrics"]["alpha-theory"]))
    expect(widget.locator(".sd-pg-rates")).to_contain_text("discarded without ever being checked")
    link = widget.get_by_role("link", name="Tuning converter")
    expect(link).to_have_attribute("href", re.compile(r"/tuning/#the-calculator$"))
    # The included source: speculative_round's definition, from the package, not pasted.
    expect(page.locator("code", has_text="def speculative_round(").first).to_be_attached()
    expect(page.locator(".katex").first).to_be_visible()


def test_moving_a_slider_changes_the_figure_and_the_metrics(page: Any) -> None:
    widget = open_live(page)
    chart = widget.locator(".sd-chart").nth(2)  # target / output / draft distributions
    expect(metric(page, "accept-rate-theory")).to_have_attribute(
        "data-value", js_number(native()["metrics"]["accept-rate-theory"])
    )
    before = renders(chart)
    slider = widget.get_by_label("Draft quality")
    slider.focus()
    for _ in range(4):
        slider.press("ArrowLeft")  # 0.85 -> 0.65
    expected = native(quality=0.65)["metrics"]["accept-rate-theory"]
    expect(metric(page, "accept-rate-theory")).to_have_attribute("data-value", js_number(expected))
    wait_for_renders(chart, before)
    expect(page).to_have_url(re.compile(r"quality=0\.65"))


# The rows of the table whose caption names the distributions chart: [[cell, ...], ...], header row first.
TABLE_CELLS = """(details) => {
  const table = [...details.querySelectorAll('table')]
    .find((t) => t.caption.textContent.includes('target distribution'));
  return table ? [...table.rows].map((r) => [...r.cells].map((c) => c.textContent)) : null;
}"""


def distributions_table(figure: dict[str, Any]) -> list[list[str]]:
    """The distributions figure as ui/numbers.js tabulates it: a word per row, a series per column, each value to 4
    significant digits as JavaScript writes it."""
    traces = figure["data"]
    head = [figure["layout"]["xaxis"]["title"]["text"], *(t["name"] for t in traces)]
    rows = [[word, *(js_number(float(f"{t['y'][i]:.4g}")) for t in traces)] for i, word in enumerate(traces[0]["x"])]
    return [head, *rows]


def test_charts_numbers_are_tables_that_follow_the_sliders(page: Any) -> None:
    """A reader who cannot hover a chart opens its numbers as tables: the distributions' table holds what the native
    handler's figure holds, and while open it follows a slider to the new figure."""
    widget = open_live(page)
    details = widget.locator(":scope > details.sd-data")
    details.locator("summary").click()
    for quality in (0.85, 0.75):
        if quality != 0.85:
            slider = widget.get_by_label("Draft quality")
            slider.focus()
            slider.press("ArrowLeft")
            slider.press("ArrowLeft")  # 0.85 -> 0.75
        expected = distributions_table(native(quality=quality)["figures"]["distributions"])
        # Compact separators, as JSON.stringify writes: with Python's default ", " the wait could never succeed.
        written = json.dumps(expected, separators=(",", ":"))
        with contextlib.suppress(PlaywrightTimeoutError):
            page.wait_for_function(
                f"(d) => JSON.stringify(({TABLE_CELLS})(d)) === {json.dumps(written)}",
                arg=details.element_handle(),
                timeout=15_000,
            )
        assert details.evaluate(TABLE_CELLS) == expected


# Counts the distributions chart's draws by Plotly.animate (js/runtime/charts.js: only the bars moved) and by
# Plotly.react (a full redraw), on the Plotly the chart was drawn with.
SPY_DRAWS = """(el) => {
  const plotly = el._sdPlotly;
  const counts = (el._sdSpy = { animate: 0, react: 0 });
  for (const name of ["animate", "react"]) {
    const original = plotly[name];
    plotly[name] = function (gd, ...rest) {
      if (gd === el) counts[name] += 1;
      return original.call(this, gd, ...rest);
    };
  }
}"""

# Draws the native figure's traces with the chart's own layout in a scratch chart of the same size, and returns what
# both show: [chart, scratch], each {bars: the bars' SVG paths, ticks: the y axis's labels, range: its range}.
DRAW_ALIKE = """async (el, data) => {
  const scratch = document.createElement("div");
  scratch.style.cssText = `width: ${el.clientWidth}px; position: absolute; left: -9999px`;
  document.body.append(scratch);
  await el._sdPlotly.react(scratch, data, structuredClone(el.layout), { displayModeBar: false });
  const seen = (gd) => ({
    bars: [...gd.querySelectorAll(".bars path")].map((p) => p.getAttribute("d")),
    ticks: [...gd.querySelectorAll(".ytick text")].map((t) => t.textContent),
    range: gd._fullLayout.yaxis.range,
  });
  const both = [seen(el), seen(scratch)];
  el._sdPlotly.purge(scratch);
  scratch.remove();
  return both;
}"""


def test_a_slider_moves_the_distribution_bars_as_a_full_redraw_would(page: Any) -> None:
    """A slider that changes only the draft's bars, not the axis's extremes, moves the bars without a redraw
    (js/runtime/charts.js); the chart then shows exactly what Plotly.react draws from the native figure. A Step,
    which adds the output's bars, redraws in full."""
    widget = open_live(page)
    chart = widget.locator(".sd-chart").nth(2)  # target / output / draft distributions
    chart.evaluate(SPY_DRAWS)
    slider = widget.get_by_label("Draft quality")
    for quality, press in ((0.8, "ArrowLeft"), (0.75, "ArrowLeft"), (0.75, None)):
        before = renders(chart)
        if press:
            slider.focus()
            slider.press(press)
            figure = native(quality=quality)["figures"]["distributions"]
        else:
            widget.get_by_role("button", name="Step", exact=True).click()
            figure = native(quality=quality, rounds=1)["figures"]["distributions"]
        wait_for_renders(chart, before)
        page.wait_for_function(
            "([el, ys]) => JSON.stringify(el.data.map((t) => t.y)) === JSON.stringify(ys)",
            arg=[chart.element_handle(), [trace["y"] for trace in figure["data"]]],
            timeout=15_000,
        )
        shown, drawn = chart.evaluate(DRAW_ALIKE, figure["data"])
        assert shown == drawn, f"at quality {quality} ({'slider' if press else 'Step'})"
        assert len(shown["bars"]) == sum(len(trace["y"]) for trace in figure["data"])
    # The premise: both ways were taken (the slider's two moves kept the target's bars, the extremes).
    assert chart.evaluate("(el) => el._sdSpy") == {"animate": 2, "react": 1}


def test_run_matches_theory_and_the_output_check_passes(page: Any) -> None:
    """Run plays 2,000 rounds in chunks; the page must show exactly the native one-call run of the same seed.

    The page's numbers are compared with the native run for equality; the statistics of that run (accept rate within
    4 sd of theory, the output check) belong to the package and are stated here on the native numbers: each round's
    accepted count lies in [0, gamma], so its variance is at most gamma^2 / 4; over R = drafted / gamma rounds the
    rate accepted / drafted has sd <= sqrt(gamma) / (2 sqrt(drafted)), 4 sd = 0.045 at 2,000 rounds.
    """
    widget = open_live(page, "?seed=3")
    # Every text the round's sentence (a live region, above the tiles) takes during the Run.
    widget.locator(".sd-pg-explain").evaluate(
        "(el) => { window.__sdSaid = []; new MutationObserver(() => window.__sdSaid.push(el.textContent))"
        ".observe(el, { childList: true, characterData: true, subtree: true }); }"
    )
    widget.get_by_role("button", name="Run", exact=True).click()
    expect(widget.get_by_role("button", name="Stop", exact=True)).to_be_visible()
    expect(metric(page, "rounds")).to_have_attribute("data-value", "2000", timeout=RUN_TIMEOUT)
    expect(widget.get_by_role("button", name="Run", exact=True)).to_be_visible()
    # It says once that the run plays, then tells the last round: not each chunk's, which moved the tiles under it.
    run = native(seed=3, rounds=2000)
    expect(widget.locator(".sd-pg-explain")).to_have_text(run["explanation"])
    running = "Running 2,000 rounds: the last one played is told here when the run ends."
    assert page.evaluate("window.__sdSaid") == [running, run["explanation"]]

    expected = run["metrics"]
    drafted = 4 * 2000
    assert abs(expected["accept-rate"] - expected["accept-rate-theory"]) <= 4 * math.sqrt(4) / (2 * math.sqrt(drafted))
    assert expected["exact"] == 1
    for name in ("accept-rate", "accept-rate-theory", "exact"):
        expect(metric(page, name)).to_have_attribute("data-value", js_number(expected[name]))
    expect(metric(page, "exact")).to_contain_text("consistent")
    expect(metric(page, "alpha")).to_have_attribute("data-value", js_number(expected["alpha"]))
    expect(metric(page, "tokens-emitted")).to_have_attribute("data-value", js_number(expected["tokens-emitted"]))
    expect(metric(page, "p-value")).to_have_attribute("data-value", js_number(expected["p-value"]))
    # Beside the whole run, the last 50 rounds alone (computed by the handler from the run's last rounds).
    for name in ("accept-rate-recent", "tokens-per-pass-recent", "speedup-recent", "speedup-recent-theory"):
        expect(metric(page, name)).to_have_attribute("data-value", js_number(expected[name]))
    expect(widget.get_by_text("The last 50 rounds alone")).to_be_visible()
    expect(widget.locator(".sd-pg-round")).to_have_count(24)
    expect(widget.locator(".sd-pg-streamhead")).to_contain_text("of 2,000 rounds")


def test_run_calls_grow_while_quick_and_shrink_when_slow(page: Any) -> None:
    """ui/widget.js's nextChunk sizes a Run's calls (Playground, trees): twice the rounds after a call quicker than
    CHUNK_MS / 2, half after one slower than CHUNK_MS (never below the widget's minimum or above its maximum), the
    same in between. Durations are given, not measured."""
    visit(page, "playground/")
    sizes = page.evaluate(
        """async () => {
          const { nextChunk, CHUNK_MS: ms } = await import(new URL("js/ui/widget.js", window.SDLab.site).href);
          const cases = [[25, 0], [25, ms / 2 - 1], [300, 1], [100, ms / 2], [100, ms], [100, ms + 1], [25, 10 * ms]];
          return [ms, ...cases.map(([size, took]) => nextChunk(size, took, 20, 400)), nextChunk(4, 10 * ms, 1, 200)];
        }"""
    )
    assert sizes == [200, 50, 50, 400, 100, 100, 50, 20, 2]


def test_step_explains_one_round(page: Any) -> None:
    widget = open_live(page, "?seed=4")
    widget.get_by_role("button", name="Step", exact=True).click()
    expect(metric(page, "rounds")).to_have_attribute("data-value", "1")
    explain = widget.locator(".sd-pg-explain")
    expect(explain).to_have_attribute("aria-live", "polite")
    expect(explain).to_have_text(native(seed=4, rounds=1)["explanation"])
    expect(explain).to_have_text(re.compile(r'^Round 1: drafted 4 .*(accepted \d, rejected "|all 4 accepted, bonus ")'))
    round_ = widget.locator(".sd-pg-round")
    expect(round_).to_have_count(1)
    assert round_.locator(".sd-token").count() >= 2
    widget.get_by_role("button", name="Step", exact=True).click()
    expect(metric(page, "rounds")).to_have_attribute("data-value", "2")
    expect(explain).to_have_text(re.compile(r"^Round 2: "))
    widget.get_by_role("button", name="Reset", exact=True).click()
    expect(metric(page, "rounds")).to_have_attribute("data-value", "0")


def test_url_round_trips_and_out_of_range_values_are_clamped(page: Any) -> None:
    widget = open_live(page, "?quality=0.3&gamma=99&cost=-2&seed=7")
    expect(widget.locator(".sd-notice", has_text="gamma 99 is out of range; clamped to 8")).to_be_visible()
    expect(widget.locator(".sd-notice", has_text="cost -2 is out of range; clamped to 0")).to_be_visible()
    expect(widget.get_by_label(GAMMA)).to_have_value("8")
    expect(widget.get_by_label("Draft quality")).to_have_value("0.3")
    expect(widget.get_by_label("Seed")).to_have_value("7")
    expect(page).to_have_url(re.compile(r"gamma=8"))
    expected = native(quality=0.3, gamma=8, cost=0, seed=7)["metrics"]["accept-rate-theory"]
    expect(metric(page, "accept-rate-theory")).to_have_attribute("data-value", js_number(expected))

    gamma = widget.get_by_label(GAMMA)
    gamma.focus()
    gamma.press("ArrowLeft")
    expect(page).to_have_url(re.compile(r"gamma=7"))
    # The moved control's note goes (it said nothing true of gamma 7); the cost's stays, cost being unmoved.
    expect(widget.locator(".sd-notice", has_text="gamma 99")).to_have_count(0)
    expect(widget.locator(".sd-notice")).to_have_text(["cost -2 is out of range; clamped to 0"])
    # A typed seed is read as the link's would be, and said so.
    seed = widget.get_by_label("Seed")
    seed.fill("99999999999")
    seed.press("Enter")
    expect(seed).to_have_value(str(2**31 - 1))
    expect(widget.locator(".sd-notice")).to_have_text(
        ["cost -2 is out of range; clamped to 0", f"seed 99999999999 is out of range; clamped to {2**31 - 1}"]
    )
    expect(page).to_have_url(re.compile(rf"seed={2**31 - 1}"))
    # Typing commits once it pauses, as a slider commits as it moves: no Enter, no leaving the box.
    seed.fill("7")
    expect(seed).to_be_focused()
    expect(page).to_have_url(re.compile(r"seed=7(&|$)"))
    expect(widget.locator(".sd-notice", has_text="seed")).to_have_count(0)
    url = page.url
    page.goto(url)
    widget = page.locator(WIDGET)
    expect(widget.get_by_label(GAMMA)).to_have_value("7")
    expect(widget.get_by_label("Draft quality")).to_have_value("0.3")
    expect(widget.get_by_label("Seed")).to_have_value("7")
    expect(widget.locator(".sd-notice")).to_have_count(0)


def test_predict_then_test_buttons_set_the_controls(page: Any) -> None:
    widget = open_live(page)
    quality = widget.get_by_label("Draft quality")
    gamma = widget.get_by_label(GAMMA)
    run = widget.get_by_role("button", name="Run", exact=True)

    widget.locator('[data-experiment="good"]').click()
    expect(quality).to_have_value("0.95")
    expect(gamma).to_have_value("4")
    expect(metric(page, "rounds")).not_to_have_attribute("data-value", "0")
    # Each experiment's Run plays its 2,000 rounds to the end (~0.4 s idle). Stop is not pressed: the run can end
    # first, under load, and the Stop button is then gone (a test run failed so, waiting for it).
    expect(run).to_be_visible(timeout=RUN_TIMEOUT)
    played = int(metric(page, "rounds").get_attribute("data-value"))

    # Experiment 2 keeps the run: rounds go on from where they were, under the new quality. Its text points at the
    # cards that can show the drop: the last rounds' numbers, beside the whole run's.
    card = widget.locator(".sd-pg-card").filter(has=page.locator('[data-experiment="random"]'))
    card.get_by_text("What to look for").click()
    expect(card).to_contain_text("\u201clast rounds\u201d cards")
    widget.locator('[data-experiment="random"]').click()
    expect(quality).to_have_value("0.05")
    page.wait_for_function(
        "n => Number(document.querySelector('[data-widget=playground] [data-metric=rounds]').dataset.value) > n",
        arg=played + 20,
    )
    expect(run).to_be_visible(timeout=RUN_TIMEOUT)
    assert int(metric(page, "rounds").get_attribute("data-value")) > played

    widget.locator('[data-experiment="wasted"]').click()
    expect(quality).to_have_value("0.3")
    expect(gamma).to_have_value("8")
    expect(run).to_be_visible(timeout=RUN_TIMEOUT)
    expect(page).to_have_url(re.compile(r"quality=0\.3.*gamma=8|gamma=8.*quality=0\.3"))


# Presses Run, then Stop the moment the button reads Stop (in the page, so no round trip to the test can let the
# run end first).
RUN_THEN_STOP = """(button) => new Promise((resolve) => {
  const watch = new MutationObserver(() => {
    if (button.textContent !== "Stop") return;
    watch.disconnect();
    button.click();
    resolve();
  });
  watch.observe(button, { childList: true, characterData: true, subtree: true });
  button.click();
})"""


def test_stop_ends_a_run_early(page: Any) -> None:
    """Stop ends a Run between two of its calls: the run stops well short of its 2,000 rounds, the button reads Run
    again, and the rounds on screen stay as they are."""
    widget = open_live(page)
    run = widget.get_by_role("button", name="Run", exact=True)
    run.evaluate(RUN_THEN_STOP)
    expect(run).to_be_visible(timeout=RUN_TIMEOUT)
    expect(widget).not_to_have_attribute("data-sd-running", re.compile(r"."))
    rounds = int(metric(page, "rounds").get_attribute("data-value") or 0)
    assert rounds < 2000, rounds
    # Nothing still runs: a Step adds exactly one round.
    widget.get_by_role("button", name="Step", exact=True).click()
    expect(metric(page, "rounds")).to_have_attribute("data-value", str(rounds + 1))


def test_takeaway_follows_the_setting(page: Any) -> None:
    widget = open_live(page)
    takeaway = page.locator('.sd-widget[data-widget="playground-takeaway"] .sd-chart')
    expect(takeaway.locator(".main-svg").first).to_be_visible()
    before = renders(takeaway)
    gamma = widget.get_by_label(GAMMA)
    gamma.focus()
    gamma.press("ArrowRight")
    wait_for_renders(takeaway, before)
    expect(page.locator('.sd-widget[data-widget="playground-takeaway"] .sd-note')).to_contain_text(GAMMA_SIGN + " = 5")


# Resolves true once the Playground has published a result for its takeaway (module URLs resolve to one instance).
# The page's modules run once the document is parsed (they are deferred); imported any earlier, they would run
# before <body> exists, as no page ever runs them.
PUBLISHED = """async () => {
  if (document.readyState === "loading") return false;
  const { takeaway } = await import(new URL("../js/widgets/playground.js", document.baseURI).href);
  return takeaway.latest !== null;
}"""


@pytest.mark.fresh_context
def test_takeaway_loaded_after_the_playground_published_paints_its_result(page: Any, server: SiteServer) -> None:
    """The takeaway's module arrives after the Playground has published: the takeaway paints that result at once
    (it once called the binding's paint before its own view existed, an error in the console)."""
    server.hold("widgets/playground-takeaway.js")
    try:
        page.goto("playground/", wait_until="commit")  # "load" would wait for the held module
        page.wait_for_function(PUBLISHED)
    finally:
        server.release()
    takeaway = page.locator('.sd-widget[data-widget="playground-takeaway"]')
    expect(takeaway).to_have_attribute("data-sd-paints", re.compile(r"^[1-9]"))
    expect(takeaway.locator(".sd-note")).to_contain_text(GAMMA_SIGN + " = 4")
