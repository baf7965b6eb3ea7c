"""The home page's 3D lab handler, ``lab3d.run``: deterministic, drawn as the steps decided, and in line with theory.

The generic checks (JSON-safe output, figures valid in plotly) run for every handler in tests/test_web.py.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from specdec_core import figures, theory, web


def run(**args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(web.call("lab3d.run", json.dumps(args)))
    return result


def markers(result: dict[str, Any]) -> dict[str, list[tuple[float, float, float]]]:
    """Chart points by kind, read back from the figure's marker traces: (round, position, z)."""
    names = {name: kind for kind, (name, _, _) in figures.LAB3D_KINDS.items()}
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
    xs, ys, zs = line["x"], line["y"], line["z"]
    return {(xs[i], ys[i]): zs[i + 1] for i in range(0, len(xs), 3)}


def test_deterministic_when_seeded() -> None:
    args = {"gamma": 5, "alpha": 0.7, "cost": 0.1, "seed": 3, "rounds": 120, "shown": 10}
    assert web.call("lab3d.run", json.dumps(args)) == web.call("lab3d.run", json.dumps(args))
    assert run(**args)["table"] != run(**{**args, "seed": 4})["table"]


def test_shown_rounds_do_not_depend_on_run_length() -> None:
    """A fixed number of uniforms per round: the first rounds of a short and a long run are the same rounds."""
    short = run(gamma=4, alpha=0.6, seed=9, rounds=12, shown=12)
    long = run(gamma=4, alpha=0.6, seed=9, rounds=500, shown=12)
    assert short["table"] == long["table"]
    assert short["figure"] == long["figure"]


@pytest.mark.parametrize("alpha", [0.0, 0.35, 0.8, 1.0])
def test_every_token_drawn_once_with_its_verdict(alpha: float) -> None:
    """Per round: gamma proposals (accepted, rejected or discarded) and one correction or bonus; an accepted
    marker sits below its stem min(1, p/q), a rejected one on or above it; discarded ones have no stem."""
    gamma, shown = 6, 14
    result = run(gamma=gamma, alpha=alpha, seed=1, rounds=shown, shown=shown)
    points = markers(result)
    heights = stems(result)
    proposals = points["accepted"] + points["rejected"] + points["discarded"]
    assert len(proposals) == gamma * shown
    assert len(points["correction"]) + len(points["bonus"]) == shown
    assert len(points["rejected"]) == len(points["correction"])
    assert points["drafted"] == []
    for x, y, z in points["accepted"]:
        assert z < heights[(x, y)]
    for x, y, z in points["rejected"]:
        assert z >= heights[(x, y)]
    assert set(heights) == {(x, y) for x, y, _ in points["accepted"] + points["rejected"]}
    for _, _, z in points["correction"] + points["bonus"]:
        assert z == figures.LAB3D_SAMPLED_Z
    assert all(y == gamma + 1 for _, y, _ in points["bonus"])
    assert sum(row["emitted"] for row in result["table"]) == len(points["accepted"]) + shown


def test_pending_round_is_drawn_as_drafted() -> None:
    """The replay's first half-step: the newest round's proposals wait unchecked, with no correction or bonus."""
    gamma = 3
    result = run(gamma=gamma, alpha=0.8, seed=2, rounds=5, shown=5, pending=True)
    points = markers(result)
    assert sorted(points["drafted"]) == [(5, i, 0.0) for i in range(1, gamma + 1)]
    assert all(
        x < 5 for kind in ("accepted", "rejected", "discarded", "correction", "bonus") for x, _, _ in points[kind]
    )
    assert result["latest"].startswith("Round 5: drafted 3")


def test_replay_keeps_the_round_axis() -> None:
    """During a replay the round axis spans the whole view, so rounds fill in rather than the axis stretching."""
    frame = run(rounds=3, shown=3, pending=True, span=16)
    assert frame["figure"]["layout"]["scene"]["xaxis"]["range"] == [0.5, 16.5]
    assert run(rounds=3, shown=3)["figure"]["layout"]["scene"]["xaxis"]["range"] == [0.5, 3.5]


