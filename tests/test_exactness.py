"""Speculative sampling is lossless: the emitted tokens are distributed exactly as the target's.

Proven three ways, each independent of the others:

1. ``theory.exact_output_distribution`` follows the algorithm's branches in ``Fraction`` arithmetic, and a
   hypothesis property checks it returns p exactly for arbitrary rational p and q (zeros, disjoint supports,
   p = q, one-hot drafts included); ``exact_prefix_distribution`` does the same across round boundaries.
2. The *implementation* (``steps.speculative_round_from_uniforms``) is enumerated exactly: its output is a
   piecewise-constant function of the uniforms, so we split [0, 1) for each uniform at every breakpoint the
   algorithm can see (acceptance thresholds and cumulative sums, computed exactly), run the real code once per
   cell at the cell's midpoint, and weight the result by the cell's exact width.
3. Seeded Monte Carlo of the real round, first and second emitted token, with a total-variation bound derived
   from the sample size in ``_stats.py``.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction

from _stats import empirical, tv_bound
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core.distributions import total_variation
from specdec_core.steps import draft, speculative_round, speculative_round_from_uniforms
from specdec_core.theory import (
    exact_output_distribution,
    exact_prefix_distribution,
    exact_round_distribution,
    target_prefix_distribution,
)

# 1. Exact arithmetic --------------------------------------------------------------------------------------------


@st.composite
def rational_distribution(draw: st.DrawFn, vocab: int) -> list[Fraction]:
    """Random rational distribution over ``vocab`` tokens, with zeros allowed (but not all zeros)."""
    weights = draw(st.lists(st.integers(0, 12), min_size=vocab, max_size=vocab).filter(lambda w: sum(w) > 0))
    total = sum(weights)
    return [Fraction(w, total) for w in weights]


@st.composite
def distribution_pair(draw: st.DrawFn) -> tuple[list[Fraction], list[Fraction]]:
    vocab = draw(st.integers(1, 6))
    p = draw(rational_distribution(vocab))
    kind = draw(st.sampled_from(["random", "equal", "one-hot", "disjoint"]))
    if kind == "equal":
        return p, list(p)
    if kind == "one-hot":
        hot = draw(st.integers(0, vocab - 1))
        return p, [Fraction(int(i == hot)) for i in range(vocab)]
    if kind == "disjoint" and vocab >= 2:
        # Put q's mass only where p has none (or on the last token if p covers everything).
        free = [i for i, x in enumerate(p) if x == 0] or [vocab - 1]
        return p, [Fraction(1, len(free)) if i in free else Fraction(0) for i in range(vocab)]
    return p, draw(rational_distribution(vocab))


@settings(max_examples=300, deadline=None)
@given(distribution_pair())
def test_exact_output_distribution_equals_target(pair: tuple[list[Fraction], list[Fraction]]) -> None:
    p, q = pair
    assert exact_output_distribution(p, q) == p


def test_worked_example_is_exact_with_floats() -> None:
    # The paper's numbers as floats: each float is a dyadic rational, so equality is exact after rescaling.
    p, q = [0.4, 0.35, 0.25], [0.2, 0.2, 0.6]
    out = exact_output_distribution(p, q)
    total = sum(Fraction(x) for x in p)
    assert out == [Fraction(x) / total for x in p]


def _markov(table: Sequence[Sequence[Fraction]]) -> object:
    """A model whose next-token distribution depends on the last token (row len(table) - 1 at the start)."""

    def model(context: tuple[int, ...]) -> Sequence[Fraction]:
        return table[context[-1]] if context else table[-1]

    return model


F = Fraction
TARGET = [[F(1, 2), F(1, 3), F(1, 6)], [F(0), F(1, 4), F(3, 4)], [F(2, 5), F(2, 5), F(1, 5)]]
DRAFT = [[F(1, 3), F(1, 3), F(1, 3)], [F(1, 2), F(1, 2), F(0)], [F(0), F(0), F(1)]]


def test_two_and_three_token_prefixes_are_exact_across_rounds() -> None:
    """The first two and three tokens, whatever mix of accepted, correction and bonus tokens and of round
    boundaries produces them, have exactly the target's joint distribution, for gamma 1 to 3."""
    target, drafter = _markov(TARGET), _markov(DRAFT)
    for length in (2, 3):
        expected = target_prefix_distribution(target, length)  # type: ignore[arg-type]
        for gamma in (1, 2, 3):
            got = exact_prefix_distribution(target, drafter, gamma, length)  # type: ignore[arg-type]
            assert got == expected, (length, gamma)


# 2. Exact enumeration of the implementation ---------------------------------------------------------------------


def _cells(breaks: set[Fraction]) -> list[tuple[float, Fraction]]:
    """Split [0, 1) at ``breaks``: (midpoint as float, exact width) for each non-empty cell."""
    points = sorted({F(0), F(1)} | {b for b in breaks if 0 < b < 1})
    return [(float((a + b) / 2), b - a) for a, b in itertools.pairwise(points)]


def _cumulative(row: Sequence[Fraction]) -> set[Fraction]:
    return set(itertools.accumulate(row))


