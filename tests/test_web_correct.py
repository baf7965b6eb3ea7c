"""The Correct page's handlers (web/correct.py): the split of p into its two routes, and the real round sampled.

Statistical checks use the bounds of ``_stats.py``: an exact sampler exceeds ``tv_bound(n, k)`` with probability
below 1e-9, so a seeded run that passes is not luck.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from _stats import tv_bound

from specdec_core import acceptance_rate, web

P = [0.4, 0.35, 0.25]
Q = [0.2, 0.2, 0.6]
PRESETS = ["worked", "disjoint", "equal", "one-hot"]


def run(name: str, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(web.call(name, json.dumps(args)))
    return result


def test_worked_example_is_ours_not_a_papers() -> None:
    """p = [.4, .35, .25], q = [.2, .2, .6] is this project's example (no paper has it): its preset is "worked",
    and no docstring of the pages' handlers attributes it to a paper. beta = .65, residual [.2, .15, 0] / .35."""
    result = run("correct.split", preset="worked")
    assert result["metrics"]["beta"] == pytest.approx(0.65, abs=1e-12)
    assert result["residual"] == pytest.approx([4 / 7, 3 / 7, 0.0], abs=1e-12)
    assert result["q"] == pytest.approx(Q, abs=1e-12)
    with pytest.raises(ValueError, match="preset must be one of worked"):
        run("correct.split", preset="paper")
    pages = ("draft.", "verify.", "correct.", "bonus.", "exactness.")
    for name, fn in web.HANDLERS.items():
        if name.startswith(pages):
            assert "paper's" not in (fn.__doc__ or ""), name


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize(("temperature", "shift", "blend"), [(1.0, 0, 0.0), (0.25, 1, 0.0), (4.0, -2, 0.3)])
def test_split_stack_adds_up_to_p(preset: str, temperature: float, shift: int, blend: float) -> None:
    """The proof chart's claim, per token: min(p, q)(x) + (1 - beta) residual(x) = p(x), to float rounding."""
    result = run("correct.split", preset=preset, temperature=temperature, shift=shift, blend=blend)
    accepted, corrected = (trace["y"] for trace in result["figures"]["proof"]["data"][:2])
    for a, c, p in zip(accepted, corrected, result["p"], strict=True):
        assert a + c == pytest.approx(p, abs=1e-9)
    assert result["metrics"]["identity-gap"] <= 1e-12
    assert result["metrics"]["beta"] == pytest.approx(acceptance_rate(result["p"], result["q"]), abs=1e-9)


def test_split_presets_mean_what_they_say() -> None:
    """Disjoint supports accept nothing (residual = p); p = q accepts everything; one-hot q accepts p(cat)."""
    disjoint = run("correct.split", preset="disjoint")
    assert disjoint["metrics"]["beta"] == 0.0
    assert disjoint["residual"] == pytest.approx(disjoint["p"], abs=1e-12)
    assert run("correct.split", preset="equal")["metrics"]["beta"] == pytest.approx(1.0, abs=1e-12)
    one_hot = run("correct.split", preset="one-hot")
    assert one_hot["metrics"]["beta"] == pytest.approx(one_hot["p"][0], abs=1e-12)


def test_split_says_why_temperature_leaves_a_one_hot_draft_alone() -> None:
    """q^(1/T) renormalised is q again when q is uniform over its support: one-hot q is the same at T = .25 and 4,
    and the handler says so; a draft that temperature does change carries no such note."""
    cold, hot = (run("correct.split", preset="one-hot", temperature=t) for t in (0.25, 4.0))
    assert cold["q"] == hot["q"] == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert "one-hot" in cold["temperature_note"] and cold["temperature_note"] == hot["temperature_note"]
    shifted = run("correct.split", preset="one-hot", temperature=2.0, shift=1, blend=0.5)
    assert shifted["temperature_note"] == cold["temperature_note"]  # temperature acts before the shift and blend
    for preset in ("worked", "disjoint", "equal"):
        cold, hot = (run("correct.split", preset=preset, temperature=t) for t in (0.25, 4.0))
        assert cold["q"] != hot["q"]
        assert cold["temperature_note"] == hot["temperature_note"] == ""