def test_perfect_match_accepts_everything() -> None:
    """alpha = 1: p = q, every draft is accepted and every round ends with a bonus: gamma + 1 tokens per pass."""
    m = run(gamma=4, alpha=1.0, cost=0.25, rounds=50, shown=8)["metrics"]
    assert m["tokens-per-pass"] == 5
    assert m["target-calls-saved"] == 4
    assert m["discarded-fraction"] == 0
    assert m["relative-latency"] == pytest.approx((1 + 4 * 0.25) / 5, abs=1e-12)


def test_disjoint_draft_is_corrected_at_the_first_position() -> None:
    """alpha = 0: q puts all its mass where p has none, so position 1 is always rejected and the rest discarded."""
    result = run(gamma=5, alpha=0.0, rounds=40, shown=6)
    m = result["metrics"]
    assert m["target-calls-saved"] == 0
    assert m["discarded-fraction"] == pytest.approx(4 / 5, abs=1e-12)
    assert m["relative-latency"] == pytest.approx(1 + 5 * 0.05, abs=1e-12)
    assert "accepted 0, rejected" in result["latest"]


@pytest.mark.parametrize(("alpha", "gamma", "cost"), [(0.8, 4, 0.05), (0.45, 7, 0.2)])
def test_long_run_matches_theory(alpha: float, gamma: int, cost: float) -> None:
    """Over N = 12,000 seeded rounds the simulated metrics agree with theory.py within five standard errors.

    Per round the accepted count K is capped geometric (theory.accepted_count_distribution); a round emits
    T = K + 1 tokens and discards D = gamma - 1 - K drafts when K < gamma, none when K = gamma. The run's
    tokens per pass is the mean of T, its discarded fraction the mean of D over gamma: each has standard error
    sqrt(Var / N). Relative latency (1 + gamma c) / mean(T) moves by (1 + gamma c) / E[T]^2 per unit of mean(T)
    to first order (the delta method); the band gets 10% slack for the second-order term.
    """
    n = 12_000
    m = run(gamma=gamma, alpha=alpha, cost=cost, seed=11, rounds=n, shown=16)["metrics"]
    dist = theory.accepted_count_distribution(alpha, gamma)
    e_t = sum((k + 1) * w for k, w in enumerate(dist))
    var_t = sum((k + 1 - e_t) ** 2 * w for k, w in enumerate(dist))
    discards = [gamma - 1 - k if k < gamma else 0 for k in range(gamma + 1)]
    e_d = sum(d * w for d, w in zip(discards, dist, strict=True))
    var_d = sum((d - e_d) ** 2 * w for d, w in zip(discards, dist, strict=True))
    se_t = math.sqrt(var_t / n)

    assert e_t == pytest.approx(m["tokens-per-pass-theory"], rel=1e-9)
    assert m["target-calls-saved"] == pytest.approx(m["target-calls-saved-theory"], abs=5 * se_t)
    assert m["discarded-fraction"] == pytest.approx(
        m["discarded-fraction-theory"], abs=5 * math.sqrt(var_d / n) / gamma
    )
    latency_se = (1 + gamma * cost) / e_t**2 * se_t
    assert m["relative-latency"] == pytest.approx(m["relative-latency-theory"], abs=1.1 * 5 * latency_se)
    assert m["relative-latency-theory"] == pytest.approx(1 / theory.speedup(alpha, gamma, cost), rel=1e-9)


def test_metrics_are_consistent_with_each_other() -> None:
    """Relative latency is the inverse of the speedup; calls saved is tokens per pass minus the plain pass."""
    m = run(gamma=6, alpha=0.65, cost=0.3, seed=5)["metrics"]
    assert m["relative-latency"] * m["speedup"] == pytest.approx(1.0, abs=1e-9)
    assert m["target-calls-saved"] == pytest.approx(m["tokens-per-pass"] - 1, abs=1e-9)
    assert m["tokens-per-pass"] == pytest.approx(m["tokens-emitted"] / m["target-passes"], abs=1e-9)
    assert m["target-passes"] == 300


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"gamma": 9}, "gamma must be an int between 1 and 8"),
        ({"gamma": 2.5}, "gamma must be an int between 1 and 8"),
        ({"cost": 1.5}, "cost must be between 0 and 1"),
        ({"rounds": 10, "shown": 11}, "shown <= rounds"),
        ({"alpha": 1.2}, "alpha"),
    ],
)
def test_bad_input_names_the_argument(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        run(**args)
