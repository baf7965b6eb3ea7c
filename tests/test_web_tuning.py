"""The Tuning page's handlers (tuning.calculator, tuning.policies) and theory.break_even_alpha.

Expected values come from theory.py called directly, never from numbers written into the test.
"""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

import pytest

from specdec_core import theory, web


def call(name: str, **args: Any) -> dict[str, Any]:
    text = web.call(name, json.dumps(args))
    # JSON.parse in the browser rejects NaN/Infinity: the text must not contain them.
    result: dict[str, Any] = json.loads(text, parse_constant=lambda token: pytest.fail(f"{name} emitted {token}"))
    return result


# --- theory.break_even_alpha ---------------------------------------------------------------------------------


@pytest.mark.parametrize("gamma", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("cost", [0.01, 0.05, 0.2, 0.5, 0.9])
def test_break_even_alpha_gives_speedup_one(gamma: int, cost: float) -> None:
    alpha = theory.break_even_alpha(gamma, cost)
    assert alpha is not None and 0.0 < alpha < 1.0
    assert theory.speedup(alpha, gamma, cost) == pytest.approx(1.0, abs=1e-9)
    # It is the boundary: a little less agreement loses, a little more wins.
    assert (
        theory.speedup(max(0.0, alpha - 1e-3), gamma, cost) < 1.0 < theory.speedup(min(1.0, alpha + 1e-3), gamma, cost)
    )


def test_break_even_alpha_for_one_draft_token_is_the_cost() -> None:
    """gamma = 1: speedup = (1 + alpha) / (1 + c), which is 1 exactly at alpha = c."""
    for cost in (0.1, 0.37, 0.8):
        assert theory.break_even_alpha(1, cost) == pytest.approx(cost, abs=1e-12)


def test_break_even_alpha_edges() -> None:
    assert theory.break_even_alpha(4, 0.0) == 0.0  # free drafts never lose
    assert theory.break_even_alpha(4, 1.5) is None  # a draft slower than the target never wins
    with pytest.raises(ValueError, match="gamma"):
        theory.break_even_alpha(0, 0.1)
    with pytest.raises(ValueError, match="cost"):
        theory.break_even_alpha(4, -0.1)


def test_break_even_alpha_rises_with_cost() -> None:
    values = [theory.break_even_alpha(4, c) for c in (0.05, 0.1, 0.2, 0.4)]
    assert all(v is not None for v in values)
    assert values == sorted(values)
    assert len(set(values)) == len(values)


# --- tuning.calculator ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("alpha", "gamma", "cost"), [(0.8, 4, 0.05), (0.5, 3, 0.3), (0.95, 12, 0.02), (0.1, 2, 0.5)])
def test_calculator_metrics_match_theory(alpha: float, gamma: int, cost: float) -> None:
    m = call("tuning.calculator", alpha=alpha, gamma=gamma, cost=cost, op_cost=0.1)["metrics"]
    best = theory.optimal_gamma(alpha, cost)
    assert m["alpha"] == pytest.approx(alpha, abs=1e-12)
    assert m["tokens-per-pass"] == pytest.approx(theory.expected_tokens(alpha, gamma), abs=1e-11)
    assert m["speedup"] == pytest.approx(theory.speedup(alpha, gamma, cost), abs=1e-11)
    assert m["accept-rate"] == pytest.approx(theory.draft_acceptance_rate(alpha, gamma), abs=1e-11)
    assert m["optimal-gamma"] == best
    assert m["operations-factor"] == pytest.approx(theory.operations_factor(alpha, gamma, 0.1), abs=1e-11)
    assert m["break-even-alpha"] == pytest.approx(theory.break_even_alpha(gamma, cost), abs=1e-11)
    expected_best = theory.speedup(alpha, best, cost) if best else 1.0
    assert m["optimal-speedup"] == pytest.approx(expected_best, abs=1e-11)


@pytest.mark.parametrize("gamma", [16, 32, 33, 40, 64])
def test_calculator_accepts_every_gamma_the_package_allows(gamma: int) -> None:
    """gamma 33..64 once raised a bare KeyError: the speedup curve stopped at 32 and the reader's gamma had no point."""
    result = call("tuning.calculator", alpha=0.9, gamma=gamma, cost=0.01)
    curve = next(t for t in result["figures"]["speedup"]["data"] if t["name"].startswith("speedup"))
    mine = next(t for t in result["figures"]["speedup"]["data"] if t["name"].startswith("your"))
    assert max(curve["x"]) >= gamma
    assert mine["y"] == [pytest.approx(theory.speedup(0.9, gamma, 0.01), abs=1e-11)]
    assert result["metrics"]["speedup"] == pytest.approx(theory.speedup(0.9, gamma, 0.01), abs=1e-11)


def test_calculator_says_whether_it_pays() -> None:
    even = theory.break_even_alpha(4, 0.2)
    assert even is not None
    assert call("tuning.calculator", alpha=min(1.0, even + 0.05), gamma=4, cost=0.2)["pays"] is True
    assert call("tuning.calculator", alpha=max(0.0, even - 0.05), gamma=4, cost=0.2)["pays"] is False


def test_calculator_op_cost_defaults_to_cost() -> None:
    m = call("tuning.calculator", alpha=0.7, gamma=5, cost=0.3)["metrics"]
    assert m["operations-factor"] == pytest.approx(theory.operations_factor(0.7, 5, 0.3), abs=1e-11)


def test_calculator_converts_vllm_draft_acceptance_rate() -> None:
    """A rate produced by alpha = 0.72 at gamma = 5 converts back to 0.72, and the outputs follow that alpha."""
    rate = theory.draft_acceptance_rate(0.72, 5)
    m = call("tuning.calculator", source="rate", rate=rate, gamma=5, cost=0.1)["metrics"]
    assert m["alpha"] == pytest.approx(0.72, abs=1e-9)
    assert m["accept-rate"] == pytest.approx(rate, abs=1e-9)
    assert m["speedup"] == pytest.approx(theory.speedup(0.72, 5, 0.1), abs=1e-9)


def test_calculator_converts_mean_acceptance_length() -> None:
    """vLLM's mean acceptance length is 1 + accepted / drafts = tokens per target pass."""
    length = theory.expected_tokens(0.65, 3)
    m = call("tuning.calculator", source="length", length=length, gamma=3, cost=0.1)["metrics"]
    assert m["alpha"] == pytest.approx(0.65, abs=1e-9)
    assert m["tokens-per-pass"] == pytest.approx(length, abs=1e-9)


def test_calculator_conversions_agree_with_each_other() -> None:
    """The three ways to give acceptance describe one point: each converts to the same alpha."""
    alpha, gamma = 0.83, 6
    by_alpha = call("tuning.calculator", alpha=alpha, gamma=gamma, cost=0.05)["metrics"]
    by_rate = call("tuning.calculator", source="rate", rate=by_alpha["accept-rate"], gamma=gamma, cost=0.05)
    by_length = call("tuning.calculator", source="length", length=by_alpha["tokens-per-pass"], gamma=gamma, cost=0.05)
    assert by_rate["metrics"]["alpha"] == pytest.approx(alpha, abs=1e-9)
    assert by_length["metrics"]["alpha"] == pytest.approx(alpha, abs=1e-9)


def test_calculator_clamps_an_impossible_length_and_says_so() -> None:
    result = call("tuning.calculator", source="length", length=9.0, gamma=4, cost=0.05)
    assert result["metrics"]["tokens-per-pass"] == pytest.approx(5.0, abs=1e-6)
    assert result["notes"] and "impossible" in result["notes"][0]


def test_calculator_without_a_break_even_when_drafts_cost_more_than_the_target() -> None:
    result = call("tuning.calculator", alpha=0.99, gamma=4, cost=1.5)
    assert "break-even-alpha" not in result["metrics"]
    assert result["pays"] is False
    assert result["metrics"]["optimal-gamma"] == 0


def test_calculator_figures_mark_the_optimum_and_the_reader() -> None:
    result = call("tuning.calculator", alpha=0.8, gamma=4, cost=0.05)
    curve = result["figures"]["speedup"]["data"]
    best = theory.optimal_gamma(0.8, 0.05)
    line = next(t for t in curve if t["name"].startswith("speedup"))
    assert line["x"][0] == 1 and max(line["x"]) >= best
    assert line["y"][line["x"].index(4)] == pytest.approx(theory.speedup(0.8, 4, 0.05), abs=1e-11)
    star = next(t for t in curve if t["name"].startswith("optimal"))
    assert star["x"] == [best]
    heat, marker = result["figures"]["map"]["data"]
    assert heat["type"] == "heatmap" and marker["x"] == [0.05] and marker["y"] == [0.8]
    # Each cell is theory.optimal_gamma at its (alpha, cost).
    i, j = heat["y"].index(0.6), heat["x"].index(0.1)
    assert heat["z"][i][j] == theory.optimal_gamma(0.6, 0.1)


def test_calculator_moving_alpha_changes_the_figure_and_metrics() -> None:
    a = call("tuning.calculator", alpha=0.6, gamma=4, cost=0.05)
    b = call("tuning.calculator", alpha=0.9, gamma=4, cost=0.05)
    assert a["metrics"]["speedup"] < b["metrics"]["speedup"]
    assert a["figures"]["speedup"] != b["figures"]["speedup"]


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ({"alpha": 1.2}, "alpha"),
        ({"gamma": 0}, "gamma"),
        ({"cost": -1}, "cost"),
        ({"source": "guess"}, "source"),
        ({"source": "rate"}, "rate"),
        ({"source": "rate", "rate": 1.5}, "rate"),
        ({"op_cost": -0.5}, "op_cost"),
    ],
)
def test_calculator_rejects_bad_input_by_name(args: dict[str, Any], match: str) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        web.call("tuning.calculator", json.dumps(args))