def test_split_blend_one_moves_the_draft_onto_the_target() -> None:
    result = run("correct.split", preset="disjoint", temperature=2.0, shift=1, blend=1.0)
    assert result["q"] == pytest.approx(result["p"], abs=1e-12)


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ({"preset": "nope"}, ValueError, "preset must be one of"),
        ({"preset": 3}, TypeError, "preset must be a string"),
        ({"temperature": 0.0}, ValueError, "temperature must be"),
        ({"temperature": "2"}, TypeError, "temperature must be a number"),
        ({"temperature": math.nan}, ValueError, "temperature must be"),
        ({"shift": 1.5}, TypeError, "shift must be an int"),
        ({"shift": 10**30}, ValueError, "shift must be between"),
        ({"blend": 2}, ValueError, "blend must be"),
        ({"blend": math.inf}, ValueError, "blend must be"),
    ],
)
def test_split_rejects_bad_arguments(args: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        run("correct.split", **args)


def test_sample_is_deterministic_with_a_seed() -> None:
    first = run("correct.sample", p=P, q=Q, n=500, seed=7)
    assert first == run("correct.sample", p=P, q=Q, n=500, seed=7)
    assert first["counts"] != run("correct.sample", p=P, q=Q, n=500, seed=8)["counts"]


def test_sample_matches_the_target() -> None:
    """10,000 real rounds: TV(emitted, p) <= tv_bound(10_000, 3) ~ 0.041 (exceeded with probability < 1e-9).

    The share of rounds ending in a correction is a binomial mean with p = 1 - beta = .35; Hoeffding puts it within
    sqrt(ln(2 / 1e-9) / (2 n)) ~ 0.033 of .35 except with probability 1e-9.
    """
    n = 10_000
    result = run("correct.sample", p=P, q=Q, n=n, seed=0)
    m = result["metrics"]
    assert sum(result["counts"]) == n == m["samples"]
    assert m["tv-distance"] <= tv_bound(n, 3)
    assert abs(m["correction-share"] - 0.35) <= math.sqrt(math.log(2 / 1e-9) / (2 * n))
    assert m["correction-share-theory"] == pytest.approx(0.35, abs=1e-12)
    # The noise scale the page quotes is the mean TV of an exact sampler, well inside the worst-case bound.
    assert 0 < m["tv-noise"] < tv_bound(n, 3)


def test_sample_with_disjoint_supports_emits_only_corrections() -> None:
    """beta = 0: every draft is rejected and every emitted token is a correction drawn from the residual, p."""
    result = run("correct.sample", p=[0.5, 0.5, 0.0], q=[0.0, 0.0, 1.0], n=2000, seed=3)
    assert result["metrics"]["correction-share"] == 1.0
    assert result["counts"][2] == 0


@pytest.mark.parametrize(
    ("args", "error", "name"),
    [
        ({"n": 10**9}, ValueError, "n must be"),
        ({"n": 0}, ValueError, "n must be"),
        ({"n": 1e3}, TypeError, "n must be an int"),
        ({"seed": -1}, ValueError, "seed"),
        ({"p": [math.nan, 0.5, 0.5]}, ValueError, r"p\[0\]"),
        ({"q": "0.2"}, TypeError, "q must be a list"),
        ({"labels": ["a", 1, "c"]}, TypeError, r"labels\[1\]"),
    ],
)
def test_sample_refuses_bad_input_by_name_and_caps_its_work(
    args: dict[str, Any], error: type[Exception], name: str
) -> None:
    with pytest.raises(error, match=name):
        run("correct.sample", **{"p": P, "q": Q, "n": 10, **args})
