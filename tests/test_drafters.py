"""The drafters through the engine: the three lossless ones are exact, typical acceptance is not.

Exact enumeration of the *engine* (``_enumerate``): the engine takes every random number from ``rng.random()``,
and its output is a piecewise-constant function of those uniforms. We hand it probes, floats that record every
threshold they are compared with (``u < t`` in sampling, ``u * q < p`` in verification, so t = p / q). A run at
the midpoints of a box of cells is valid for the whole box when no recorded threshold falls strictly inside its
cell; otherwise that cell is split at the threshold and both halves are run again. Each finished box adds its exact
volume (a Fraction) to the tokens it emitted. Thresholds are recovered as rationals with
``Fraction(x).limit_denominator(10**6)``: every model row below has a denominator of at most 2**10 and every
threshold the algorithm computes from them a denominator below 10**6, while the floats carry errors near 1e-16,
far below the 1 / (2 * 10**12) that could make ``limit_denominator`` pick a wrong fraction.

Monte Carlo: tolerances from ``tests/_stats.py`` (``tv_bound(n, k)``, exceeded with probability < 1e-9 by an exact
sampler), stated with n in each docstring.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import pytest
from _stats import empirical, tv_bound

from specdec_core.distributions import total_variation
from specdec_core.drafters import (
    LOSSLESS,
    IndependentHeadsDrafter,
    ModelDrafter,
    PromptLookupDrafter,
    entropy,
    lookup_continuation,
    typical_output_distribution,
    typical_round_from_uniforms,
    typical_rule,
    typical_threshold,
)
from specdec_core.engine import Drafter, SpeculativeRun, Trace, generate_speculative
from specdec_core.models import MarkovModel, Pair, ngram_pair
from specdec_core.policies import FixedPolicy

F = Fraction
# A three-word Markov target and a Markov draft that disagrees with it, every entry a multiple of 1/8. Row i is
# the distribution after token i; START is the row for an empty context. A zero, a one-hot row and a draft with
# no mass where the target has most are in here.
P_START = [F(1, 2), F(1, 4), F(1, 4)]
P_AFTER = [[F(1, 8), F(3, 8), F(1, 2)], [F(5, 8), F(0), F(3, 8)], [F(1, 4), F(5, 8), F(1, 8)]]
Q_START = [F(1, 4), F(1, 4), F(1, 2)]
Q_AFTER = [[F(1, 2), F(1, 2), F(0)], [F(1, 8), F(5, 8), F(1, 4)], [F(0), F(1), F(0)]]


def _floats(rows: Sequence[Sequence[Fraction]]) -> list[list[float]]:
    return [[float(x) for x in row] for row in rows]


def toy_pair() -> Pair:
    target = MarkovModel(_floats(P_AFTER), [float(x) for x in P_START])
    draft = MarkovModel(_floats(Q_AFTER), [float(x) for x in Q_START])
    return Pair(target, draft, ["sun", "rain", "snow"], None, "toy")


def target_law(prompt: Sequence[int], length: int) -> dict[tuple[int, ...], Fraction]:
    """Exact law of the next ``length`` tokens after ``prompt`` under plain sampling from the target."""
    out: dict[tuple[int, ...], Fraction] = {}
    for seq in itertools.product(range(3), repeat=length):
        prob, last = F(1), (prompt[-1] if prompt else None)
        for token in seq:
            prob *= (P_START if last is None else P_AFTER[last])[token]
            last = token
        if prob:
            out[seq] = prob
    return out


# The enumerator ----------------------------------------------------------------------------------------------------


def _rational(x: float) -> Fraction:
    return Fraction(x).limit_denominator(10**6)


class _Probe(float):
    """A uniform that records every threshold it is compared with, as (uniform index, exact threshold)."""

    index: int
    log: list[tuple[int, Fraction]]

    def __new__(cls, value: float, index: int, log: list[tuple[int, Fraction]]) -> _Probe:
        probe = float.__new__(cls, value)
        probe.index, probe.log = index, log
        return probe

    def _note(self, t: object) -> None:
        if isinstance(t, int | float):
            self.log.append((self.index, _rational(float(t))))

    def __lt__(self, other: object) -> bool:
        self._note(other)
        return float(self) < other  # type: ignore[operator]

    def __le__(self, other: object) -> bool:
        self._note(other)
        return float(self) <= other  # type: ignore[operator]

    def __gt__(self, other: object) -> bool:
        self._note(other)
        return float(self) > other  # type: ignore[operator]

    def __ge__(self, other: object) -> bool:
        self._note(other)
        return float(self) >= other  # type: ignore[operator]

    def __mul__(self, other: object) -> Any:
        return _Scaled(float(self) * other, self, other)  # type: ignore[operator]

    __rmul__ = __mul__


class _Scaled(float):
    """u * q, which the verifier compares with p: the threshold on u is p / q."""

    def __new__(cls, value: float, probe: _Probe, factor: Any) -> _Scaled:
        scaled = float.__new__(cls, value)
        scaled.probe, scaled.factor = probe, factor  # type: ignore[attr-defined]
        return scaled

    def __lt__(self, other: object) -> bool:
        factor = self.factor  # type: ignore[attr-defined]
        if isinstance(other, float | int) and factor > 0:
            self.probe.log.append((self.probe.index, _rational(float(other)) / _rational(float(factor))))  # type: ignore[attr-defined]
        return float(self) < other  # type: ignore[operator]


class _ProbeRandom(random.Random):
    """Hands out the midpoints of the given cells; a uniform past them gets the whole of [0, 1)."""

    def __init__(self, cells: list[tuple[Fraction, Fraction]]) -> None:
        super().__init__(0)
        self.cells, self.used, self.log = list(cells), 0, []  # type: list[tuple[Fraction, Fraction]], int, list[tuple[int, Fraction]]

    def random(self) -> float:
        if self.used == len(self.cells):
            self.cells.append((F(0), F(1)))
        lo, hi = self.cells[self.used]
        self.used += 1
        return _Probe(float((lo + hi) / 2), self.used - 1, self.log)


def _enumerate(run: Callable[[random.Random], Trace]) -> dict[tuple[int, ...], Fraction]:
    """Exact law of the tokens ``run`` emits, by splitting cells of the uniforms at recorded thresholds."""
    result: dict[tuple[int, ...], Fraction] = {}
    stack: list[list[tuple[Fraction, Fraction]]] = [[]]
    while stack:
        cells = stack.pop()
        rng = _ProbeRandom(cells)
        trace = run(rng)
        split = next(((i, t) for i, t in sorted(rng.log) if rng.cells[i][0] < t < rng.cells[i][1]), None)
        if split is not None:
            i, t = split
            lo, hi = rng.cells[i]
            stack += [rng.cells[:i] + [(lo, t)], rng.cells[:i] + [(t, hi)]]
            continue
        volume = math.prod((hi - lo for lo, hi in rng.cells[: rng.used]), start=F(1))
        key = tuple(trace.tokens)
        result[key] = result.get(key, F(0)) + volume
    return result


def test_the_enumerator_recovers_plain_drafting_exactly() -> None:
    """The enumerator itself, on the engine's default path (the draft model of the pair), must give the target."""
    pair = toy_pair()
    law = _enumerate(lambda rng: generate_speculative(pair, FixedPolicy(2), max_tokens=3, rng=rng, context=[1]))
    assert law == target_law([1], 3)
    assert sum(law.values()) == 1


