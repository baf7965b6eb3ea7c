"""Probability vectors: validation, sampling, the residual and the acceptance rate.

Every distribution in the package is a plain ``list[float]`` over token ids ``0..V-1``. This module holds the
few operations the algorithm needs on them, written so that a reader can check each against the paper:

- ``acceptance_rate(p, q)``: beta = sum_x min(p(x), q(x)) (Leviathan et al. 2023, Definition 3.1 / Eq. 1).
- ``residual(p, q)``: normalize(max(0, p - q)), the distribution a correction token is drawn from (Eq. 2 of the
  paper's Algorithm 1).
- ``sample(p, u)``: inverse-CDF sampling from a *given* uniform, so that randomness is always passed in.

Sampling knobs (temperature, top-k, top-p) act on probabilities, the way the models here produce them.

Non-goals: logits, batching and speed. ``batch.py`` is the vectorised twin; this module stays readable and
dependency-free so that it runs unchanged in Pyodide.
"""

from __future__ import annotations

import math
import operator
from bisect import bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate
from numbers import Real

__all__ = [
    "MAX_GAMMA",
    "ROW_TOLERANCE",
    "acceptance_rate",
    "apply_temperature",
    "apply_top_k",
    "apply_top_p",
    "check_alpha",
    "check_cost",
    "check_gamma",
    "normalize",
    "residual",
    "residual_unchecked",
    "sample",
    "sampler",
    "shape",
    "total_variation",
    "validate_probs",
    "validate_rows",
]

#: How far a row's sum may stray from 1. Rows built from floats (softmax, n-gram counts) land within ~1e-15.
ROW_TOLERANCE = 1e-9

#: Largest speculation length accepted anywhere in the package. Real systems draft at most a few dozen tokens.
MAX_GAMMA = 64


def _as_float(value: object, name: str) -> float:
    # bool is an int subclass; a True in a probability vector is almost certainly a bug upstream.
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must hold real numbers, got {type(value).__name__}")
    return float(value)


_FLOAT_ONLY = {float}


def validate_probs(p: Sequence[float], name: str = "p") -> list[float]:
    """Check that ``p`` is a probability vector and return it as a list of floats.

    >>> validate_probs([0.25, 0.75])
    [0.25, 0.75]
    >>> validate_probs([0.5, 0.6], name="q")
    Traceback (most recent call last):
    ...
    ValueError: q must sum to 1 (got 1.1)
    """
    # Lists and tuples skip the abstract-base-class check, which costs more than the rest for a short row.
    if type(p) is not list and (isinstance(p, str | bytes) or not isinstance(p, Sequence)):
        raise TypeError(f"{name} must be a sequence of probabilities, got {type(p).__name__}")
    if len(p) == 0:
        raise ValueError(f"{name} must not be empty (the vocabulary needs at least one token)")
    row = list(p)
    # Fast path: rows of plain floats (what every model here produces) need no per-value conversion, and a
    # float row is fine when its minimum is >= 0 and its sum finite. This check runs once per row per round,
    # so it dominates the engine's speed in the browser: the type test and the sum run in C, not in a Python
    # generator. A plain sum of at most a few thousand terms is off by far less than ROW_TOLERANCE.
    if set(map(type, row)) != _FLOAT_ONLY:
        row = [_as_float(x, name) for x in row]
    total = sum(row)
    if not (min(row) >= 0.0 and math.isfinite(total)):
        for i, x in enumerate(row):
            if math.isnan(x) or math.isinf(x):
                raise ValueError(f"{name}[{i}] must be finite, got {x}")
            if x < 0.0:
                raise ValueError(f"{name}[{i}] must be non-negative, got {x}")
    if abs(total - 1.0) > ROW_TOLERANCE:
        raise ValueError(f"{name} must sum to 1 (got {total:.12g})")
    return row


