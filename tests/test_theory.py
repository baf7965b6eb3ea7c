"""Closed forms of Leviathan et al. (2023) against their definitions and against simulation of the real round."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest
from _stats import standard_error_bound

from specdec_core.models import quality_pair
from specdec_core.stats import chi_square_sf, chi_square_statistic
from specdec_core.steps import speculative_round
from specdec_core.theory import (
    accepted_count_distribution,
    break_even_alpha,
    draft_acceptance_rate,
    exact_round_distribution,
    expected_accepted,
    expected_discarded,
    expected_tokens,
    markov_acceptance_tails,
    markov_round_law,
    markov_stationary,
    operations_factor,
    optimal_gamma,
    per_token_alpha_from_acceptance_rate,
    per_token_alpha_from_tokens_per_pass,
    speedup,
)


@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.6, 0.9, 0.99, 1.0])
@pytest.mark.parametrize("gamma", [0, 1, 4, 8])
def test_expected_tokens_is_the_mean_of_the_count_distribution(alpha: float, gamma: int) -> None:
    dist = accepted_count_distribution(alpha, gamma)
    assert math.fsum(dist) == pytest.approx(1.0, abs=1e-12)
    mean_accepted = math.fsum(k * pk for k, pk in enumerate(dist))
    assert expected_tokens(alpha, gamma) == pytest.approx(mean_accepted + 1.0, abs=1e-12)
    assert expected_accepted(alpha, gamma) == pytest.approx(mean_accepted, abs=1e-12)


def test_expected_tokens_edges() -> None:
    assert expected_tokens(1.0, 4) == 5.0
    assert expected_tokens(0.0, 4) == 1.0
    assert expected_tokens(0.5, 0) == 1.0


NEAR_ONE = [1 - 10.0**-k for k in range(1, 16)] + [1 - 2.0**-52, 1 - 2.0**-53, 1.0]


@pytest.mark.parametrize("gamma", [1, 4, 16, 64])
def test_expected_tokens_equals_the_exact_series(gamma: int) -> None:
    """Against 1 + alpha + ... + alpha^gamma summed in Fractions (exact for the float alpha), to a few ulps
    everywhere, including a hair below alpha = 1 where the closed form (1 - alpha^(gamma+1)) / (1 - alpha)
    loses up to half its digits (at alpha = 1 - 1e-12 its numerator keeps about 4 significant digits)."""
    rng = random.Random(gamma)
    for alpha in [rng.random() for _ in range(200)] + NEAR_ONE:
        exact = sum(Fraction(alpha) ** k for k in range(gamma + 1))
        assert abs(Fraction(expected_tokens(alpha, gamma)) - exact) <= exact * Fraction(2, 10**15)


@pytest.mark.parametrize("gamma", [1, 4, 64])
def test_expected_tokens_is_monotone_and_continuous_at_one(gamma: int) -> None:
    """Approaching alpha = 1 from below the values never decrease and reach gamma + 1 smoothly. Taylor at 1:
    sum_k (1 - e)^k = (gamma + 1) - e gamma (gamma + 1) / 2 + r, with 0 <= r <= e^2 sum_k k (k - 1) / 2
    = e^2 (gamma + 1) gamma (gamma - 1) / 6, so the value must sit within that of the linear term, plus float
    rounding: Horner's rule over gamma steps errs by at most about 2 gamma u times the sum (u = 2^-53)."""
    values = [expected_tokens(alpha, gamma) for alpha in NEAR_ONE]
    assert values == sorted(values) and values[-1] == gamma + 1
    for alpha, value in zip(NEAR_ONE, values, strict=True):
        e = 1.0 - alpha
        linear = (gamma + 1) - e * gamma * (gamma + 1) / 2
        rounding = (2 * gamma + 2) * (gamma + 1) * 2.0**-53
        assert abs(value - linear) <= e * e * (gamma + 1) * gamma * (gamma - 1) / 6 + rounding


@pytest.mark.parametrize("gamma", [1, 4, 16, 64])
def test_break_even_alpha_at_cost_one_is_exactly_one(gamma: int) -> None:
    # c = 1: a round costs gamma + 1 pass-units and yields at most gamma + 1 tokens: only alpha = 1 pays its way.
    assert break_even_alpha(gamma, 1.0) == 1.0