# --- tuning.policies -----------------------------------------------------------------------------------------

POLICIES = ("fixed", "confidence", "dynamic", "oracle")


def run_chunks(chunks: int, tokens: int, **args: Any) -> dict[str, Any]:
    """The page's way: a run of chunks * tokens tokens per policy, streamed in calls that hand the state back."""
    state = None
    result: dict[str, Any] = {}
    for _ in range(chunks):
        result = call("tuning.policies", tokens=tokens, total=chunks * tokens, state=state, **args)
        state = result["state"]
    return result


def test_policies_streamed_in_chunks_equal_one_call() -> None:
    """A run streamed in 25-token chunks is the run one call makes: the same tokens per target pass for every
    policy, the same counters, the same random state (the chunks once reseeded the stream, so they differed)."""
    chunked = run_chunks(4, 25, seed=7, gamma=3)
    once = call("tuning.policies", tokens=100, seed=7, gamma=3)
    for name in POLICIES:
        assert chunked["metrics"][f"{name}-tokens-per-pass"] == once["metrics"][f"{name}-tokens-per-pass"]
    assert chunked["metrics"] == once["metrics"]
    assert chunked["state"] == once["state"]
    assert chunked["done"] and once["done"]


def test_policies_sample_shows_a_stray_byte_as_its_value() -> None:
    """The n-gram models can draw a byte that is no whole character: seed 5's first chunk draws 0x94 alone. The
    sample names it, as the Draft page's pieces do, rather than a U+FFFD that reads like a broken page."""
    sample = call("tuning.policies", tokens=50, total=400, seed=5)["sample"]
    assert "could<0x94> civility" in sample
    assert "\ufffd" not in sample