def validate_rows(
    rows: Sequence[Sequence[float]],
    name: str,
    *,
    n_rows: int | None = None,
    vocab: int | None = None,
) -> list[list[float]]:
    """Validate a ``[n_rows][vocab]`` table of distributions, naming the offending row.

    >>> validate_rows([[1.0, 0.0]], "draft_probs", n_rows=2)
    Traceback (most recent call last):
    ...
    ValueError: draft_probs must have 2 rows (got 1)
    """
    if isinstance(rows, str | bytes) or not isinstance(rows, Sequence):
        raise TypeError(f"{name} must be a sequence of rows, got {type(rows).__name__}")
    if n_rows is not None and len(rows) != n_rows:
        raise ValueError(f"{name} must have {n_rows} rows (got {len(rows)})")
    out = [validate_probs(row, f"{name}[{i}]") for i, row in enumerate(rows)]
    width = vocab if vocab is not None else (len(out[0]) if out else None)
    for i, row in enumerate(out):
        if len(row) != width:
            raise ValueError(f"{name}[{i}] must have {width} entries, one per vocabulary token (got {len(row)})")
    return out


def check_gamma(gamma: object, name: str = "gamma") -> int:
    """Check a speculation length: an int in ``0..64``.

    >>> check_gamma(4)
    4
    >>> check_gamma(65)
    Traceback (most recent call last):
    ...
    ValueError: gamma must be between 0 and 64 (got 65)
    """
    if isinstance(gamma, bool) or not isinstance(gamma, int):
        raise TypeError(f"{name} must be an int, got {type(gamma).__name__}")
    if not 0 <= gamma <= MAX_GAMMA:
        raise ValueError(f"{name} must be between 0 and {MAX_GAMMA} (got {gamma})")
    return gamma


def check_alpha(alpha: object, name: str = "alpha") -> float:
    """Check an acceptance rate: a real number in ``[0, 1]``."""
    value = _as_float(alpha, name)
    if not 0.0 <= value <= 1.0:  # also rejects NaN
        raise ValueError(f"{name} must be between 0 and 1 (got {value})")
    return value


def check_cost(cost: object, name: str = "cost") -> float:
    """Check a draft cost ratio c (draft step time / target step time): finite and non-negative."""
    value = _as_float(cost, name)
    if not (value >= 0.0 and math.isfinite(value)):
        raise ValueError(f"{name} must be a finite number >= 0 (got {value})")
    return value


def normalize(weights: Sequence[float], name: str = "weights") -> list[float]:
    """Scale non-negative weights to sum to 1.

    >>> normalize([1, 3])
    [0.25, 0.75]
    """
    row = list(weights)
    # Same fast path as validate_probs, the type test in C.
    if set(map(type, row)) != _FLOAT_ONLY:
        row = [_as_float(w, name) for w in row]
    if not row:
        raise ValueError(f"{name} must not be empty")
    # A negative weight fails the min test; a NaN or infinite one makes the sum non-finite.
    if not min(row) >= 0.0 or not math.isfinite(total := math.fsum(row)):
        raise ValueError(f"{name} must be finite and non-negative")
    if total <= 0.0:
        raise ValueError(f"{name} must have a positive sum")
    return [w / total for w in row]


def sample(p: Sequence[float], u: float) -> int:
    """Draw a token from ``p`` by inverse CDF, using the uniform ``u`` in ``[0, 1)``.

    The token is the first ``i`` whose cumulative probability exceeds ``u``. Rounding can leave the running sum
    a hair below 1, so a ``u`` near 1 falls back to the last token that has positive probability: a
    zero-probability token is never returned.

    >>> sample([0.5, 0.0, 0.5], 0.49), sample([0.5, 0.0, 0.5], 0.5), sample([0.5, 0.0, 0.5], 0.999999)
    (0, 2, 2)
    """
    # One draw walks the row and stops at the token: cheaper than ``sampler``'s sums, which pay off over many draws.
    if not 0.0 <= u < 1.0:
        raise ValueError(f"u must be in [0, 1) (got {u})")
    return _first_above(p, u)


def sampler(p: Sequence[float]) -> Callable[[float], int]:
    """``sample`` with ``p`` fixed: ``sampler(p)(u) == sample(p, u)``, the running sums made once for many draws.

    >>> draw = sampler([0.5, 0.0, 0.5])
    >>> draw(0.49), draw(0.5), draw(0.999999)
    (0, 2, 2)
    """
    row = list(p)
    sums: list[float] = []
    if row and set(map(type, row)) == _FLOAT_ONLY and min(row) >= 0.0:
        # The running sums of the loop in _first_above, added in the same order but in C, then searched by
        # bisection: a vocabulary-wide row costs microseconds, not a Python step per token. With no negative entry
        # they never decrease, and the first one above u falls on a token with mass (a zero adds nothing). A NaN
        # or an infinity leaves the last sum non-finite; such a row takes the loop.
        sums = list(accumulate(row))
        if not math.isfinite(sums[-1]):
            sums = []

    def draw(u: float) -> int:
        if not 0.0 <= u < 1.0:
            raise ValueError(f"u must be in [0, 1) (got {u})")
        if sums:
            i = bisect_right(sums, u)
            if i < len(sums):
                return i
        return _first_above(row, u)

    return draw


