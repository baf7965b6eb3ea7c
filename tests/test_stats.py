"""Goodness of fit: chi-square tests against known values and calibrated simulations, and the JSON-safe summary."""

from __future__ import annotations

import json
import math
import random

import pytest

from specdec_core.models import quality_pair
from specdec_core.stats import (
    chain_fit,
    chi_square_sf,
    chi_square_statistic,
    goodness_of_fit,
    grouped_chi_square,
    tv_noise,
)


def test_chi_square_survival_against_known_values() -> None:
    # df = 2 is an exponential: sf(x) = exp(-x / 2) exactly.
    for x in (0.1, 1.0, 5.0, 30.0):
        assert chi_square_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-10)
    # Classic table entries: the 5% critical values for df 1, 5 and 10.
    for stat, df in ((3.841458820694124, 1), (11.070497693516351, 5), (18.307038053275146, 10)):
        assert chi_square_sf(stat, df) == pytest.approx(0.05, rel=1e-8)
    assert chi_square_statistic([5, 0], [1.0, 0.0]) == (0.0, 1)
    assert chi_square_statistic([5, 1], [1.0, 0.0])[0] == math.inf


def test_grouped_chi_square_pools_small_cells_by_expected_count_only() -> None:
    """Group 1: n = 20, p = [.5, .4, .05, .05] expects [10, 8, 1, 1]; the two 1s pool with 8 into one bin (10),
    leaving bins [10 | 10]: observed [9 | 11] gives (1 + 1) / 10 = 0.2 on 1 df. Group 2 (n = 4) is too small."""
    stat, df = grouped_chi_square([[9, 8, 3, 0], [2, 2]], [[0.5, 0.4, 0.05, 0.05], [0.5, 0.5]])
    assert (stat, df) == (pytest.approx(0.2), 1)


def test_grouped_chi_square_counts_in_impossible_cells_are_infinite() -> None:
    stat, _ = grouped_chi_square([[5, 5, 1]], [[0.5, 0.5, 0.0]])
    assert math.isinf(stat)


def test_grouped_chi_square_on_a_simulated_chain_is_calibrated() -> None:
    """200 seeded paths of the Playground's target chain (600 steps each): p-values must look uniform.

    Under the null, P(p < 0.05) = 0.05; the count of 200 is Binomial(200, .05), sd = 3.1, so 4 sd allows 10 +- 12.
    Only a mis-specified statistic or wrong df (for example counting pooled cells as free) falls outside.
    """
    pair = quality_pair(0.5)
    size = len(pair.vocab)
    table = [pair.target.probs([t]) for t in range(size)]
    rng = random.Random(7)
    small = 0
    for _ in range(200):
        counts = [[0] * size for _ in range(size)]
        state = size - 1
        for _ in range(600):
            nxt = rng.choices(range(size), weights=table[state])[0]
            counts[state][nxt] += 1
            state = nxt
        stat, df = grouped_chi_square(counts, table)
        assert df > 0
        small += chi_square_sf(stat, df) < 0.05
    assert abs(small - 10) <= 4 * math.sqrt(200 * 0.05 * 0.95)


def test_infinite_chi_square_is_reported_as_none_with_p_value_zero() -> None:
    """A count in a cell of probability 0 is impossible under the null: the statistic is infinite, which JSON
    cannot carry. The summary says None (no number) and p-value 0, and it survives strict JSON encoding."""
    fit = goodness_of_fit([5, 5, 1], [0.5, 0.5, 0.0])
    assert fit["chi-square"] is None
    assert fit["p-value"] == 0.0
    assert fit["exact"] == 0
    assert json.loads(json.dumps(fit, allow_nan=False))["chi-square"] is None


def test_goodness_of_fit_of_a_perfect_sample() -> None:
    """Counts [40, 35, 25] of 100 against p = [.4, .35, .25]: TV 0, chi-square 0, p-value 1, consistent."""
    fit = goodness_of_fit([40, 35, 25], [0.4, 0.35, 0.25])
    assert fit == {
        "tv-distance": 0.0,
        "tv-noise": pytest.approx(tv_noise([100], [[0.4, 0.35, 0.25]])),
        "chi-square": 0.0,
        "p-value": 1.0,
        "exact": 1,
    }


