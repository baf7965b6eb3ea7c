"""Tolerances for the seeded Monte Carlo tests, derived from the sample size.

Total variation between an empirical distribution of ``n`` draws and the true one over ``k`` cells:

- its mean is at most (1/2) sum_i sqrt(p_i (1 - p_i) / n) <= (1/2) sqrt(k / n) (Jensen, cell by cell);
- it changes by at most 1/n when one draw changes, so McDiarmid's inequality gives
  P(TV > E[TV] + t) <= exp(-2 n t^2); with t = sqrt(ln(1/delta) / (2 n)) that is at most delta.

So ``tv_bound(n, k, delta)`` is exceeded with probability below ``delta`` when the sampler is exact. We use
delta = 1e-9: a correct sampler fails such a test about once in a billion seeds, while a biased one (for example
a residual that forgets to normalise, or an accept test using p/q without the min) is off by far more.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

DELTA = 1e-9


def tv_bound(n: int, k: int, delta: float = DELTA) -> float:
    return 0.5 * math.sqrt(k / n) + math.sqrt(math.log(1.0 / delta) / (2.0 * n))


def empirical(counts: Sequence[int]) -> list[float]:
    n = sum(counts)
    return [c / n for c in counts]


def standard_error_bound(mean: float, var: float, n: int, sigmas: float = 4.0) -> float:
    """Half-width of a `sigmas` standard-error band for a sample mean of n draws with variance var."""
    return sigmas * math.sqrt(var / n)
