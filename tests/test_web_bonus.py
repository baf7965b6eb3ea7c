"""The Bonus page's handler (web/bonus.py): real rounds of the agreement pair against the capped geometric law."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from specdec_core import theory, web


def run(**args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(web.call("bonus.simulate", json.dumps(args)))
    return result


@pytest.mark.parametrize("gamma", [1, 4, 8])
def test_full_agreement_always_takes_the_bonus(gamma: int) -> None:
    m = run(alpha=1.0, gamma=gamma, rounds=200, seed=0)["metrics"]
    assert m["bonus-share"] == 1.0
    assert m["tokens-per-pass"] == gamma + 1 == m["tokens-per-pass-theory"]


def test_no_agreement_emits_one_token_per_pass() -> None:
    result = run(alpha=0.0, gamma=4, rounds=200, seed=0)
    assert result["counts"] == [200, 0, 0, 0, 0]
    assert result["metrics"]["tokens-per-pass"] == 1.0


@pytest.mark.parametrize(("alpha", "gamma", "emitted"), [(1.0, 4, [5, 5]), (0.0, 4, [1, 1]), (0.8, 4, [1, 5])])
def test_emitted_says_the_fewest_and_most_tokens_a_round_gave(alpha: float, gamma: int, emitted: list[int]) -> None:
    """The summary's range is what the rounds did: at alpha = 1 every round emits exactly gamma + 1 tokens."""
    result = run(alpha=alpha, gamma=gamma, rounds=500, seed=0)
    assert result["emitted"] == emitted
    played = [k + 1 for k, c in enumerate(result["counts"]) if c]
    assert result["emitted"] == [min(played), max(played)]


@pytest.mark.parametrize(("alpha", "gamma"), [(0.8, 4), (0.5, 2), (0.9, 8)])
def test_simulation_agrees_with_theory(alpha: float, gamma: int) -> None:
    """Mean tokens per pass within 4 standard errors (from the capped geometric variance) of Eq. 1.

    The bonus share is a binomial mean with p = alpha^gamma; Hoeffding: within sqrt(ln(2 / 1e-9) / (2 n)).
    """
    rounds = 4000
    result = run(alpha=alpha, gamma=gamma, rounds=rounds, seed=11)
    m = result["metrics"]
    assert sum(result["counts"]) == rounds
    assert m["tokens-per-pass-theory"] == pytest.approx(theory.expected_tokens(alpha, gamma), abs=1e-12)
    assert abs(m["tokens-per-pass"] - m["tokens-per-pass-theory"]) <= 4 * m["tokens-per-pass-se"]
    assert m["bonus-share-theory"] == pytest.approx(alpha**gamma, abs=1e-12)
    assert abs(m["bonus-share"] - alpha**gamma) <= math.sqrt(math.log(2 / 1e-9) / (2 * rounds))
    # The chart's theory bars are accepted_count_distribution; the markers are the simulated shares.
    bars = result["figures"]["counts"]["data"]
    assert bars[0]["y"] + bars[1]["y"] == pytest.approx(theory.accepted_count_distribution(alpha, gamma), abs=1e-12)
    assert bars[2]["y"] == [c / rounds for c in result["counts"]]


def test_measured_acceptance_is_reported_as_alpha_not_as_the_draft_acceptance_rate() -> None:
    """accepted / (accepted + rejected) estimates the per-token alpha (metric ``alpha``, beside the set
    ``alpha-theory``); it is not the draft acceptance rate accepted / drafted (``accept-rate``), which counts the
    discarded drafts too and sits near (1 / gamma) alpha (1 - alpha^gamma) / (1 - alpha) = .5904 at alpha .8, gamma 4.

    From the counts: accepted = sum_k k c_k; each round without a bonus checked one rejected draft. 4,000 rounds
    check about 4,000 * 3.36 - 1,640 ~ 11,800 drafts, so alpha's standard error is about sqrt(.16 / 11,800) ~ .004:
    4 standard errors is .015, far below the .21 gap to .5904.
    """
    rounds, gamma = 4000, 4
    result = run(alpha=0.8, gamma=gamma, rounds=rounds, seed=3)
    m, counts = result["metrics"], result["counts"]
    assert "accept-rate" not in m and "accept-rate-theory" not in m
    accepted = sum(k * c for k, c in enumerate(counts))
    assert m["alpha"] == pytest.approx(accepted / (accepted + rounds - counts[gamma]), abs=1e-12)
    assert m["alpha-theory"] == 0.8
    assert abs(m["alpha"] - 0.8) <= 0.015


def test_is_deterministic_with_a_seed() -> None:
    args = {"alpha": 0.7, "gamma": 3, "rounds": 300}
    assert run(**args, seed=5) == run(**args, seed=5)
    assert run(**args, seed=5)["counts"] != run(**args, seed=6)["counts"]


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ({"gamma": 9}, ValueError, "gamma must be between 1 and 8"),
        ({"alpha": math.nan}, ValueError, "alpha"),
        ({"alpha": "0.5"}, TypeError, "alpha"),
        ({"rounds": 10**30}, ValueError, "rounds must be between"),
        ({"rounds": math.inf}, TypeError, "rounds must be an int"),
    ],
)
def test_refuses_bad_input_by_name_and_caps_its_work(
    args: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        run(**{"alpha": 0.5, "gamma": 4, **args})


def test_at_alpha_one_the_bonus_marker_stays_inside_the_chart() -> None:
    """Every round ends with a bonus at alpha = 1: the share is 1, so the y axis must reach above 1."""
    result = run(alpha=1.0, gamma=4, rounds=200, seed=0)
    counts = result["figures"]["counts"]
    assert result["metrics"]["bonus-share"] == 1.0
    assert counts["layout"]["yaxis"]["range"][1] > 1.0