# Exactness of the lossless drafters ----------------------------------------------------------------------------------

DRAFTERS: dict[str, Callable[[Pair], Drafter]] = {
    "model": lambda pair: ModelDrafter(pair.draft),
    "lookup": lambda pair: PromptLookupDrafter(len(pair.vocab)),
    "heads": lambda pair: IndependentHeadsDrafter(pair.draft),
}
# Prompts: a repeat that lookup copies from ([0, 1, 2, 0, 1]: "0 1" was followed by 2 0 1), one with no match at
# first (lookup drafts nothing until the output repeats a token), and the empty context.
PROMPTS = [[0, 1, 2, 0, 1], [2], []]


@pytest.mark.parametrize("name", sorted(DRAFTERS))
@pytest.mark.parametrize("prompt", PROMPTS, ids=["repeat", "no-match", "empty"])
def test_lossless_drafter_through_the_engine_is_exact(name: str, prompt: list[int]) -> None:
    """Every run of the engine with this drafter, gamma = 2, three tokens, enumerated exactly: the law of the
    three tokens equals the target's p(x1) p(x2 | x1) p(x3 | x2) after the prompt, as Fractions. Three tokens
    take one to three rounds, so this covers second drafts (the heads' two-step marginal, lookup's second
    copied token), rejections, bonuses, and a last round the budget cuts short."""
    assert LOSSLESS[name]
    pair = toy_pair()

    def run(rng: random.Random) -> Trace:
        drafter = DRAFTERS[name](pair)
        return generate_speculative(pair, FixedPolicy(2), max_tokens=3, rng=rng, context=prompt, drafter=drafter)

    assert _enumerate(run) == target_law(prompt, 3)