def _first_above(p: Sequence[float], u: float) -> int:
    """``sample``'s walk: any row, and ``sampler``'s fall-back for a ``u`` above the rounded total."""
    cumulative = 0.0
    last_positive = -1
    for i, pi in enumerate(p):
        if pi > 0.0:
            last_positive = i
            cumulative += pi
            if u < cumulative:
                return i
    if last_positive < 0:
        raise ValueError("p has no token with positive probability")
    return last_positive


def residual(p: Sequence[float], q: Sequence[float]) -> list[float]:
    """The correction distribution normalize(max(0, p - q)).

    When ``p == q`` the residual mass is zero; a rejection then has probability zero, and we return ``p`` so the
    function stays total (any distribution would be correct; ``p`` is the natural one).

    Worked example from the paper's setting: p = [.4, .35, .25], q = [.2, .2, .6] leaves max(0, p - q) =
    [.2, .15, 0], which sums to .35 = 1 - beta, so the residual is [4/7, 3/7, 0].

    >>> [round(x, 12) for x in residual([0.4, 0.35, 0.25], [0.2, 0.2, 0.6])]
    [0.571428571429, 0.428571428571, 0.0]
    """
    p_row = validate_probs(p, "p")
    q_row = validate_probs(q, "q")
    if len(p_row) != len(q_row):
        raise ValueError(f"p and q must have the same length (got {len(p_row)} and {len(q_row)})")
    return residual_unchecked(p_row, q_row)


def residual_unchecked(p: Sequence[float], q: Sequence[float]) -> list[float]:
    """``residual`` for rows already validated by the caller (the round validates once, up front)."""
    if len(p) != len(q):
        raise ValueError(f"p and q must have the same length (got {len(p)} and {len(q)})")
    excess = [d if d > 0.0 else 0.0 for d in map(operator.sub, p, q)]  # max(0, p - q), the differences taken in C
    total = math.fsum(excess)
    # Excess below float noise means p and q agree; dividing by ~1e-17 would amplify rounding into nonsense.
    if total <= ROW_TOLERANCE * 1e-3:
        return [float(pi) for pi in p]
    return [x / total for x in excess]


def acceptance_rate(p: Sequence[float], q: Sequence[float]) -> float:
    """beta = sum_x min(p(x), q(x)): the chance that one draft token from ``q`` is accepted against ``p``.

    Equal to 1 - TV(p, q). Paper's worked example: min([.4, .35, .25], [.2, .2, .6]) = [.2, .2, .25], beta = .65.

    >>> round(acceptance_rate([0.4, 0.35, 0.25], [0.2, 0.2, 0.6]), 12)
    0.65
    """
    p_row = validate_probs(p, "p")
    q_row = validate_probs(q, "q")
    if len(p_row) != len(q_row):
        raise ValueError(f"p and q must have the same length (got {len(p_row)} and {len(q_row)})")
    return math.fsum(map(min, p_row, q_row))  # map: the pairs are taken in C, not in a Python generator


def total_variation(p: Sequence[float], q: Sequence[float]) -> float:
    """Total-variation distance, half the L1 distance.

    >>> total_variation([1.0, 0.0], [0.5, 0.5])
    0.5
    """
    if len(p) != len(q):
        raise ValueError(f"p and q must have the same length (got {len(p)} and {len(q)})")
    return 0.5 * math.fsum(abs(a - b) for a, b in zip(p, q, strict=True))


def apply_temperature(p: Sequence[float], temperature: float) -> list[float]:
    """Sharpen (T < 1) or flatten (T > 1) a distribution: p**(1/T), renormalised. T = 0 is greedy.

    On probabilities this equals softmax(logits / T). Greedy picks the most likely token, the lowest id on ties.

    >>> apply_temperature([0.2, 0.8], 0.0)
    [0.0, 1.0]
    >>> [round(x, 6) for x in apply_temperature([0.2, 0.8], 0.5)]
    [0.058824, 0.941176]
    """
    return _temperature(validate_probs(p, "p"), _checked_temperature(temperature))


