"""The home page's 3D lab, ``home.run``: one seeded run whose chart, table, summary and cards agree.

The generic checks (JSON-safe output, figures valid in plotly, bad input named) run for every handler in
tests/test_web.py.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from specdec_core import theory, web
from specdec_core.web import home


def run(**args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(web.call("home.run", json.dumps(args)))
    return result


def markers(result: dict[str, Any]) -> dict[str, list[tuple[float, float, float]]]:
    """Chart points by kind, read back from the figure's marker traces: (round, position, z)."""
    names = {name: kind for kind, (name, _, _) in home.KINDS.items()}
    out: dict[str, list[tuple[float, float, float]]] = {}
    for trace in result["figure"]["data"]:
        if trace["mode"] == "markers":
            drawn = zip(trace["x"], trace["y"], trace["z"], strict=True)
            # A kind absent from the run keeps its legend entry through one point at null (nothing drawn).
            out[names[trace["name"]]] = [point for point in drawn if point != (None, None, None)]
    return out


def stems(result: dict[str, Any]) -> dict[tuple[float, float], float]:
    """(round, position) -> height of the min(1, p/q) stem, read from the line trace (segments split by None)."""
    line = result["figure"]["data"][0]
    assert line["mode"] == "lines"
    xs, zs = line["x"], line["z"]
    return {(xs[i], line["y"][i]): zs[i + 1] for i in range(0, len(xs), 3)}


def test_deterministic_when_seeded() -> None:
    args = {"gamma": 5, "alpha": 0.7, "cost": 0.1, "seed": 3, "rounds": 10}
    assert web.call("home.run", json.dumps(args)) == web.call("home.run", json.dumps(args))
    assert run(**args)["table"] != run(**{**args, "seed": 4})["table"]


def test_replayed_rounds_are_the_rounds_of_the_whole_run() -> None:
    """The replay shows a prefix of the same run: its rounds do not depend on how many are shown."""
    whole = run(gamma=4, alpha=0.6, seed=9, rounds=16)
    part = run(gamma=4, alpha=0.6, seed=9, rounds=16, shown=5)
    assert part["table"] == whole["table"][:5]
    assert markers(part)["accepted"] == [p for p in markers(whole)["accepted"] if p[0] <= 5]


@pytest.mark.parametrize("alpha", [0.0, 0.35, 0.8, 1.0])
def test_every_token_drawn_once_with_its_verdict(alpha: float) -> None:
    """Per round: gamma proposals (accepted, rejected or discarded) and one correction or bonus; an accepted
    marker sits below its stem min(1, p/q), a rejected one on or above it; discarded ones have no stem."""
    gamma, rounds = 6, 14
    result = run(gamma=gamma, alpha=alpha, seed=1, rounds=rounds)
    points = markers(result)
    heights = stems(result)
    proposals = points["accepted"] + points["rejected"] + points["discarded"]
    assert len(proposals) == gamma * rounds
    assert len(points["correction"]) + len(points["bonus"]) == rounds
    assert len(points["rejected"]) == len(points["correction"])
    assert points["drafted"] == []
    for x, y, z in points["accepted"]:
        assert z < heights[(x, y)]
    for x, y, z in points["rejected"]:
        assert z >= heights[(x, y)]
    assert set(heights) == {(x, y) for x, y, _ in points["accepted"] + points["rejected"]}
    for _, _, z in points["correction"] + points["bonus"]:
        assert z == home.SAMPLED_Z
    assert all(y == gamma + 1 for _, y, _ in points["bonus"])
    assert sum(row["emitted"] for row in result["table"]) == len(points["accepted"]) + rounds


def test_pending_round_is_drawn_as_drafted() -> None:
    """The replay's first half-step: the newest round's proposals wait unchecked, with no correction or bonus."""
    gamma = 3
    result = run(gamma=gamma, alpha=0.8, seed=2, rounds=16, shown=5, pending=True)
    points = markers(result)
    assert sorted(points["drafted"]) == [(5, i, 0.0) for i in range(1, gamma + 1)]
    assert all(
        x < 5 for kind in ("accepted", "rejected", "discarded", "correction", "bonus") for x, _, _ in points[kind]
    )
    assert result["latest"].startswith("Round 5: drafted 3")


def test_round_axis_spans_the_whole_run_during_a_replay() -> None:
    """The round axis spans the run, so rounds fill in during a replay rather than the axis stretching."""
    assert run(rounds=16, shown=3, pending=True)["figure"]["layout"]["scene"]["xaxis"]["range"] == [0.5, 16.5]
    assert run(rounds=3)["figure"]["layout"]["scene"]["xaxis"]["range"] == [0.5, 3.5]


def test_cards_summary_table_and_chart_describe_the_same_rounds() -> None:
    """One run, one set of numbers: tokens per pass is the table's emitted tokens over its rounds, and the
    summary counts the same tokens (the cards once came from 300 rounds while the chart showed 16)."""
    result = run(gamma=4, alpha=0.8, seed=0, rounds=16)
    m, table = result["metrics"], result["table"]
    emitted = sum(row["emitted"] for row in table)
    assert len(table) == m["target-passes"] == 16
    assert m["tokens-emitted"] == emitted
    assert m["tokens-per-pass"] == pytest.approx(emitted / 16, abs=1e-12)
    assert m["target-calls-saved"] == pytest.approx(emitted / 16 - 1, abs=1e-12)
    assert f"{emitted} tokens from 16 target passes" in result["summary"]
    bonuses = sum(row["final"].endswith("(bonus)") for row in table)
    assert f"{bonuses} bonus token" in result["summary"]