def test_policy_panels_keep_headroom_above_their_tallest_bar() -> None:
    """Each of the four panels has its own y axis running from 0 to 12% above its tallest bar (autoranged, the
    oracle's bar reached the panel's top edge). A panel whose bars are all 0 (the oracle alone discards nothing)
    keeps Plotly's range from 0 rather than a range of no height."""
    for seed in range(3):
        figure = call("tuning.policies", tokens=60, seed=seed, gamma=4)["figure"]
        layout = figure["layout"]
        for suffix in ("", "2", "3", "4"):
            bars = [t["y"][0] for t in figure["data"] if t.get("yaxis", "y") == f"y{suffix}"]
            assert len(bars) == len(POLICIES)
            low, high = layout[f"yaxis{suffix}"]["range"]
            assert low == 0 and max(bars) > 0 and high == pytest.approx(1.12 * max(bars), abs=1e-6)
    alone = call("tuning.policies", tokens=60, seed=0, gamma=4, policies_=["oracle"])["figure"]
    assert [t["y"][0] for t in alone["data"] if t.get("yaxis") == "y3"] == [0.0]
    assert "range" not in alone["layout"]["yaxis3"] and alone["layout"]["yaxis3"]["rangemode"] == "tozero"


def test_policies_emit_exactly_the_budget_per_policy() -> None:
    result = run_chunks(3, 20, seed=3)
    for name in POLICIES:
        counters = result["state"][name]["counters"]
        assert result["metrics"][f"{name}-tokens-emitted"] == 60
        assert counters["emitted"] == counters["accepted"] + counters["corrections"] + counters["bonuses"]
        assert counters["drafted"] == counters["draft_steps"]