def apply_top_k(p: Sequence[float], k: int) -> list[float]:
    """Keep the ``k`` most likely tokens (lowest id first on ties) and renormalise; ``k = 0`` keeps all.

    >>> [round(x, 6) for x in apply_top_k([0.1, 0.6, 0.3], 2)]
    [0.0, 0.666667, 0.333333]
    """
    return _top_k(validate_probs(p, "p"), _checked_top_k(k))


def apply_top_p(p: Sequence[float], top_p: float) -> list[float]:
    """Nucleus sampling: keep the smallest most-likely set whose mass reaches ``top_p``; 1.0 keeps all.

    >>> [round(x, 6) for x in apply_top_p([0.1, 0.6, 0.3], 0.7)]
    [0.0, 0.666667, 0.333333]
    """
    return _top_p(validate_probs(p, "p"), _checked_top_p(top_p))


def shape(p: Sequence[float], *, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0) -> list[float]:
    """Apply temperature, then top-k, then top-p: the order vLLM and transformers use.

    Speculative decoding stays exact for any such shaping as long as the *target* is verified with its shaped
    distribution, because the algorithm only needs p and q as given.
    """
    t, k, nucleus = _checked_temperature(temperature), _checked_top_k(top_k), _checked_top_p(top_p)
    # The row is checked once here, not once per knob: the helpers below take and give checked rows.
    return _top_p(_top_k(_temperature(validate_probs(p, "p"), t), k), nucleus)


def _checked_temperature(temperature: float) -> float:
    t = _as_float(temperature, "temperature")
    if not (t >= 0.0 and math.isfinite(t)):
        raise ValueError(f"temperature must be a finite number >= 0 (got {t})")
    return t


def _checked_top_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"top_k must be an int, got {type(k).__name__}")
    if k < 0:
        raise ValueError(f"top_k must be >= 0 (got {k})")
    return k


def _checked_top_p(top_p: float) -> float:
    value = _as_float(top_p, "top_p")
    if not 0.0 < value <= 1.0:
        raise ValueError(f"top_p must be in (0, 1] (got {value})")
    return value


def _sum_to_one(weights: list[float]) -> list[float]:
    """``normalize`` for the weights made below: finite, non-negative floats with a positive sum."""
    total = math.fsum(weights)
    return [w / total for w in weights]


def _temperature(row: list[float], t: float) -> list[float]:
    if t == 0.0:
        best = max(range(len(row)), key=lambda i: (row[i], -i))
        return [1.0 if i == best else 0.0 for i in range(len(row))]
    if t == 1.0:
        return row
    # Work in logs and subtract the max so that tiny probabilities at small T neither underflow to 0/0 nor overflow.
    # log, and division by t > 0, keep order: the largest log(x) / t is the largest entry's.
    top = math.log(max(row)) / t
    return _sum_to_one([math.exp(math.log(x) / t - top) if x > 0.0 else 0.0 for x in row])


def _by_probability(row: list[float]) -> list[int]:
    """Token ids, most likely first, the lowest id first on ties.

    Python's sort is stable, also with ``reverse=True``, so ties keep id order; this equals sorting by the key
    (-row[i], i) at a fifth of the cost, which matters for top-k / top-p on every n-gram row in the browser.

    >>> _by_probability([0.25, 0.5, 0.25])
    [1, 0, 2]
    """
    return sorted(range(len(row)), key=row.__getitem__, reverse=True)


def _keep(row: list[float], ids: Sequence[int]) -> list[float]:
    """The entries at ``ids``, renormalised; zeros elsewhere. Placing k entries costs less than testing all V."""
    out = [0.0] * len(row)
    for i in ids:
        out[i] = row[i]
    return _sum_to_one(out)


def _top_k(row: list[float], k: int) -> list[float]:
    if k == 0 or k >= len(row):
        return row
    return _keep(row, _by_probability(row)[:k])


def _top_p(row: list[float], value: float) -> list[float]:
    if value == 1.0:
        return row
    kept: list[int] = []
    mass = 0.0
    for i in _by_probability(row):
        kept.append(i)
        mass += row[i]
        if mass >= value - 1e-12:
            break
    return _keep(row, kept)