def test_lookup_really_drafts_on_the_repeat_and_not_without_a_match() -> None:
    # The enumeration above is only a test of lookup if lookup drafts: check what it proposes on each prompt.
    assert lookup_continuation([0, 1, 2, 0, 1], 2) == [2, 0]
    assert lookup_continuation([2], 2) == []
    pair = toy_pair()
    trace = generate_speculative(
        pair, FixedPolicy(2), max_tokens=1, rng=random.Random(0), context=[2], drafter=PromptLookupDrafter(3)
    )
    assert trace.counters.drafted == 0 and trace.counters.target_passes == 1  # no match: one plain pass


def test_heads_marginal_is_the_two_step_chain() -> None:
    """Head 2 after token 1 drafts from sum_v Q(v | 1) Q(x | v), computed here by hand in Fractions."""
    heads = IndependentHeadsDrafter(toy_pair().draft)
    expected = [sum(Q_AFTER[1][v] * Q_AFTER[v][x] for v in range(3)) for x in range(3)]
    assert [_rational(x) for x in heads.row([1], [0])] == expected
    assert heads.row([1], [0]) == heads.row([1], [2])  # the drafts before it are never seen


@pytest.mark.parametrize("name", sorted(DRAFTERS))
def test_monte_carlo_three_tokens_match_the_target(name: str) -> None:
    """n = 3,000 seeded generations of 3 tokens after the prompt [0, 1, 2, 0, 1] with gamma = 3; the empirical
    law over k = 27 cells must lie within tv_bound(n, k) = (1/2) sqrt(27 / 3000) + sqrt(ln(1e9) / 6000) ~ 0.106
    of the exact target law (exceeded with probability < 1e-9 by an exact engine)."""
    pair, prompt, n = toy_pair(), [0, 1, 2, 0, 1], 3000
    rng = random.Random(20261201)
    drafter = DRAFTERS[name](pair)
    counts: Counter[tuple[int, ...]] = Counter()
    for _ in range(n):
        trace = generate_speculative(pair, FixedPolicy(3), max_tokens=3, rng=rng, context=prompt, drafter=drafter)
        counts[tuple(trace.tokens)] += 1
    cells = list(itertools.product(range(3), repeat=3))
    truth = target_law(prompt, 3)
    expected = [float(truth.get(c, 0)) for c in cells]
    assert total_variation(empirical([counts[c] for c in cells]), expected) < tv_bound(n, len(cells))


# Typical acceptance is lossy ---------------------------------------------------------------------------------------


def test_typical_threshold_follows_medusa() -> None:
    # min(epsilon, delta * exp(-H)): H([1/2, 1/4, 1/4]) = 1.5 ln 2, exp(-H) = 2**-1.5 ~ 0.354.
    p = [0.5, 0.25, 0.25]
    assert math.isclose(entropy(p), 1.5 * math.log(2))
    assert math.isclose(typical_threshold(p, 0.5, 0.3), 0.3 * 2**-1.5)
    assert typical_threshold(p, 0.09, 0.3) == 0.09


def test_typical_law_through_the_engine_equals_the_closed_form_and_is_not_the_target() -> None:
    """One draft from Q after token 0 (q = [1/2, 1/2, 0]) against p = [1/8, 3/8, 1/2]; epsilon = 0.2,
    delta = 0.9 put the bar at 0.2, so A = {1, 2} and token 0 (p = 1/8) fails. The engine's first token,
    enumerated exactly, is q 1_A + q(not A) p = [1/16, 11/16, 1/4], as ``typical_output_distribution`` says, at
    total-variation distance 5/16 from p."""
    pair, rule = toy_pair(), typical_rule(0.2, 0.9)

    def run(rng: random.Random) -> Trace:
        return generate_speculative(pair, FixedPolicy(1), max_tokens=2, rng=rng, context=[0], rule=rule)

    first: dict[int, Fraction] = {}
    for tokens, prob in _enumerate(run).items():
        first[tokens[0]] = first.get(tokens[0], F(0)) + prob
    law = [first.get(x, F(0)) for x in range(3)]
    assert law == typical_output_distribution(P_AFTER[0], Q_AFTER[0], 0.2, 0.9) == [F(1, 16), F(11, 16), F(1, 4)]
    assert sum(abs(a - b) for a, b in zip(law, P_AFTER[0], strict=True)) / 2 == F(5, 16)