@pytest.mark.parametrize("gamma", [1, 4, 16])
def test_break_even_alpha_approaches_one_continuously(gamma: int) -> None:
    """With c = 1 - d the break-even alpha solves sum_k alpha^k = gamma c + 1 = (gamma + 1) - gamma d. By the
    expansion above, 1 - alpha = 2 d / (gamma + 1) to first order, the relative error of order d gamma: it must
    land within 1% of that for d <= 1e-4, below 1 and rising towards it as d shrinks."""
    previous = 0.0
    for d in (1e-4, 1e-6, 1e-9, 1e-12):
        alpha = break_even_alpha(gamma, 1.0 - d)
        assert alpha is not None and previous < alpha < 1.0
        assert 1.0 - alpha == pytest.approx(2 * d / (gamma + 1), rel=1e-2)
        assert speedup(alpha, gamma, 1.0 - d) == pytest.approx(1.0, abs=1e-14)
        previous = alpha


def test_speedup_matches_theorem_3_8_example() -> None:
    # alpha .8, gamma 4, c .05: (1 - .8^5) / ((1 - .8)(4 * .05 + 1)) = .67232 / .24 = 2.80133...
    assert speedup(0.8, 4, 0.05) == pytest.approx(0.67232 / 0.24, rel=1e-12)


def test_operations_factor_matches_theorem_3_11() -> None:
    alpha, gamma, c_hat = 0.7, 3, 0.1
    expected = (1 - alpha) * (gamma * c_hat + gamma + 1) / (1 - alpha ** (gamma + 1))
    assert operations_factor(alpha, gamma, c_hat) == pytest.approx(expected, rel=1e-12)


def test_optimal_gamma_is_the_argmax_and_zero_when_speculation_loses() -> None:
    for alpha in (0.5, 0.7, 0.9):
        for cost in (0.01, 0.1, 0.3):
            g = optimal_gamma(alpha, cost)
            values = [1.0] + [speedup(alpha, k, cost) for k in range(1, 33)]
            assert values[g] == pytest.approx(max(values), rel=1e-12)
    assert optimal_gamma(0.2, 0.9) == 0


def test_optimal_gamma_grows_with_alpha() -> None:
    gammas = [optimal_gamma(a, 0.05) for a in (0.5, 0.7, 0.8, 0.9, 0.95)]
    assert gammas == sorted(gammas) and gammas[0] < gammas[-1]


def test_discarded_counts_drafts_after_the_first_rejection() -> None:
    # gamma 2, alpha .5: reject at 0 (p .5) discards 1, reject at 1 (p .25) discards 0.
    assert expected_discarded(0.5, 2) == pytest.approx(0.5)


def test_acceptance_figure_conversions_round_trip() -> None:
    for alpha in (0.1, 0.55, 0.9):
        for gamma in (1, 3, 7):
            rate = draft_acceptance_rate(alpha, gamma)
            assert per_token_alpha_from_acceptance_rate(rate, gamma) == pytest.approx(alpha, abs=1e-9)
            tpp = expected_tokens(alpha, gamma)
            assert per_token_alpha_from_tokens_per_pass(tpp, gamma) == pytest.approx(alpha, abs=1e-9)
    # The drafted-token rate sits below alpha: drafts after a rejection count as drafted, never as accepted.
    assert draft_acceptance_rate(0.8, 4) < 0.8
    assert draft_acceptance_rate(0.8, 1) == pytest.approx(0.8)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: expected_tokens(1.2, 4), "alpha must be between 0 and 1"),
        (lambda: expected_tokens(0.5, 65), "gamma must be between 0 and 64"),
        (lambda: speedup(0.5, 4, -1.0), "cost must be a finite number >= 0"),
        (lambda: draft_acceptance_rate(0.5, 0), "gamma must be at least 1"),
        (lambda: per_token_alpha_from_tokens_per_pass(9.0, 4), "tokens_per_pass must be between 1 and"),
        (lambda: optimal_gamma(0.5, 0.1, max_gamma=99), "max_gamma must be between 0 and 64"),
    ],
)
def test_bad_arguments_are_named(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]


def _simulate_iid(p: list[float], q: list[float], gamma: int, rounds: int, seed: int) -> list[int]:
    """Accepted-count histogram from the real scalar round, drafting i.i.d. from q."""
    rng = random.Random(seed)
    tokens = list(range(len(q)))
    hist = [0] * (gamma + 1)
    for _ in range(rounds):
        drafts = rng.choices(tokens, weights=q, k=gamma)
        r = speculative_round([p] * (gamma + 1), [q] * gamma, drafts, rng)
        hist[r.accepted] += 1
    return hist