def test_policies_metrics_follow_from_the_counters() -> None:
    cost = 0.1
    result = run_chunks(2, 30, seed=5, cost=cost)
    for name in POLICIES:
        c = result["state"][name]["counters"]
        m = result["metrics"]
        assert m[f"{name}-tokens-per-pass"] == pytest.approx(c["emitted"] / c["target_passes"], abs=1e-11)
        assert m[f"{name}-draft-per-token"] == pytest.approx(c["draft_steps"] / c["emitted"], abs=1e-11)
        assert m[f"{name}-discarded-fraction"] == pytest.approx(c["discarded"] / c["drafted"], abs=1e-11)
        walltime = c["target_passes"] + cost * c["draft_steps"]
        assert m[f"{name}-speedup"] == pytest.approx(c["emitted"] / walltime, abs=1e-11)
    fixed = result["state"]["fixed"]["counters"]
    assert result["metrics"]["alpha"] == pytest.approx(
        fixed["accepted"] / (fixed["accepted"] + fixed["rejected"]), abs=1e-11
    )


def test_policies_oracle_never_discards_and_beats_fixed_per_pass() -> None:
    """The oracle stops at the first rejection (nothing discarded) and drafts up to 16: over 200 tokens it gets at
    least as many tokens per target pass as fixed gamma = 4 on this pair."""
    m = run_chunks(4, 50, seed=0, gamma=4)["metrics"]
    assert m["oracle-discarded-fraction"] == 0.0
    assert m["oracle-tokens-per-pass"] >= m["fixed-tokens-per-pass"]


def test_policies_are_deterministic_given_the_seed() -> None:
    a = run_chunks(2, 25, seed=11)
    b = run_chunks(2, 25, seed=11)
    c = run_chunks(2, 25, seed=12)
    assert a == b
    assert a["state"] != c["state"]


def test_policies_sampling_knobs_reach_the_models() -> None:
    """Greedy-like sampling (top-k 1) makes both models one-hot: verification is a token match."""
    hot = run_chunks(1, 60, seed=1, top_k=1)["metrics"]
    warm = run_chunks(1, 60, seed=1)["metrics"]
    assert hot["alpha"] != warm["alpha"]
    assert 0.0 <= hot["alpha"] <= 1.0


