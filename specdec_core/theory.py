"""Closed forms for speculative decoding, and exact enumeration with ``fractions.Fraction``.

The formulas are those of Leviathan, Kalman and Matias, "Fast Inference from Transformers via Speculative
Decoding" (ICML 2023), under the paper's simplifying assumption: **the acceptance events of successive draft
tokens are i.i.d. with probability alpha** (Section 3.1). Real text breaks this assumption (easy stretches accept
more, hard ones less), so these numbers describe an average, and the pages show simulations beside them.

- acceptance rate beta = sum_x min(p(x), q(x)), and alpha = E[beta] (Definition 3.1, Eq. 1);
- accepted count per round: capped geometric, P(k) = alpha^k (1 - alpha) for k < gamma, alpha^gamma for k = gamma;
- expected tokens per target pass (1 - alpha^(gamma+1)) / (1 - alpha) (Eq. 1);
- walltime improvement (1 - alpha^(gamma+1)) / ((1 - alpha)(gamma c + 1)) for draft cost c (Theorem 3.8);
- arithmetic-operations factor (1 - alpha)(gamma c_hat + gamma + 1) / (1 - alpha^(gamma+1)) (Theorem 3.11);
- the output distribution of one round, exactly, and of several rounds for context-dependent models.

Serving systems report acceptance three ways; ``per_token_alpha_from_*`` convert between them:

- per-token alpha, the paper's quantity;
- *draft acceptance rate* = accepted / drafted, as vLLM's ``spec_decode_num_accepted_tokens /
  spec_decode_num_draft_tokens``; it is lower than alpha because drafts after a rejection count as drafted;
- *mean acceptance length* = tokens per target pass = 1 + accepted / rounds (vLLM logs it this way, counting
  the correction or bonus token).

Non-goals: batching effects, KV-cache costs and anything else that makes real speedups smaller than Thm 3.8.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction

from .distributions import check_alpha, check_cost, check_gamma

__all__ = [
    "ExactModel",
    "accepted_count_distribution",
    "break_even_alpha",
    "draft_acceptance_rate",
    "exact_output_distribution",
    "exact_prefix_distribution",
    "exact_round_distribution",
    "expected_accepted",
    "expected_discarded",
    "expected_tokens",
    "markov_acceptance_tails",
    "markov_round_law",
    "markov_stationary",
    "operations_factor",
    "optimal_gamma",
    "per_token_alpha_from_acceptance_rate",
    "per_token_alpha_from_tokens_per_pass",
    "speedup",
    "target_prefix_distribution",
]

#: A model in exact arithmetic: context (token ids) -> next-token distribution as Fractions.
ExactModel = Callable[[tuple[int, ...]], Sequence[Fraction]]


def expected_tokens(alpha: float, gamma: int) -> float:
    """Expected tokens emitted per target pass, (1 - alpha^(gamma+1)) / (1 - alpha) (Eq. 1).

    It is the mean of a capped geometric count plus the one correction-or-bonus token; gamma + 1 when
    alpha = 1, and 1 when alpha = 0 (the correction token alone: never worse than plain decoding in tokens).

    Computed as the series 1 + alpha + ... + alpha^gamma, which the closed form sums. Near alpha = 1 the closed
    form divides two differences that cancel (at alpha = 1 - 1e-9 it keeps about 7 correct digits); the series,
    in Horner form, has no subtraction, is continuous at alpha = 1 and never decreases as alpha grows.

    >>> round(expected_tokens(0.8, 4), 12)
    3.3616
    >>> expected_tokens(1.0, 4)
    5.0
    """
    a = check_alpha(alpha)
    g = check_gamma(gamma)
    total = 1.0
    for _ in range(g):
        total = 1.0 + a * total
    return total


def accepted_count_distribution(alpha: float, gamma: int) -> list[float]:
    """P(accepted = k) for k = 0..gamma: the first rejection ends the round, a full acceptance caps it.

    >>> [round(x, 6) for x in accepted_count_distribution(0.5, 2)]
    [0.5, 0.25, 0.25]
    """
    a = check_alpha(alpha)
    g = check_gamma(gamma)
    return [a**k * (1.0 - a) for k in range(g)] + [a**g]


def expected_accepted(alpha: float, gamma: int) -> float:
    """Mean accepted drafts per round: expected tokens minus the one correction-or-bonus token."""
    return expected_tokens(alpha, gamma) - 1.0


def expected_discarded(alpha: float, gamma: int) -> float:
    """Mean drafts thrown away per round *after* the first rejection (the rejected token itself excluded).

    A rejection at 0-based position i (probability alpha^i (1 - alpha)) discards gamma - 1 - i later drafts.

    >>> expected_discarded(0.0, 4), expected_discarded(1.0, 4)
    (3.0, 0.0)
    """
    a = check_alpha(alpha)
    g = check_gamma(gamma)
    return sum(a**i * (1.0 - a) * (g - 1 - i) for i in range(g))


def speedup(alpha: float, gamma: int, cost: float) -> float:
    """Expected walltime improvement over plain decoding (Leviathan et al. 2023, Theorem 3.8).

    ``cost`` is c, the time of one draft step divided by the time of one target pass. A round takes
    gamma c + 1 target-pass units and yields ``expected_tokens`` tokens; plain decoding yields one per unit.

    >>> round(speedup(0.8, 4, 0.05), 4)
    2.8013
    """
    c = check_cost(cost)
    g = check_gamma(gamma)
    return expected_tokens(alpha, g) / (g * c + 1.0)


def operations_factor(alpha: float, gamma: int, op_cost: float) -> float:
    """Expected factor by which arithmetic operations grow (Theorem 3.11); above 1 means more total work.

    ``op_cost`` is c_hat, the draft's arithmetic operations per token over the target's. The target still
    evaluates gamma + 1 positions per pass, and rejected work is paid for, so speculation trades extra
    operations for fewer sequential passes.

    >>> round(operations_factor(0.8, 4, 0.05), 4)
    1.5469
    """
    c = check_cost(op_cost, "op_cost")
    g = check_gamma(gamma)
    return (g * c + g + 1.0) / expected_tokens(alpha, g)


def optimal_gamma(alpha: float, cost: float, max_gamma: int = 32) -> int:
    """The gamma in ``0..max_gamma`` with the largest ``speedup``; ties go to the smaller gamma.

    0 means "do not speculate": with a poor draft or an expensive one every gamma > 0 is slower than plain
    decoding (speedup 1).

    >>> optimal_gamma(0.8, 0.05), optimal_gamma(0.1, 0.5)
    (8, 0)
    """
    a, c = check_alpha(alpha), check_cost(cost)
    best, best_value = 0, 1.0
    # expected_tokens(a, g) is g Horner steps from 1.0, so step g extends step g - 1's sum: one step per gamma
    # gives the very floats ``speedup`` would, in O(max_gamma) rather than O(max_gamma^2) (the Tuning page's map
    # asks for 2,551 of these).
    tokens = 1.0
    for g in range(1, check_gamma(max_gamma, "max_gamma") + 1):
        tokens = 1.0 + a * tokens
        value = tokens / (g * c + 1.0)
        if value > best_value * (1.0 + 1e-12):
            best, best_value = g, value
    return best


def break_even_alpha(gamma: int, cost: float) -> float | None:
    """The agreement rate alpha at which ``speedup(alpha, gamma, cost)`` is exactly 1: below it, speculation loses.

    Speedup grows with alpha, from 1 / (gamma c + 1) at alpha = 0 to (gamma + 1) / (gamma c + 1) at alpha = 1, so
    the break-even point is unique and found by bisection. ``None`` when even alpha = 1 does not pay, which
    happens exactly when c > 1 (a draft step slower than a target pass). At c = 0 drafting is free: 0.

    At c = 1 a round costs gamma + 1 pass-units and yields at most gamma + 1 tokens, so only alpha = 1 breaks
    even: the answer is exactly 1.0.

    >>> round(break_even_alpha(4, 0.05), 4), break_even_alpha(4, 0.0), break_even_alpha(4, 1.5)
    (0.1668, 0.0, None)
    >>> break_even_alpha(4, 1.0)
    1.0
    """
    g = check_gamma(gamma)
    c = check_cost(cost)
    if g == 0:
        raise ValueError("gamma must be at least 1 for a break-even alpha (at 0 the speedup is 1 for every alpha)")
    if speedup(1.0, g, c) < 1.0:
        return None
    if speedup(1.0, g, c) == 1.0:
        # Below alpha = 1 the speedup is below 1, but in floats it rounds to 1 within an ulp or so of alpha = 1,
        # and bisection would stop a hair short of the exact answer.
        return 1.0
    if speedup(0.0, g, c) >= 1.0:  # c = 0: even a draft that is always rejected costs nothing
        return 0.0
    return _invert_increasing(lambda a: speedup(a, g, c), 1.0)


def draft_acceptance_rate(alpha: float, gamma: int) -> float:
    """vLLM's *draft acceptance rate*, accepted / drafted, implied by a per-token alpha.

    >>> round(draft_acceptance_rate(0.8, 4), 4)
    0.5904
    """
    g = check_gamma(gamma)
    if g == 0:
        raise ValueError("gamma must be at least 1 for a draft acceptance rate (nothing is drafted at 0)")
    return expected_accepted(alpha, g) / g


def _invert_increasing(f: Callable[[float], float], target: float) -> float:
    """Solve f(alpha) = target on [0, 1] for an increasing f, by bisection to float precision."""
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:  # lo and hi are neighbouring floats: no bisection can move them again
            break
        if f(mid) < target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def per_token_alpha_from_acceptance_rate(rate: float, gamma: int) -> float:
    """Invert ``draft_acceptance_rate``: the per-token alpha behind vLLM's accepted / drafted.

    >>> round(per_token_alpha_from_acceptance_rate(draft_acceptance_rate(0.8, 4), 4), 9)
    0.8
    """
    r = check_alpha(rate, "rate")
    g = check_gamma(gamma)
    if g == 0:
        raise ValueError("gamma must be at least 1 for a draft acceptance rate (nothing is drafted at 0)")
    return _invert_increasing(lambda a: draft_acceptance_rate(a, g), r)


def per_token_alpha_from_tokens_per_pass(tokens_per_pass: float, gamma: int) -> float:
    """Invert ``expected_tokens``: the per-token alpha behind a mean acceptance length.

    >>> round(per_token_alpha_from_tokens_per_pass(expected_tokens(0.6, 3), 3), 9)
    0.6
    """
    g = check_gamma(gamma)
    if not 1.0 <= tokens_per_pass <= g + 1:
        raise ValueError(f"tokens_per_pass must be between 1 and gamma + 1 = {g + 1} (got {tokens_per_pass})")
    return _invert_increasing(lambda a: expected_tokens(a, g), tokens_per_pass)


# Exact arithmetic -----------------------------------------------------------------------------------------------


def _exact_row(row: Sequence[float | Fraction], name: str) -> list[Fraction]:
    """Convert to Fractions (exactly: a float is a dyadic rational) and check it is a distribution.

    Float rows rarely sum to exactly 1, so they are rescaled by their exact sum; what is proven is then that the
    algorithm reproduces that rescaled p exactly.
    """
    if len(row) == 0:
        raise ValueError(f"{name} must not be empty (the vocabulary needs at least one token)")
    out = [Fraction(x) for x in row]
    if any(x < 0 for x in out):
        raise ValueError(f"{name} must be non-negative")
    total = sum(out, Fraction(0))
    if abs(total - 1) > Fraction(1, 10**9):
        raise ValueError(f"{name} must sum to 1 (got {float(total):.12g})")
    return [x / total for x in out]


# --8<-- [start:exact_round]
def _round_outcomes(
    p_of: ExactModel, q_of: ExactModel, context: tuple[int, ...], gamma: int
) -> dict[tuple[int, ...], Fraction]:
    """Every token sequence one round can emit from ``context``, with its exact probability.

    Mirrors ``steps.speculative_round`` step by step. Drafts after a rejection are drawn and discarded without
    influencing the output, so they are summed out.
    """
    outcomes: dict[tuple[int, ...], Fraction] = {}

    def add(tokens: tuple[int, ...], weight: Fraction) -> None:
        if weight:
            outcomes[tokens] = outcomes.get(tokens, Fraction(0)) + weight

    def position(accepted: tuple[int, ...], weight: Fraction) -> None:
        p = _exact_row(p_of(context + accepted), "target")
        if len(accepted) == gamma:  # Step 4: all accepted, one bonus token from the next target distribution.
            for y, py in enumerate(p):
                add(accepted + (y,), weight * py)
            return
        q = _exact_row(q_of(context + accepted), "draft")
        if len(q) != len(p):
            raise ValueError("target and draft must share one vocabulary")
        # Step 1 + 2: draft x with probability q(x), accept it with min(1, p(x)/q(x)): jointly min(p(x), q(x)).
        for x, (px, qx) in enumerate(zip(p, q, strict=True)):
            if qx > 0:
                position(accepted + (x,), weight * min(px, qx))
        # Step 3: the rejection mass is sum_x q(x) (1 - min(1, p/q)) = sum_x max(0, q - p).
        rejected = sum((max(Fraction(0), qx - px) for px, qx in zip(p, q, strict=True)), Fraction(0))
        if rejected:
            excess = [max(Fraction(0), px - qx) for px, qx in zip(p, q, strict=True)]
            norm = sum(excess, Fraction(0))
            for y, e in enumerate(excess):
                add(accepted + (y,), weight * rejected * e / norm)

    position((), Fraction(1))
    return outcomes


# --8<-- [end:exact_round]


def exact_round_distribution(
    target: ExactModel, draft: ExactModel, gamma: int, context: tuple[int, ...] = ()
) -> dict[tuple[int, ...], Fraction]:
    """Every token sequence one round can emit from ``context`` (accepted prefix + correction or bonus), exactly.

    >>> half = lambda _c: [Fraction(1, 2), Fraction(1, 2)]
    >>> exact_round_distribution(half, half, 1)[(0, 1)]
    Fraction(1, 4)
    """
    return _round_outcomes(target, draft, context, check_gamma(gamma))


# --8<-- [start:exact_output]
def exact_output_distribution(p: Sequence[float | Fraction], q: Sequence[float | Fraction]) -> list[Fraction]:
    """The exact distribution of the token one round emits at a position where the target is p, draft q.

    It is P(draft x and accept x) + P(reject) * residual(y) = min(p, q)(y) + max(0, p - q)(y) = p(y): the
    identity at the heart of the method (Leviathan et al. 2023, Appendix A.1). Computed literally, following
    the algorithm's branches, so that the equality is a check and not an assumption.

    >>> exact_output_distribution([0.5, 0.25, 0.25], [0.25, 0.25, 0.5])
    [Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)]
    """
    p_row = _exact_row(p, "p")
    q_row = _exact_row(q, "q")
    if len(p_row) != len(q_row):
        raise ValueError(f"p and q must have the same length (got {len(p_row)} and {len(q_row)})")
    outcomes = _round_outcomes(lambda _c: p_row, lambda _c: q_row, (), 1)
    first = [Fraction(0)] * len(p_row)
    for tokens, weight in outcomes.items():
        first[tokens[0]] += weight
    return first


# --8<-- [end:exact_output]


def exact_prefix_distribution(
    target: ExactModel, draft: ExactModel, gamma: int, length: int, context: tuple[int, ...] = ()
) -> dict[tuple[int, ...], Fraction]:
    """Exact distribution of the first ``length`` tokens speculative decoding emits, over as many rounds as needed.

    ``target`` and ``draft`` may depend on the context, so this checks exactness across round boundaries too
    (the second emitted token may be a correction, a bonus or the next round's first token). Exponential in
    gamma and length: keep the vocabulary tiny.
    """
    g = check_gamma(gamma)
    if length < 1:
        raise ValueError(f"length must be at least 1 (got {length})")
    result: dict[tuple[int, ...], Fraction] = {}

    def run(emitted: tuple[int, ...], weight: Fraction) -> None:
        if len(emitted) >= length:
            key = emitted[:length]
            result[key] = result.get(key, Fraction(0)) + weight
            return
        for tokens, w in _round_outcomes(target, draft, context + emitted, g).items():
            run(emitted + tokens, weight * w)

    run((), Fraction(1))
    return result


def target_prefix_distribution(
    target: ExactModel, length: int, context: tuple[int, ...] = ()
) -> dict[tuple[int, ...], Fraction]:
    """Exact distribution of ``length`` tokens sampled from the target alone, the reference to compare with."""
    if length < 1:
        raise ValueError(f"length must be at least 1 (got {length})")
    result: dict[tuple[int, ...], Fraction] = {(): Fraction(1)}
    for _ in range(length):
        nxt: dict[tuple[int, ...], Fraction] = {}
        for prefix, weight in result.items():
            for y, py in enumerate(_exact_row(target(context + prefix), "target")):
                if py:
                    nxt[prefix + (y,)] = nxt.get(prefix + (y,), Fraction(0)) + weight * py
        result = nxt
    return result


# Markov pairs ----------------------------------------------------------------------------------------------------


def markov_acceptance_tails(
    target_rows: Sequence[Sequence[float]],  # [V][V]: row s is p(. | previous token s)
    draft_rows: Sequence[Sequence[float]],  # [V][V]: row s is q(. | previous token s)
    gamma: int,
) -> list[list[float]]:
    """P(at least i drafts accepted | the round starts after token s), for i = 1..gamma: ``[V][gamma]``.

    For a first-order Markov pair the acceptance rate depends on the context, so a single alpha does not
    describe a round. Exactly: the draft proposes x after s and the verifier keeps it with joint probability
    A[s][x] = min(p(x|s), q(x|s)), and the next position's context is x. Hence with r_0 = 1,
    r_i(s) = sum_x A[s][x] r_{i-1}(x) is the probability that the first i drafts are all accepted. The mean
    accepted count is sum_i r_i(s), and E[accepted^2] = sum_i (2i - 1) r_i(s).

    With the same row at every context this is alpha^i, the i.i.d. case of Leviathan et al. (2023):

    >>> [round(x, 12) for x in markov_acceptance_tails([[0.5, 0.5]] * 2, [[0.9, 0.1]] * 2, 3)[0]]
    [0.6, 0.36, 0.216]
    """
    g = check_gamma(gamma)
    size = len(target_rows)
    if len(draft_rows) != size or any(len(r) != size for r in (*target_rows, *draft_rows)):
        raise ValueError(f"target_rows and draft_rows must both be square [{size}][{size}] tables")
    joint = [[min(a, b) for a, b in zip(p, q, strict=True)] for p, q in zip(target_rows, draft_rows, strict=True)]
    tails: list[list[float]] = [[] for _ in range(size)]
    r = [1.0] * size
    for _ in range(g):
        r = [math.fsum(a * x for a, x in zip(row, r, strict=True)) for row in joint]
        for s in range(size):
            tails[s].append(r[s])
    return tails


def markov_round_law(
    target_rows: Sequence[Sequence[float]],  # [V][V]: row s is p(. | previous token s)
    draft_rows: Sequence[Sequence[float]],  # [V][V]: row s is q(. | previous token s)
    gamma: int,
) -> list[tuple[float, float, list[float]]]:
    """The law of a round's accepted count for a first-order Markov pair, per start token s: ``[V]`` of
    (E[accepted], E[accepted^2], [P(accepted = k) for k = 0..gamma]).

    From the tails r_i(s) = P(at least i accepted) of ``markov_acceptance_tails``: P(k) = r_k - r_{k+1} with
    r_0 = 1 and r_{gamma+1} = 0, E[accepted] = sum_i r_i and E[accepted^2] = sum_i (2i - 1) r_i. With the same
    rows at every context it is the capped geometric law of Leviathan et al. (2023), Section 3.1:

    >>> mean, second, probs = markov_round_law([[0.5, 0.5]] * 2, [[0.9, 0.1]] * 2, 2)[0]
    >>> round(mean, 12), round(second, 12), [round(x, 12) for x in probs]
    (0.96, 1.68, [0.4, 0.24, 0.36])
    """
    law: list[tuple[float, float, list[float]]] = []
    for tails in markov_acceptance_tails(target_rows, draft_rows, gamma):
        at_least = [1.0, *tails, 0.0]
        probs = [max(0.0, at_least[k] - at_least[k + 1]) for k in range(len(tails) + 1)]
        law.append((math.fsum(tails), math.fsum((2 * i + 1) * r for i, r in enumerate(tails)), probs))
    return law


def markov_stationary(target_rows: Sequence[Sequence[float]], tolerance: float = 1e-13) -> list[float]:
    """The stationary distribution pi = pi P of an irreducible, aperiodic chain, by power iteration.

    >>> [round(x, 9) for x in markov_stationary([[0.9, 0.1], [0.5, 0.5]])]
    [0.833333333, 0.166666667]
    """
    size = len(target_rows)
    pi = [1.0 / size] * size
    for _ in range(100_000):
        nxt = [0.0] * size
        for s, row in enumerate(target_rows):
            w = pi[s]
            if w:
                for x, p in enumerate(row):
                    nxt[x] += w * p
        if max(abs(a - b) for a, b in zip(nxt, pi, strict=True)) < tolerance:
            return nxt
        pi = nxt
    raise ValueError("the chain did not converge to a stationary distribution (is it periodic?)")