def _enumerate_round(p: list[Fraction], q: list[Fraction], gamma: int) -> dict[tuple[int, ...], Fraction]:
    """Exact distribution of the tokens the real ``speculative_round_from_uniforms`` emits, drafts i.i.d. from q."""
    vocab = len(p)
    excess = [max(F(0), a - b) for a, b in zip(p, q, strict=True)]
    residual = [e / sum(excess) for e in excess] if sum(excess) else list(p)
    final_cells = _cells(_cumulative(residual) | _cumulative(p))
    p_float, q_float = [float(x) for x in p], [float(x) for x in q]
    out: Counter[tuple[int, ...]] = Counter()
    for drafts in itertools.product(range(vocab), repeat=gamma):
        weight = F(1)
        for x in drafts:
            weight *= q[x]
        if not weight:
            continue
        verify_cells = [_cells({min(F(1), p[x] / q[x])}) for x in drafts]
        for choice in itertools.product(*verify_cells, final_cells):
            uniforms = [u for u, _ in choice]
            w = weight
            for _, width in choice:
                w *= width
            r = speculative_round_from_uniforms([p_float] * (gamma + 1), [q_float] * gamma, list(drafts), uniforms)
            out[tuple(r.tokens)] += w  # type: ignore[assignment]
    return dict(out)


def _dyadic(counts: Sequence[int]) -> list[Fraction]:
    """Counts out of 64: exactly representable in floats, and summing to exactly 1."""
    assert sum(counts) == 64
    return [F(c, 64) for c in counts]


DYADIC_PAIRS = [
    ([26, 22, 16], [13, 13, 38]),  # close to the paper's example
    ([32, 0, 32], [0, 64, 0]),  # disjoint supports: every draft is rejected
    ([10, 20, 34], [10, 20, 34]),  # identical: every draft is accepted
    ([64, 0, 0], [16, 16, 32]),  # one-hot target
    ([20, 12, 12, 20], [8, 40, 8, 8]),
]


def test_implementation_enumerated_exactly_matches_the_target() -> None:
    """Every cell of the uniforms, run through the real code: the first emitted token has distribution p exactly,
    and the whole round's output distribution equals the independent Fraction enumeration in ``theory``."""
    for p_counts, q_counts in DYADIC_PAIRS:
        p, q = _dyadic(p_counts), _dyadic(q_counts)
        for gamma in (1, 2):
            outcomes = _enumerate_round(p, q, gamma)
            assert sum(outcomes.values()) == 1
            first = [F(0)] * len(p)
            for tokens, w in outcomes.items():
                first[tokens[0]] += w
            assert first == p, (p_counts, q_counts, gamma)
            # Whole rounds, token sequence by token sequence, against theory's independent enumeration.
            reference = exact_round_distribution(lambda _c, p=p: p, lambda _c, q=q: q, gamma)
            assert outcomes == reference, (p_counts, q_counts, gamma)


# 3. Seeded Monte Carlo ------------------------------------------------------------------------------------------

TARGET_F = [[float(x) for x in row] for row in TARGET]
DRAFT_F = [[float(x) for x in row] for row in DRAFT]


def _target_next(context: Sequence[int]) -> list[float]:
    return TARGET_F[context[-1]] if context else TARGET_F[-1]


def _draft_next(context: Sequence[int]) -> list[float]:
    return DRAFT_F[context[-1]] if context else DRAFT_F[-1]


def _first_two_tokens(gamma: int, rng: random.Random) -> tuple[int, int]:
    """Run rounds of the real algorithm (draft, one target scoring, verify/correct/bonus) until 2 tokens exist."""
    emitted: list[int] = []
    while len(emitted) < 2:
        tokens, q_rows = draft(_draft_next, emitted, gamma, rng)
        p_rows = [_target_next(emitted + tokens[:i]) for i in range(gamma + 1)]
        emitted += speculative_round(p_rows, q_rows, tokens, rng).tokens
    return emitted[0], emitted[1]


def test_monte_carlo_first_and_second_token_match_target() -> None:
    """n = 40,000 seeded runs per gamma. The first token must follow the target's start row (3 cells), the pair
    the target's joint (9 cells); TV must stay under tv_bound(n, k) = sqrt(k/n)/2 + sqrt(ln(1e9)/(2n)), about
    0.0236 for k = 9 (see _stats.py). The draft alone would be far off: its joint differs from the target's by
    TV 0.96, and the correction step is what closes the gap."""
    n = 40_000
    joint_target = target_prefix_distribution(_markov(TARGET), 2)  # type: ignore[arg-type]
    pairs = [(a, b) for a in range(3) for b in range(3)]
    expected_joint = [float(joint_target.get(pair, 0)) for pair in pairs]
    expected_first = TARGET_F[-1]
    for gamma in (1, 3):
        rng = random.Random(1000 + gamma)
        samples = [_first_two_tokens(gamma, rng) for _ in range(n)]
        first = Counter(a for a, _ in samples)
        joint = Counter(samples)
        tv_first = total_variation(empirical([first[i] for i in range(3)]), expected_first)
        tv_joint = total_variation(empirical([joint[pair] for pair in pairs]), expected_joint)
        assert tv_first <= tv_bound(n, 3), (gamma, tv_first)
        assert tv_joint <= tv_bound(n, 9), (gamma, tv_joint)
    draft_joint = target_prefix_distribution(_markov(DRAFT), 2)  # type: ignore[arg-type]
    assert total_variation([float(draft_joint.get(pair, 0)) for pair in pairs], expected_joint) > 0.3
