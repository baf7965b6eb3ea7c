"""The Tuning page in the browser: the gamma calculator and the adaptive-policy comparison.

Every expected number is computed natively by the same package (theory.py, or the same handler with the same
arguments), so these tests check that the page shows what Python in the browser computed, and that Pyodide and
native CPython agree. Waits are on visible state only.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from conftest import expect_plotly, js_number, renders, shared_page, visit, wait_for_renders
from playwright.sync_api import expect

from specdec_core import theory, web

pytestmark = [pytest.mark.browser, shared_page]

BOOT_MS = 60_000
CALC = '.sd-widget[data-widget="tuning-calculator"]'
POLICIES = '.sd-widget[data-widget="tuning-policies"]'
CHUNK = 25  # tokens per policy per call, as in tuning-policies.js
# The controls' visible labels (spelled out: ruff flags literal Greek letters as confusable).
ALPHA_LABEL = "Agreement rate \N{GREEK SMALL LETTER ALPHA}"
GAMMA_LABEL = "Speculation length \N{GREEK SMALL LETTER GAMMA}"


def metric(page: Any, root: str, name: str) -> float:
    return float(page.locator(f'{root} [data-metric="{name}"]').get_attribute("data-value"))


def expect_metric(page: Any, root: str, name: str, value: float, tol: float = 1e-9) -> None:
    """Wait until [data-metric=name] holds ``value`` (within ``tol``: the browser parses the JSON float)."""
    page.wait_for_function(
        "([sel, v, tol]) => { const el = document.querySelector(sel); "
        "return el && Math.abs(Number(el.dataset.value) - v) <= tol; }",
        arg=[f'{root} [data-metric="{name}"]', value, tol],
        timeout=BOOT_MS,
    )


def open_live(page: Any, query: str = "") -> None:
    visit(page, "tuning/" + query)
    expect(page.locator("[data-sd-status]")).to_have_attribute("data-sd-status", "ready", timeout=BOOT_MS)
    expect(page.locator(CALC)).to_have_attribute("data-sd-live", "true", timeout=BOOT_MS)
    expect_plotly(page)


def native_policies(total: int, **args: Any) -> dict[str, Any]:
    """The same chunked run the widget makes, natively."""
    state, result, done = None, {}, 0
    while done < total:
        size = min(CHUNK, total - done)
        result = json.loads(
            web.call("tuning.policies", json.dumps({**args, "tokens": size, "total": total, "state": state}))
        )
        state, done = result["state"], done + size
    return result


def test_calculator_goes_live_and_alpha_moves_figure_and_metrics(page: Any) -> None:
    open_live(page)
    expect_metric(page, CALC, "speedup", theory.speedup(0.8, 4, 0.05))
    expect_metric(page, CALC, "optimal-gamma", theory.optimal_gamma(0.8, 0.05), tol=0)
    curve = page.locator(f"{CALC} .sd-chart").first
    before = renders(curve)

    # Ten keyboard steps of 0.01 take alpha from 0.80 to 0.70.
    slider = page.locator(CALC).get_by_label(ALPHA_LABEL, exact=True)
    slider.focus()
    for _ in range(10):
        slider.press("ArrowLeft")
    expect_metric(page, CALC, "speedup", theory.speedup(0.7, 4, 0.05))
    expect_metric(page, CALC, "tokens-per-pass", theory.expected_tokens(0.7, 4))
    expect_metric(page, CALC, "operations-factor", theory.operations_factor(0.7, 4, 0.05))
    even = theory.break_even_alpha(4, 0.05)
    assert even is not None
    expect_metric(page, CALC, "break-even-alpha", even)
    wait_for_renders(curve, before)
    expect(page).to_have_url(re.compile(r"alpha=0\.7(&|$)"))
    expect(page.locator(f"{CALC} .sd-verdict")).to_contain_text("Speculation pays")


def test_calculator_url_round_trip_and_clamping(page: Any) -> None:
    open_live(page, "?alpha=0.65&gamma=99&cost=0.2")
    expect(page.locator(f"{CALC} .sd-notice")).to_contain_text("gamma 99 is out of range; clamped to 16")
    expect_metric(page, CALC, "speedup", theory.speedup(0.65, 16, 0.2))

    # One step down in gamma is written to the URL; loading that URL reproduces the same numbers.
    gamma = page.locator(CALC).get_by_label(GAMMA_LABEL, exact=True)
    gamma.focus()
    gamma.press("ArrowLeft")
    expect_metric(page, CALC, "speedup", theory.speedup(0.65, 15, 0.2))
    expect(page).to_have_url(re.compile(r"gamma=15"))
    url = page.url
    assert "alpha=0.65" in url and "cost=0.2" in url
    page.goto(url)
    expect(page.locator(CALC)).to_have_attribute("data-sd-live", "true", timeout=BOOT_MS)
    expect_plotly(page)
    expect_metric(page, CALC, "speedup", theory.speedup(0.65, 15, 0.2))
    expect(page.locator(f"{CALC} .sd-notice")).to_have_count(0)

    # The draft's operations ratio is in the link too: a reload kept c and set it back to c.
    expect(page.locator(CALC).get_by_label("Draft operations")).to_have_value("0.2")
    assert "op_cost=0.2" in url
    page.goto(url.replace("op_cost=0.2", "op_cost=0.5"))
    expect(page.locator(CALC)).to_have_attribute("data-sd-live", "true", timeout=BOOT_MS)
    expect(page.locator(CALC).get_by_label("Draft operations")).to_have_value("0.5")
    expect_metric(page, CALC, "operations-factor", theory.operations_factor(0.65, 15, 0.5))


def test_calculator_converts_a_vllm_acceptance_rate(page: Any) -> None:
    open_live(page)
    page.locator(CALC).get_by_label("I know my…").select_option("rate")
    rate = page.locator(CALC).get_by_label("Draft acceptance rate (accepted / drafted)")
    expect(rate).to_be_visible()
    expect(page.locator(CALC).get_by_label(ALPHA_LABEL, exact=True)).to_be_hidden()
    rate.focus()
    for _ in range(5):
        rate.press("ArrowRight")
    value = float(rate.input_value())
    expect_metric(page, CALC, "alpha", theory.per_token_alpha_from_acceptance_rate(value, 4))
    expect_metric(page, CALC, "accept-rate", value)


def test_policies_run_completes_and_matches_native(page: Any) -> None:
    open_live(page)
    widget = page.locator(POLICIES)
    widget.get_by_label("Tokens per policy N").fill("50")
    widget.get_by_role("button", name="Run").click()
    status = widget.locator(".sd-tuning-progress")
    expect(status).to_have_attribute("data-state", "done", timeout=BOOT_MS)
    expect(status).to_contain_text("Done: 50 tokens per policy")
    assert widget.locator("progress").evaluate("el => el.value") == 50
    expect(widget.get_by_role("button", name="Run")).to_be_enabled()
    expect(widget.get_by_role("button", name="Stop")).to_be_disabled()

    # Pyodide and native CPython, same seed and chunks: the same numbers.
    native = native_policies(50, seed=0, gamma=4, tau=0.5, cost=0.05, temperature=1, top_k=0, top_p=1)["metrics"]
    for name in ("fixed-speedup", "confidence-tokens-per-pass", "dynamic-discarded-fraction", "oracle-speedup"):
        expect_metric(page, POLICIES, name, native[name])
    expect_metric(page, POLICIES, "alpha", native["alpha"])

    # The policy controls start no run: the widget says so beside them, and says when the numbers shown are
    # from other settings than the controls'.
    expect(widget.get_by_text("These settings apply to the next Run")).to_be_visible()
    tau = widget.get_by_label("Confidence threshold \u03c4")
    tau.focus()
    tau.press("ArrowRight")
    expect(status).to_have_attribute("data-state", "changed")
    expect(status).to_contain_text("press Run to measure these")
    expect_metric(page, POLICIES, "confidence-tokens-per-pass", native["confidence-tokens-per-pass"])


def test_draft_cost_moved_in_the_calculator_moves_the_policies_and_says_their_numbers_are_stale(page: Any) -> None:
    """The link holds one draft cost c for the page: moving the calculator's moves the policy comparison's (and
    the vLLM widget's) as if the reader had moved it there, so the comparison says its numbers are from other
    settings, as it does for a move of its own controls (it failed so when the shared value was set without the
    control's own event: the slider moved, the stale numbers stood unmarked)."""
    open_live(page)
    policies = page.locator(POLICIES)
    status = policies.locator(".sd-tuning-progress")
    expect(status).not_to_have_attribute("data-state", "changed")
    cost = page.locator(f"{CALC} input[data-sd-url=cost]")
    before = float(cost.input_value())
    cost.focus()
    cost.press("ArrowRight")
    moved = f"{before + 0.01:.2f}"
    expect(page).to_have_url(re.compile(rf"[?&]cost={re.escape(moved)}(&|$)"))
    for widget in (POLICIES, '.sd-widget[data-widget="tuning-vllm"]'):
        expect(page.locator(f"{widget} input[data-sd-url=cost]")).to_have_value(moved)
    expect(status).to_have_attribute("data-state", "changed")
    expect(status).to_contain_text("press Run to measure these")
    # Moved back to the settings the numbers were measured with, the note goes: it had stayed under numbers that
    # were theirs again.
    said = status.text_content()
    cost.press("ArrowLeft")
    expect(policies.locator("input[data-sd-url=cost]")).to_have_value(f"{before:.2f}")
    expect(status).not_to_have_attribute("data-state", "changed")
    expect(status).not_to_have_text(said or "")
    expect(status).to_have_text(re.compile("build-time run|Python is ready"))


def test_a_link_that_sets_the_shared_cost_shows_the_build_time_run_as_other_settings(page: Any) -> None:
    """The comparison computes nothing before Run. A link that set its draft cost (the page shares c) left
    "Computing for c = 0.1…" above an empty chart and blank tiles for good; it now shows the build-time run,
    marked as measured with other settings, until Run measures these."""
    open_live(page, "?cost=0.1")
    policies = page.locator(POLICIES)
    expect(policies.locator("input[data-sd-url=cost]")).to_have_value("0.1")
    status = policies.locator(".sd-tuning-progress")
    expect(status).to_have_attribute("data-state", "changed")
    expect(status).to_contain_text("press Run to measure these")
    expect(policies.locator(".sd-pending")).to_have_count(0)
    built = json.loads(policies.locator("template[data-sd-initial]").evaluate("(t) => t.content.textContent"))
    name, value = next(iter(built["metrics"].items()))
    expect(policies.locator(f'[data-metric="{name}"]')).to_have_attribute("data-value", js_number(value))


def test_policies_keep_the_latest_text_when_the_last_chunk_emits_none(page: Any) -> None:
    """A 400-token run's last chunk emits nothing under fixed gamma (its budget is spent): the latest text on screen
    stays the last that was emitted, where it read “” (natively: the chunk's sample is empty)."""
    args = {"seed": 0, "gamma": 4, "tau": 0.5, "cost": 0.05, "temperature": 1, "top_k": 0, "top_p": 1}
    state, samples = None, []
    for _ in range(400 // CHUNK):
        chunk = json.loads(
            web.call("tuning.policies", json.dumps({**args, "tokens": CHUNK, "total": 400, "state": state}))
        )
        state = chunk["state"]
        samples.append(chunk["sample"])
    assert samples[-1] == "" and samples[-2].strip()
    open_live(page)
    widget = page.locator(POLICIES)
    widget.get_by_label("Tokens per policy N").fill("400")
    widget.get_by_role("button", name="Run").click()
    expect(widget.locator(".sd-tuning-progress")).to_have_attribute("data-state", "done", timeout=BOOT_MS)
    # N was typed, then committed by Run's click taking the focus: once. A second commit after the typing pause
    # read as a setting moved during the run.
    expect(widget.locator(".sd-tuning-progress")).to_have_text("Done: 400 tokens per policy (seed 0).")
    text = samples[-2][-240:].strip()  # as the page cuts it: the last 240 characters, trimmed
    expect(widget.get_by_text("Latest text under fixed")).to_have_text(
        f"Latest text under fixed \N{GREEK SMALL LETTER GAMMA}: “{text}”"
    )


def test_policies_run_can_be_stopped(page: Any) -> None:
    open_live(page)
    widget = page.locator(POLICIES)
    widget.get_by_label("Tokens per policy N").fill("5000")
    widget.get_by_role("button", name="Run").click()
    status = widget.locator(".sd-tuning-progress")
    expect(status).to_have_attribute("data-state", "running")
    # Wait for visible progress (one chunk done), then stop.
    page.wait_for_function(f"() => document.querySelector('{POLICIES} progress').value >= {CHUNK}", timeout=BOOT_MS)
    # A setting moved mid-run is not the run's: once it ends, the status says the numbers are from before.
    gamma = widget.get_by_label("Speculation length", exact=False)
    gamma.focus()
    gamma.press("ArrowLeft")
    widget.get_by_role("button", name="Stop").click()
    expect(status).to_have_attribute("data-state", "stopped", timeout=BOOT_MS)
    expect(status).to_contain_text("Stopped at")
    expect(status).to_contain_text("The settings have changed since it started")
    done = widget.locator("progress").evaluate("el => el.value")
    assert CHUNK <= done < 5000
    expect(widget.get_by_role("button", name="Run")).to_be_enabled()


def test_policies_run_and_stop_by_keyboard_keep_the_focus_and_quiet_the_page(page: Any) -> None:
    """Run by keyboard moves the focus to Stop, and Stop back to Run: a disabled button that had the focus dropped
    it to the page, where Space did nothing. While it runs the widget is aria-busy, so a screen reader reads its
    lines once, not with every chunk; the tiles' numbers are no live regions at all."""
    open_live(page)
    widget = page.locator(POLICIES)
    outputs = widget.locator("output[data-metric]")
    assert outputs.count() > 0
    assert set(outputs.evaluate_all("(els) => els.map((e) => e.getAttribute('aria-live'))")) == {"off"}
    widget.get_by_label("Tokens per policy N").fill("5000")
    run, stop = widget.get_by_role("button", name="Run"), widget.get_by_role("button", name="Stop")
    run.focus()
    page.keyboard.press("Enter")
    expect(stop).to_be_focused()
    expect(widget).to_have_attribute("aria-busy", "true")
    page.wait_for_function(f"() => document.querySelector('{POLICIES} progress').value >= {CHUNK}", timeout=BOOT_MS)
    page.keyboard.press("Space")
    expect(widget.locator(".sd-tuning-progress")).to_have_attribute("data-state", "stopped", timeout=BOOT_MS)
    expect(run).to_be_focused()
    expect(widget).not_to_have_attribute("aria-busy", "true")


# Three figures that move only the policies chart's bars (its y ranges are fixed), drawn back to back three times:
# each later draw overtakes the animation of the one before. Each draw's outcome, or "unsettled" if it has neither
# resolved nor rejected 10 s after the newest began.
OVERTAKEN_DRAWS = """async (el) => {
  const { render, figureOf } = await import(new URL("js/runtime/charts.js", window.SDLab.site).href);
  const figure = figureOf(el);
  const scaled = (k) => ({ ...figure, data: figure.data.map((t) => ({ ...t, y: t.y.map((v) => v * k) })) });
  const outcomes = [];
  for (let round = 0; round < 3; round++) {
    const draws = [0.99, 0.98, 0.97].map((k) => render(el, scaled(k)).then(() => "ok", (err) => `rejected: ${err}`));
    const guard = new Promise((resolve) => setTimeout(() => resolve("unsettled"), 10_000));
    outcomes.push(...(await Promise.all(draws.map((d) => Promise.race([d, guard])))));
  }
  const shown = JSON.stringify(el.data.map((t) => t.y)) === JSON.stringify(scaled(0.97).data.map((t) => t.y));
  return { outcomes, shown };
}"""


def test_a_draw_overtaken_by_a_newer_figure_settles_and_fails_nothing(page: Any) -> None:
    """plotly.js 4.1.1 rejects an animation that a newer one interrupts with no reason, or leaves it unsettled;
    the widget had shown that as "This widget failed: undefined" during a run. Every draw must settle without
    an error, and the chart must show the newest figure."""
    open_live(page)
    chart = page.locator(f"{POLICIES} .sd-chart")
    expect(chart).to_have_attribute("data-sd-engine", "plotly", timeout=BOOT_MS)
    result = chart.evaluate(OVERTAKEN_DRAWS)
    assert result == {"outcomes": ["ok"] * 9, "shown": True}