@pytest.mark.parametrize(
    ("p", "q", "gamma"),
    [([0.4, 0.35, 0.25], [0.2, 0.2, 0.6], 4), ([0.7, 0.2, 0.1], [0.6, 0.3, 0.1], 6), ([0.5, 0.5], [0.9, 0.1], 2)],
)
def test_theory_against_simulation(p: list[float], q: list[float], gamma: int) -> None:
    """Mean tokens per round within 4 standard errors of (1 - alpha^(g+1)) / (1 - alpha), alpha = sum min(p, q),
    using the closed-form variance of the capped geometric count; and the accepted-count histogram passes a
    chi-square test at p > 1e-6 (a false alarm once per million seeds)."""
    alpha = math.fsum(min(a, b) for a, b in zip(p, q, strict=True))
    rounds = 20_000
    hist = _simulate_iid(p, q, gamma, rounds, seed=2023)
    dist = accepted_count_distribution(alpha, gamma)
    mean = math.fsum(k * c for k, c in enumerate(hist)) / rounds + 1.0
    var = math.fsum(pk * (k + 1 - expected_tokens(alpha, gamma)) ** 2 for k, pk in enumerate(dist))
    assert abs(mean - expected_tokens(alpha, gamma)) <= standard_error_bound(mean, var, rounds)
    stat, df = chi_square_statistic(hist, dist)
    assert chi_square_sf(stat, df) > 1e-6


# Markov pairs (used by the Playground) ---------------------------------------------------------------------------

_TINY_P = [[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.25, 0.25, 0.5]]
_TINY_Q = [[0.2, 0.2, 0.6], [0.5, 0.25, 0.25], [0.1, 0.8, 0.1]]


def test_markov_acceptance_tails_match_exact_enumeration_of_the_round() -> None:
    """P(accepted >= i | start s) from the recursion equals the sum over every round outcome of length >= i + 1.

    A round emits its accepted prefix plus one token, so an outcome of length k + 1 has exactly k accepted.
    The enumeration (Fraction arithmetic, the real round's branches) shares no code with the recursion.
    """
    gamma = 3
    tails = markov_acceptance_tails(_TINY_P, _TINY_Q, gamma)

    def exact(rows: list[list[float]]) -> object:
        return lambda context: [Fraction(x) for x in rows[context[-1]]]

    for s in range(3):
        outcomes = exact_round_distribution(exact(_TINY_P), exact(_TINY_Q), gamma, context=(s,))  # type: ignore[arg-type]
        for i in range(1, gamma + 1):
            mass = sum((w for tokens, w in outcomes.items() if len(tokens) >= i + 1), Fraction(0))
            assert tails[s][i - 1] == pytest.approx(float(mass), abs=1e-12)


def test_markov_acceptance_tails_reduce_to_alpha_powers_for_iid_rows() -> None:
    p, q = [0.4, 0.35, 0.25], [0.2, 0.2, 0.6]  # beta = .65 (the paper's worked example)
    tails = markov_acceptance_tails([p] * 3, [q] * 3, 4)
    assert tails[1] == pytest.approx([0.65**i for i in range(1, 5)], abs=1e-12)


def test_markov_acceptance_tails_reject_ragged_tables() -> None:
    with pytest.raises(ValueError, match="square"):
        markov_acceptance_tails([[1.0, 0.0]], [[1.0, 0.0]], 2)


def test_markov_stationary_is_invariant_for_the_quality_target() -> None:
    """pi P = pi, checked directly on the Playground's 24-word chain."""
    pair = quality_pair(0.5)
    table = [pair.target.probs([t]) for t in range(len(pair.vocab))]
    pi = markov_stationary(table)
    moved = [sum(pi[s] * table[s][x] for s in range(len(pi))) for x in range(len(pi))]
    assert sum(pi) == pytest.approx(1.0, abs=1e-12)
    assert moved == pytest.approx(pi, abs=1e-10)


def test_markov_round_law_matches_exact_enumeration_of_the_round() -> None:
    """Per start token, P(accepted = k) equals the exact mass of round outcomes of length k + 1 (Fraction
    enumeration of the real round's branches), and the moments are those of that law."""
    gamma = 3
    law = markov_round_law(_TINY_P, _TINY_Q, gamma)

    def exact(rows: list[list[float]]) -> object:
        return lambda context: [Fraction(x) for x in rows[context[-1]]]

    for s in range(3):
        outcomes = exact_round_distribution(exact(_TINY_P), exact(_TINY_Q), gamma, context=(s,))  # type: ignore[arg-type]
        by_count = [float(sum((w for t, w in outcomes.items() if len(t) == k + 1), Fraction(0))) for k in range(4)]
        mean, second, probs = law[s]
        assert probs == pytest.approx(by_count, abs=1e-12)
        assert mean == pytest.approx(sum(k * x for k, x in enumerate(by_count)), abs=1e-12)
        assert second == pytest.approx(sum(k * k * x for k, x in enumerate(by_count)), abs=1e-12)
