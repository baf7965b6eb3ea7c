"""Goodness of fit: is a sample consistent with the distribution it should follow?

The pages check exactness empirically: draw tokens with the real round, count them, and compare the counts with
the target. This module holds the tests they use:

- Pearson's chi-square statistic and its p-value (``chi_square_statistic``, ``chi_square_sf``);
- the grouped statistic for a first-order Markov chain observed along one path (``grouped_chi_square``);
- the total-variation distance an exact sampler shows by chance at a given sample size (``tv_noise``), so a
  page can say whether a TV it measured is noise or bias;
- ``goodness_of_fit``, the summary a widget shows: TV, its noise level, chi-square, p-value and a verdict, and
  ``chain_fit``, the same for tokens emitted along one path of a first-order Markov chain.

An infinite statistic (a count where the distribution puts no mass) is reported as ``None`` with p-value 0: JSON
has no infinity, and no finite stand-in is honest.

Non-goals: exact (multinomial) tests, power analysis, multiple-testing corrections; a p-value is evidence about
one sample, never a proof of exactness (that is ``theory.exact_output_distribution``'s job).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = [
    "SIGNIFICANCE",
    "chain_fit",
    "chi_square_sf",
    "chi_square_statistic",
    "goodness_of_fit",
    "grouped_chi_square",
    "tv_noise",
]

#: p-values below this call a sample inconsistent with its distribution (a false alarm once in 1,000 samples).
SIGNIFICANCE = 1e-3


def chi_square_statistic(counts: Sequence[int], probs: Sequence[float]) -> tuple[float, int]:
    """Pearson's statistic for observed ``counts`` against expected ``probs``, and its degrees of freedom.

    Cells with zero expected probability are left out; a count in such a cell is impossible under the null and
    makes the statistic infinite.

    >>> chi_square_statistic([10, 10], [0.5, 0.5])
    (0.0, 1)
    """
    if len(counts) != len(probs):
        raise ValueError(f"counts and probs must have the same length (got {len(counts)} and {len(probs)})")
    n = sum(counts)
    if n <= 0:
        raise ValueError("counts must hold at least one observation")
    stat, cells = 0.0, 0
    for c, p in zip(counts, probs, strict=True):
        if p <= 0.0:
            if c:
                return float("inf"), max(cells, 1)
            continue
        expected = n * p
        stat += (c - expected) ** 2 / expected
        cells += 1
    return stat, max(cells - 1, 1)


def chi_square_sf(stat: float, df: int) -> float:
    """P(X >= stat) for X ~ chi-square(df): the p-value of a goodness-of-fit test.

    It is the regularised upper incomplete gamma Q(df/2, stat/2), by its power series below the mean and its
    continued fraction above (the standard split; see Press et al., Numerical Recipes, Sec. 6.2).

    >>> round(chi_square_sf(3.841458820694124, 1), 6), round(chi_square_sf(4.0, 2), 12) == round(math.exp(-2), 12)
    (0.05, True)
    """
    if df < 1:
        raise ValueError(f"df must be at least 1 (got {df})")
    if stat != stat or stat < 0.0:
        raise ValueError(f"stat must be a number >= 0 (got {stat})")
    if stat == 0.0:
        return 1.0
    if math.isinf(stat):
        return 0.0
    a, x = df / 2.0, stat / 2.0
    log_prefactor = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1.0:
        term = total = 1.0 / a
        k = a
        for _ in range(10_000):
            k += 1.0
            term *= x / k
            total += term
            if abs(term) < abs(total) * 1e-16:
                break
        return max(0.0, min(1.0, 1.0 - total * math.exp(log_prefactor)))
    # Lentz's method for the continued fraction of Q.
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return max(0.0, min(1.0, math.exp(log_prefactor) * h))


def grouped_chi_square(
    counts: Sequence[Sequence[int]],  # [groups][cells] observed
    probs: Sequence[Sequence[float]],  # [groups][cells] each row a distribution
    min_expected: float = 5.0,
) -> tuple[float, int]:
    """Pearson's statistic summed over groups, small cells pooled, and its degrees of freedom.

    Built for a first-order Markov chain observed along one path (Anderson & Goodman 1957): group c holds the
    counts of the tokens that followed token c, to be compared with the chain's row for c times the number of
    visits. Under the null each group's statistic is asymptotically chi-square with (cells - 1) degrees of
    freedom and the groups are independent, so the sum is chi-square with the summed degrees of freedom.

    Within a group, cells are taken in increasing order of expected count and pooled into bins until each
    bin expects at least ``min_expected`` (a short last bin joins the one before): the usual validity rule for
    the chi-square approximation. The pooling looks only at expected counts, never at observed ones, so it
    does not bias the test. A group with fewer than two bins adds nothing; a count in a cell of probability 0
    makes the statistic infinite. ``df`` is 0 when no group has enough data yet.

    >>> grouped_chi_square([[10, 10], [3, 1]], [[0.5, 0.5], [0.5, 0.5]])
    (0.0, 1)
    """
    if len(counts) != len(probs):
        raise ValueError(f"counts and probs must have the same number of groups (got {len(counts)} and {len(probs)})")
    total_stat, total_df = 0.0, 0
    for g, (row_counts, row_probs) in enumerate(zip(counts, probs, strict=True)):
        if len(row_counts) != len(row_probs):
            raise ValueError(f"counts[{g}] and probs[{g}] must have the same length")
        n = sum(row_counts)
        if n == 0:
            continue
        cells = sorted((n * p, c) for c, p in zip(row_counts, row_probs, strict=True) if p > 0.0)
        if sum(c for c, p in zip(row_counts, row_probs, strict=True) if p <= 0.0):
            return math.inf, max(total_df, 1)
        bins: list[list[float]] = []  # [expected, observed]
        current = [0.0, 0.0]
        for expected, observed in cells:
            current[0] += expected
            current[1] += observed
            if current[0] >= min_expected:
                bins.append(current)
                current = [0.0, 0.0]
        if current[0] > 0.0:
            if bins:
                bins[-1][0] += current[0]
                bins[-1][1] += current[1]
            else:
                bins.append(current)
        if len(bins) < 2:
            continue
        total_stat += sum((o - e) ** 2 / e for e, o in bins)
        total_df += len(bins) - 1
    return total_stat, total_df


def tv_noise(
    visits: Sequence[int],  # [groups] draws made from each row
    rows: Sequence[Sequence[float]],  # [groups][cells] the distribution each group's draws follow
) -> float:
    """The expected total variation between pooled sample shares and the pooled truth, when sampling is exact.

    A cell's share is a sum of independent draws, with mean m_y = sum_g visits_g p_g(y) and variance
    v_y = sum_g visits_g p_g(y) (1 - p_g(y)) in counts; by the normal approximation E|error| = sqrt(2 v_y / pi), and
    TV is half the sum over cells, divided by the n draws. A cell expected to hold under one draw is far from normal:
    there E|error| = 2 m_y P(no draw) <= 2 m_y, and the normal figure, about sqrt(2 m_y / pi), overshoots it (a
    thousand rare cells and ten draws gave 3.99, where TV cannot exceed 1). So each cell counts the smaller of the
    two, which keeps the whole at most 1. One group is the plain multinomial case:

    >>> round(tv_noise([100], [[0.5, 0.5]]), 6) == round(math.sqrt(2 * 25 / math.pi) / 100, 6)
    True
    """
    if len(visits) != len(rows):
        raise ValueError(f"visits and rows must have the same length (got {len(visits)} and {len(rows)})")
    n = sum(visits)
    if n <= 0:
        raise ValueError("visits must hold at least one draw")
    width = len(rows[0])
    pairs = list(zip(visits, rows, strict=True))
    mean = [math.fsum(k * row[y] for k, row in pairs) for y in range(width)]
    var = [math.fsum(k * row[y] * (1.0 - row[y]) for k, row in pairs) for y in range(width)]
    return 0.5 * math.fsum(min(math.sqrt(2.0 * v / math.pi), 2.0 * m) for m, v in zip(mean, var, strict=True)) / n


def goodness_of_fit(counts: Sequence[int], probs: Sequence[float]) -> dict[str, float | None]:
    """Counts against the distribution they should follow: the numbers a widget shows, JSON-safe.

    ``tv-distance`` of the shares from ``probs``; ``tv-noise``, the TV an exact sampler shows on average at this
    sample size; Pearson's ``chi-square`` (``None`` when infinite) and its ``p-value``; ``exact`` 1 while the
    sample is consistent with ``probs`` at the ``SIGNIFICANCE`` level.

    >>> goodness_of_fit([3, 1], [1.0, 0.0])["chi-square"], goodness_of_fit([3, 1], [1.0, 0.0])["p-value"]
    (None, 0.0)
    """
    n = sum(counts)
    stat, df = chi_square_statistic(counts, probs)
    p_value = chi_square_sf(stat, df)
    return {
        "tv-distance": round(0.5 * math.fsum(abs(c / n - p) for c, p in zip(counts, probs, strict=True)), 12),
        "tv-noise": round(tv_noise([n], [probs]), 12),
        "chi-square": round(stat, 6) if math.isfinite(stat) else None,
        "p-value": p_value,
        "exact": 1 if p_value >= SIGNIFICANCE else 0,
    }


def chain_fit(
    transitions: Sequence[Sequence[int]],  # [V][V]: after token c, token y was emitted this often
    rows: Sequence[Sequence[float]],  # [V][V]: the chain's row after each token
) -> dict[str, float | None]:
    """Tokens emitted along one path against the chain they should follow: the per-context grouped chi-square
    (``df``, ``chi-square``, ``p-value``, ``exact``; without a verdict while ``df`` is 0), and the TV between
    the pooled shares of the tokens and the rows mixed by how often each context was visited, with its noise.

    >>> fit = chain_fit([[6, 4], [5, 5]], [[0.5, 0.5], [0.5, 0.5]])
    >>> fit["df"], fit["tv-distance"], fit["exact"]
    (2, 0.05, 1)
    """
    visits = [sum(row) for row in transitions]
    n = sum(visits)
    if n <= 0:
        raise ValueError("transitions must hold at least one token")
    stat, df = grouped_chi_square(transitions, rows)
    mix = [math.fsum(k * row[y] for k, row in zip(visits, rows, strict=True)) / n for y in range(len(rows[0]))]
    shares = [sum(row[y] for row in transitions) / n for y in range(len(mix))]
    fit: dict[str, float | None] = {
        "df": df,
        "tv-distance": round(0.5 * math.fsum(abs(a - b) for a, b in zip(shares, mix, strict=True)), 12),
        "tv-noise": round(tv_noise(visits, rows), 12),
    }
    if df:
        p_value = chi_square_sf(stat, df)
        fit |= {"chi-square": round(stat, 6) if math.isfinite(stat) else None, "p-value": p_value}
        fit["exact"] = 1 if p_value >= SIGNIFICANCE else 0
    return fit