def test_policies_figure_gives_each_measure_its_own_axis() -> None:
    """Four panels (tokens per pass, draft steps per token, discarded share, speedup), one bar per policy in each:
    a share and a speedup never share a y axis, and each policy has one legend entry."""
    result = call("tuning.policies", tokens=20, seed=0)
    traces, axes = result["figure"]["data"], result["figure"]["layout"]
    assert [t["type"] for t in traces] == ["bar"] * 16
    assert {t["yaxis"] for t in traces} == {"y", "y2", "y3", "y4"}
    titles = [axes[k]["title"]["text"] for k in ("yaxis", "yaxis2", "yaxis3", "yaxis4")]
    assert titles == ["tokens per target pass", "draft steps per token", "discarded share", "speedup at c"]
    speedups = [t for t in traces if t["yaxis"] == "y4"]
    for trace, name in zip(speedups, POLICIES, strict=True):
        assert trace["y"][0] == pytest.approx(result["metrics"][f"{name}-speedup"], abs=1e-11)
    assert sum(t["showlegend"] for t in traces) == 4
    assert all(math.isfinite(v) for t in traces for v in t["y"])


def test_an_optimum_at_the_searchs_end_is_said_to_be_one() -> None:
    """At alpha 0.99 and c 0.01 the speedup still rises past gamma 32, where the search stops: the result says so
    (``capped``, and a note) instead of presenting 32 as the optimum; at alpha 0.8 nothing is capped."""
    high = call("tuning.calculator", alpha=0.99, gamma=16, cost=0.01)
    assert high["capped"] is True and high["metrics"]["optimal-gamma"] == 32
    assert theory.speedup(0.99, 33, 0.01) > high["metrics"]["optimal-speedup"]
    assert any("search stops" in note for note in high["notes"])
    names = [t["name"] for t in high["figures"]["speedup"]["data"]]
    assert "best searched \N{GREEK SMALL LETTER GAMMA} = 32" in names and not [n for n in names if "optimal" in n]
    usual = call("tuning.calculator", alpha=0.8, gamma=4, cost=0.05)
    assert usual["capped"] is False and not usual["notes"]


def test_map_sets_no_gamma_pays_apart_from_short_drafts() -> None:
    """Optimal gamma 0 (plain decoding wins) is grey; 1 and up run along Viridis, so 0 never looks like 1-5."""
    heat = call("tuning.calculator", alpha=0.8, gamma=4, cost=0.05)["figures"]["map"]["data"][0]
    scale = heat["colorscale"]
    assert scale[0][1] == scale[1][1] != scale[2][1]
    edge = scale[1][0]
    assert edge == scale[2][0] == pytest.approx(0.5 / heat["zmax"])
    assert any(0 in row for row in heat["z"]) and heat["colorbar"]["ticktext"][0].startswith("0")
    # Ticks at least 4 apart on a 0..32 bar: a tick at 1 drew its label over "0: none pays".
    ticks = heat["colorbar"]["tickvals"]
    assert ticks[0] == 0 and all(b - a >= 4 for a, b in itertools.pairwise(ticks))


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ({"tokens": 0}, "tokens"),
        ({"tokens": 5000}, "tokens"),
        ({"total": 0}, "total"),
        ({"gamma": 0}, "gamma"),
        ({"cost": -0.1}, "cost"),
        ({"policies_": ["greedy"]}, r"policies_\[0\]"),
        ({"policies_": "fixed"}, "policies_"),
        ({"policies_": ["fixed", "oracle", "fixed"]}, "policies_ must name each policy at most once"),
        ({"tau": 2}, "tau"),
        ({"temperature": "hot"}, "temperature"),
        ({"top_k": 1.5}, "top_k"),
        ({"state": {"fixed": {"format": "?"}}}, r"state\['fixed'\]"),
        ({"state": {"greedy": {}}}, "state"),
        ({"state": "x"}, "state"),
    ],
)
def test_policies_reject_bad_input_by_name(args: dict[str, Any], match: str) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        web.call("tuning.policies", json.dumps({"tokens": 10, **args}))


def test_policies_refuse_a_run_of_another_policy() -> None:
    state = call("tuning.policies", tokens=10, seed=0)["state"]
    with pytest.raises(ValueError, match=r"state\['fixed'\] holds another policy's run"):
        web.call("tuning.policies", json.dumps({"tokens": 10, "state": {**state, "fixed": state["dynamic"]}}))