def test_tv_noise_matches_the_mean_tv_of_exact_samples() -> None:
    """400 seeded samples of n = 500 from p = [.5, .3, .2]: the mean TV lies within 4 standard errors of
    ``tv_noise`` (the normal approximation is good to about 1% at this n; TV's sd here is about 0.016, so the
    standard error of the mean of 400 is about 0.0008, and 4 of them plus 2% of the level is the tolerance)."""
    p = [0.5, 0.3, 0.2]
    rng = random.Random(11)
    tvs = []
    for _ in range(400):
        counts = [0, 0, 0]
        for x in rng.choices(range(3), weights=p, k=500):
            counts[x] += 1
        tvs.append(0.5 * sum(abs(c / 500 - pi) for c, pi in zip(counts, p, strict=True)))
    mean = sum(tvs) / len(tvs)
    sd = math.sqrt(sum((t - mean) ** 2 for t in tvs) / (len(tvs) - 1))
    level = tv_noise([500], [p])
    assert abs(mean - level) <= 4 * sd / math.sqrt(len(tvs)) + 0.02 * level


def test_tv_noise_pools_groups_by_their_own_rows() -> None:
    """Two groups of 50 draws from [1, 0] and [.5, .5]: only the second group varies, v = 50 / 4 per cell, so
    TV noise = 1/2 * 2 sqrt(2 * 12.5 / pi) / 100."""
    assert tv_noise([50, 50], [[1.0, 0.0], [0.5, 0.5]]) == pytest.approx(math.sqrt(25 / math.pi) / 100)


def test_tv_noise_of_many_rare_cells_stays_a_total_variation() -> None:
    """Ten draws over 1,000 equal cells: each cell's count is 0 or more, never negative, so E|X - m| = 2 m P(X = 0)
    exactly (m = 0.01 < 1), and the expected TV is (1/n) sum_y m_y P(X_y = 0) = 0.999 ** 10 = 0.990. The normal
    approximation alone said 3.99, above TV's ceiling of 1; with each cell held to 2 m it says 1.0 (within 0.011)."""
    level = tv_noise([10], [[0.001] * 1000])
    assert level <= 1.0
    assert level == pytest.approx(0.999**10, abs=0.011)


def test_tv_noise_rejects_an_empty_sample() -> None:
    with pytest.raises(ValueError, match="visits"):
        tv_noise([0], [[1.0]])


def test_chain_fit_of_a_path_that_follows_its_chain() -> None:
    """Counts [[6, 4], [5, 5]] against rows of [.5, .5]: group 0 gives (1 + 1) / 5 = 0.4 on one df, group 1 gives 0
    on one df; pooled shares [11/20, 9/20] against the mix [.5, .5] are 0.05 apart in TV."""
    fit = chain_fit([[6, 4], [5, 5]], [[0.5, 0.5], [0.5, 0.5]])
    assert fit["df"] == 2
    assert fit["chi-square"] == pytest.approx(0.4)
    assert fit["p-value"] == pytest.approx(chi_square_sf(0.4, 2))
    assert fit["tv-distance"] == pytest.approx(0.05)
    assert fit["tv-noise"] == pytest.approx(tv_noise([10, 10], [[0.5, 0.5], [0.5, 0.5]]))
    assert fit["exact"] == 1


def test_chain_fit_gives_no_verdict_without_degrees_of_freedom() -> None:
    fit = chain_fit([[1, 0], [0, 0]], [[0.5, 0.5], [0.5, 0.5]])
    assert fit["df"] == 0 and "p-value" not in fit and "exact" not in fit


def test_chain_fit_of_an_impossible_transition_is_none_with_p_value_zero() -> None:
    fit = chain_fit([[5, 5, 1], [0, 0, 0], [0, 0, 0]], [[0.5, 0.5, 0.0]] * 3)
    assert fit["chi-square"] is None and fit["p-value"] == 0.0 and fit["exact"] == 0