def test_typical_is_exact_only_when_theory_says_so() -> None:
    # q = p and every token clears the bar: out = p, distance 0. q = p but a token fails the bar: out differs.
    p = [F(1, 2), F(1, 4), F(1, 4)]
    assert typical_output_distribution(p, p, 0.09, 0.3) == p
    p_low = [F(3, 4), F(3, 16), F(1, 16)]  # H ~ 0.68 nats, bar min(0.1, 0.3 * 0.51) = 0.1: token 2 fails
    out = typical_output_distribution(p_low, p_low, 0.1, 0.3)
    assert out != p_low and out[2] == F(1, 16) * F(1, 16)


def test_monte_carlo_typical_distance_is_above_noise() -> None:
    """n = 4,000 seeded runs of the setting of the enumeration test (exact distance 5/16 = 0.3125). The empirical
    law of the first token is within tv_bound(n, 3) = (1/2) sqrt(3 / 4000) + sqrt(ln(1e9) / 8000) ~ 0.065 of the
    true (typical) law, except with probability < 1e-9; so its distance from p is at least 0.3125 - 0.065 > 0.24,
    far above the noise an exact sampler would show, and within 0.065 of 5/16."""
    pair, rule, n = toy_pair(), typical_rule(0.2, 0.9), 4000
    rng = random.Random(7)
    counts = [0, 0, 0]
    for _ in range(n):
        trace = generate_speculative(pair, FixedPolicy(1), max_tokens=2, rng=rng, context=[0], rule=rule)
        counts[trace.tokens[0]] += 1
    bound = tv_bound(n, 3)
    distance = total_variation(empirical(counts), _floats([P_AFTER[0]])[0])
    assert 5 / 16 - bound > bound  # the test can tell lossy from exact at this n
    assert abs(distance - 5 / 16) < bound


def test_typical_accepts_more_than_exact_on_the_ngram_pair() -> None:
    """The reason anyone uses it, on the page's pair and knobs (epsilon = 0.01, delta = 0.02): 20 continuations
    of 16 tokens, the same seed for both rules; typical acceptance keeps more of the drafts."""
    pair = ngram_pair()
    prompt = pair.encode("Mr. Bennet was among the earliest of those who waited on Mr. Bingley.")
    rates = []
    for rule in (None, typical_rule(0.01, 0.02)):
        rng, accepted, drafted = random.Random(3), 0, 0
        for _ in range(20):
            run = SpeculativeRun(pair, FixedPolicy(4), max_tokens=16, rng=rng, context=prompt, rule=rule)
            run.advance(16)
            accepted, drafted = accepted + run.trace.counters.accepted, drafted + run.trace.counters.drafted
        rates.append(accepted / drafted)
    assert rates[1] > rates[0] + 0.05


def test_typical_round_records_like_the_exact_round() -> None:
    r = typical_round_from_uniforms(
        [[0.5, 0.5], [0.9, 0.1], [1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [0, 1], [0.1, 0.2, 0.3]
    )
    # p(0) = .5 passes the bar; p(1) = .1 > min(.09, .3 exp(-H(.9, .1))) = .09 passes too: both accepted, bonus 0.
    assert (r.accepted, r.ended_with, r.tokens) == (2, "bonus", [0, 1, 0])
    r = typical_round_from_uniforms(
        [[0.5, 0.5], [0.95, 0.05], [1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [0, 1], [0.1, 0.2, 0.3]
    )
    assert (r.accepted, r.ended_with, r.tokens) == (1, "correction", [0, 0])  # 0.05 fails; the fix comes from p


# Bad input ----------------------------------------------------------------------------------------------------------


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="context_size"):
        IndependentHeadsDrafter(ngram_pair().target)  # a trigram: its row depends on two tokens
    with pytest.raises(TypeError, match="vocab_size"):
        PromptLookupDrafter(3.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="min_ngram"):
        PromptLookupDrafter(3, max_ngram=1, min_ngram=2)
    with pytest.raises(ValueError, match="epsilon"):
        typical_rule(epsilon=1.5)
    with pytest.raises(TypeError, match="delta"):
        typical_rule(delta="0.3")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="drafter"):
        SpeculativeRun(toy_pair(), FixedPolicy(1), max_tokens=1, rng=random.Random(0), drafter=object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="steps"):
        IndependentHeadsDrafter(toy_pair().draft).marginal([0], 0)