def test_after_reset_nothing_is_reported_before_the_check() -> None:
    """Reset shows round 1 drafted and unchecked: the summary, table and cards must not know its outcome yet."""
    result = run(gamma=4, alpha=0.8, seed=3, rounds=16, shown=1, pending=True)
    assert result["summary"].startswith("0 rounds played")
    assert "accepted" not in result["summary"] and "tokens from" not in result["summary"]
    assert result["table"] == []
    assert "tokens-per-pass" not in result["metrics"] and "target-calls-saved" not in result["metrics"]
    assert result["metrics"]["tokens-per-pass-theory"] == pytest.approx(theory.expected_tokens(0.8, 4), abs=1e-12)


def test_footnote_counts_the_checked_rounds() -> None:
    """The cards' footnote states the same tokens and speedup as the metrics, and nothing before a check."""
    result = run(gamma=4, alpha=0.8, seed=0, rounds=16)
    m = result["metrics"]
    assert result["footnote"].startswith(f"Counted over the 16 rounds checked so far: {m['tokens-emitted']} tokens")
    times = "\N{MULTIPLICATION SIGN}"
    assert f"speedup {m['speedup']:.2f}{times} (theory {m['speedup-theory']:.2f}{times})" in result["footnote"]
    assert run(gamma=4, alpha=0.8, seed=0, rounds=16, shown=1)["footnote"].startswith("Counted over the round checked")
    assert run(gamma=4, alpha=0.8, seed=3, rounds=16, shown=1, pending=True)["footnote"].startswith("No round has been")


def test_one_round_is_spoken_of_in_the_singular() -> None:
    summary = run(gamma=2, alpha=1.0, seed=0, rounds=16, shown=1)["summary"]
    assert summary.startswith("1 round played")
    assert "from 1 target pass." in summary and "1 bonus token;" in summary
    one_draft = run(gamma=1, alpha=1.0, seed=0, rounds=16, shown=1)
    assert one_draft["latest"].startswith("Round 1: drafted 1, accepted it, then the bonus")
    one_token = run(gamma=1, alpha=0.0, seed=0, rounds=16, shown=1)["footnote"]
    assert one_token.startswith("Counted over the round checked so far: 1 token, ")


def test_perfect_match_accepts_everything() -> None:
    """alpha = 1: p = q, every draft is accepted and every round ends with a bonus: gamma + 1 tokens per pass."""
    m = run(gamma=4, alpha=1.0, cost=0.25, rounds=16)["metrics"]
    assert m["tokens-per-pass"] == 5
    assert m["target-calls-saved"] == 4
    assert m["discarded-fraction"] == 0
    assert m["relative-latency"] == pytest.approx((1 + 4 * 0.25) / 5, abs=1e-12)


def test_disjoint_draft_is_corrected_at_the_first_position() -> None:
    """alpha = 0: q puts all its mass where p has none, so position 1 is always rejected and the rest discarded."""
    result = run(gamma=5, alpha=0.0, rounds=12)
    m = result["metrics"]
    assert m["target-calls-saved"] == 0
    assert m["discarded-fraction"] == pytest.approx(4 / 5, abs=1e-12)
    assert m["relative-latency"] == pytest.approx(1 + 5 * 0.05, abs=1e-12)
    assert "accepted 0, rejected" in result["latest"]


def test_runs_over_many_seeds_match_theory() -> None:
    """100 seeded runs of 64 rounds (N = 6,400 rounds, alpha 0.8, gamma 4): the mean tokens per pass lies within
    five standard errors of Eq. 1. Per round T = K + 1 with K capped geometric, so the mean of N rounds has
    standard error sqrt(Var T / N); every run has 64 rounds, so the mean of the runs' means is the mean of T."""
    alpha, gamma, runs = 0.8, 4, 100
    means = [run(gamma=gamma, alpha=alpha, seed=s, rounds=64)["metrics"]["tokens-per-pass"] for s in range(runs)]
    dist = theory.accepted_count_distribution(alpha, gamma)
    e_t = sum((k + 1) * w for k, w in enumerate(dist))
    var_t = sum((k + 1 - e_t) ** 2 * w for k, w in enumerate(dist))
    assert sum(means) / runs == pytest.approx(e_t, abs=5 * math.sqrt(var_t / (64 * runs)))


def test_metrics_are_consistent_with_each_other() -> None:
    """Relative latency is the inverse of the speedup; calls saved is tokens per pass minus the plain pass."""
    m = run(gamma=6, alpha=0.65, cost=0.3, seed=5)["metrics"]
    assert m["relative-latency"] * m["speedup"] == pytest.approx(1.0, abs=1e-9)
    assert m["target-calls-saved"] == pytest.approx(m["tokens-per-pass"] - 1, abs=1e-9)
    assert m["relative-latency-theory"] == pytest.approx(1 / theory.speedup(0.65, 6, 0.3), rel=1e-9)


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ({"gamma": 9}, ValueError, "gamma must be between 1 and 8"),
        ({"gamma": 2.5}, TypeError, "gamma must be an int"),
        ({"cost": 1.5}, ValueError, "cost must be a number between 0 and 1"),
        ({"cost": "0.1"}, TypeError, "cost must be a number, got str"),
        ({"rounds": 10, "shown": 11}, ValueError, "shown must be between 1 and 10"),
        ({"rounds": 65}, ValueError, "rounds must be between 1 and 64"),
        ({"alpha": 1.2}, ValueError, "alpha"),
        ({"pending": 1}, TypeError, "pending must be true or false"),
    ],
)
def test_bad_input_names_the_argument(args: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        run(**args)
