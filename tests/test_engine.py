"""The generation engine: exactness over whole generations, counters, truncation, determinism and bad input.

The exact tests enumerate every run of the engine. The engine takes all its randomness from ``rng.random()``,
so a scripted generator can feed it chosen uniforms. With every probability of the toy model below a multiple
of 1/4, and every acceptance ratio p/q and residual CDF a multiple of 1/4 too, each uniform only matters
through which quarter of [0, 1) it falls in. Feeding the midpoints 1/8, 3/8, 5/8, 7/8 (weight 1/4 each), for
every call the engine makes, enumerates all runs with their exact probabilities as Fractions.
"""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from collections.abc import Callable
from fractions import Fraction

import pytest
from _stats import empirical, tv_bound

from specdec_core.distributions import total_variation
from specdec_core.engine import Trace, generate_autoregressive, generate_speculative
from specdec_core.models import FixedModel, MarkovModel, Pair, ngram_pair, quality_pair
from specdec_core.policies import (
    ConfidencePolicy,
    DraftPolicy,
    DynamicPolicy,
    FixedPolicy,
    OraclePolicy,
)

# A context-dependent toy pair over three words, every entry a multiple of 1/4 (see the module docstring).
# Row i is the distribution after token i; START is the row for an empty context. Zeros, a one-hot draft and
# a draft with no mass where the target has most are all in here.
Q4 = Fraction(1, 4)
P_START = [2 * Q4, Q4, Q4]
P_AFTER = [[Q4, Q4, 2 * Q4], [0 * Q4, 2 * Q4, 2 * Q4], [Q4, 3 * Q4, 0 * Q4]]
Q_START = [Q4, Q4, 2 * Q4]
Q_AFTER = [[2 * Q4, 2 * Q4, 0 * Q4], [Q4, Q4, 2 * Q4], [0 * Q4, 4 * Q4, 0 * Q4]]
WORDS = ["sun", "rain", "snow"]


def toy_pair(end_token: int | None = None) -> Pair:
    def floats(rows: list[list[Fraction]]) -> list[list[float]]:
        return [[float(x) for x in row] for row in rows]

    target = MarkovModel(floats(P_AFTER), [float(x) for x in P_START])
    draft = MarkovModel(floats(Q_AFTER), [float(x) for x in Q_START])
    return Pair(target, draft, list(WORDS), end_token, "toy")


def target_joint(length: int) -> dict[tuple[int, ...], Fraction]:
    """Exact probability of every sequence of ``length`` tokens under plain sampling from the target."""
    out: dict[tuple[int, ...], Fraction] = {}
    for seq in itertools.product(range(3), repeat=length):
        prob = Fraction(1)
        previous: int | None = None
        for token in seq:
            prob *= (P_START if previous is None else P_AFTER[previous])[token]
            previous = token
        if prob:
            out[seq] = prob
    return out


class _NeedMore(Exception):
    pass


class ScriptedRandom(random.Random):
    """Returns the given uniforms in order, and stops the run when it needs one more."""

    def __init__(self, script: tuple[float, ...]) -> None:
        super().__init__(0)
        self.script = script
        self.used = 0

    def random(self) -> float:
        if self.used == len(self.script):
            raise _NeedMore
        self.used += 1
        return self.script[self.used - 1]


def enumerate_runs(run: Callable[[random.Random], Trace]) -> dict[tuple[int, ...], Fraction]:
    """Exact distribution of ``run``'s emitted tokens, by depth-first search over quarter cells."""
    cells = [Fraction(2 * k + 1, 8) for k in range(4)]
    result: dict[tuple[int, ...], Fraction] = {}
    stack: list[tuple[Fraction, ...]] = [()]
    while stack:
        prefix = stack.pop()
        rng = ScriptedRandom(tuple(float(u) for u in prefix))
        try:
            trace = run(rng)
        except _NeedMore:
            stack.extend(prefix + (u,) for u in cells)
            continue
        assert rng.used == len(prefix)
        key = tuple(trace.tokens)
        result[key] = result.get(key, Fraction(0)) + Q4 ** len(prefix)
    return result


def test_toy_pair_is_on_the_quarter_grid() -> None:
    # The premise of the exact enumeration: every acceptance ratio below 1 and every residual CDF is a multiple
    # of 1/4, so no threshold falls strictly inside a quarter cell.
    for p, q in zip([P_START, *P_AFTER], [Q_START, *Q_AFTER], strict=True):
        for x in range(3):
            if q[x] > 0 and p[x] < q[x]:
                assert (p[x] / q[x]) % Q4 == 0
        excess = [max(Fraction(0), a - b) for a, b in zip(p, q, strict=True)]
        total = sum(excess)
        if total:
            assert all(sum(excess[: i + 1]) / total % Q4 == 0 for i in range(3))


POLICIES_FOR_ENUMERATION: list[tuple[str, Callable[[], DraftPolicy]]] = [
    ("fixed gamma=1", lambda: FixedPolicy(1)),
    ("fixed gamma=0", lambda: FixedPolicy(0)),
    ("oracle max 2", lambda: OraclePolicy(max_gamma=2)),
    ("confidence tau=.75 max 2", lambda: ConfidencePolicy(0.75, max_gamma=2)),
]


@pytest.mark.parametrize(("label", "make"), POLICIES_FOR_ENUMERATION, ids=[p[0] for p in POLICIES_FOR_ENUMERATION])
def test_first_two_tokens_are_exactly_distributed_as_plain_sampling(
    label: str, make: Callable[[], DraftPolicy]
) -> None:
    """The joint distribution of the first two generated tokens, enumerated over every run, equals the target's
    p(x1) p(x2 | x1) exactly. Two tokens need two rounds whenever the first round rejects its first draft, so
    this covers a rejection followed by a later round, a bonus, and truncation of a round that emits more."""
    pair = toy_pair()
    exact = enumerate_runs(lambda rng: generate_speculative(pair, make(), max_tokens=2, rng=rng))
    assert exact == target_joint(2)


def test_first_two_tokens_with_the_dynamic_policy_are_exact() -> None:
    # Dynamic from gamma = 1: round 1 drafts 1, and round 2 drafts 3 after a full acceptance or 1 otherwise.
    pair = toy_pair()

    def run(rng: random.Random) -> Trace:
        return generate_speculative(pair, DynamicPolicy(initial=1, max_gamma=3), max_tokens=2, rng=rng)

    assert enumerate_runs(run) == target_joint(2)


def test_autoregressive_baseline_is_exact() -> None:
    pair = toy_pair()
    exact = enumerate_runs(lambda rng: generate_autoregressive(pair, max_tokens=3, rng=rng))
    assert exact == target_joint(3)


MC_POLICIES: list[tuple[str, Callable[[], DraftPolicy]]] = [
    ("fixed gamma=3", lambda: FixedPolicy(3)),
    ("dynamic", lambda: DynamicPolicy(initial=2)),
    ("confidence", lambda: ConfidencePolicy(0.75, max_gamma=4)),
    ("oracle", lambda: OraclePolicy(max_gamma=6)),
]


@pytest.mark.parametrize(("label", "make"), MC_POLICIES, ids=[p[0] for p in MC_POLICIES])
def test_monte_carlo_first_three_tokens_match_the_target(label: str, make: Callable[[], DraftPolicy]) -> None:
    """n = 6,000 seeded generations of 3 tokens, one policy object per generation; the empirical joint of the
    first three tokens over k = 27 cells must lie within tv_bound(n, k) = (1/2) sqrt(k/n) + sqrt(ln(1e9)/(2n))
    ~ 0.093 of the exact target joint (see tests/_stats.py: exceeded with probability < 1e-9 by an exact
    engine). A verify without the min, or a bonus where a correction belongs, moves it by ~0.1-0.3 here."""
    pair = toy_pair()
    rng = random.Random(20261129)
    n = 6000
    cells = list(itertools.product(range(3), repeat=3))
    counts: Counter[tuple[int, ...]] = Counter()
    for _ in range(n):
        counts[tuple(generate_speculative(pair, make(), max_tokens=3, rng=rng).tokens)] += 1
    truth = target_joint(3)
    expected = [float(truth.get(c, 0)) for c in cells]
    observed = empirical([counts[c] for c in cells])
    assert total_variation(observed, expected) < tv_bound(n, len(cells))


def test_oracle_round_emits_what_the_fixed_round_emits_on_the_same_draws() -> None:
    # The exactness argument in OraclePolicy, checked draw by draw. The oracle's first round (cap 6) reads
    # d_1, v_1, ..., d_k, v_k (draft and verify uniforms) and a final uniform f. Feed FixedPolicy(6) the same
    # d_i, v_i, fresh ones for the drafts the oracle never made, and the same f: its round must emit the very
    # same tokens, and the oracle must have discarded nothing.
    pair = quality_pair(0.5)
    stopped_early = 0
    for seed in range(200):
        recorder = _Recorder(seed)
        oracle = generate_speculative(pair, OraclePolicy(6), max_tokens=1, rng=recorder).rounds[0]
        *drafting, final = recorder.values
        extra = random.Random(10_000 + seed)
        full = drafting + [extra.random() for _ in range(12 - len(drafting))]
        fixed = generate_speculative(pair, FixedPolicy(6), max_tokens=1, rng=_Script([*full, final])).rounds[0]
        assert fixed.tokens == oracle.tokens and fixed.ended_with == oracle.ended_with
        assert oracle.discarded == 0 and oracle.gamma == min(6, oracle.accepted + 1)
        stopped_early += oracle.gamma < 6
        # Any policy drafting at most 6 tokens on these draws accepts no more than the oracle.
        for gamma in range(1, 7):
            other = generate_speculative(
                pair, FixedPolicy(gamma), max_tokens=1, rng=_Script([*full[: 2 * gamma], final])
            )
            assert other.rounds[0].accepted <= oracle.accepted
    assert stopped_early > 50  # the coupling was exercised where it matters


class _Recorder(random.Random):
    """A seeded generator that remembers every uniform it handed out."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.values: list[float] = []

    def random(self) -> float:
        value = super().random()
        self.values.append(value)
        return value


class _Script(random.Random):
    """Hands out the given uniforms in order; the run must not ask for more."""

    def __init__(self, values: list[float]) -> None:
        super().__init__(0)
        self.values = list(values)

    def random(self) -> float:
        return self.values.pop(0)


# Counters and truncation ---------------------------------------------------------------------------------------


def check_counters(trace: Trace) -> None:
    c = trace.counters
    emitted_events = [e for e in trace.events if e.emitted]
    assert c.emitted == len(trace.tokens) == len(emitted_events)
    assert [e.token for e in emitted_events] == trace.tokens
    assert c.emitted == c.accepted + c.corrections + c.bonuses
    assert sum(len(r.tokens) for r in trace.rounds) == c.emitted + c.truncated
    drafted_accepted = sum(1 for e in trace.events if e.kind == "accepted")
    assert c.drafted == c.draft_steps == drafted_accepted + c.rejected + c.discarded
    assert c.drafted == sum(r.gamma for r in trace.rounds)
    assert c.target_passes == len(trace.rounds)
    assert c.rejected == sum(1 for r in trace.rounds if r.ended_with == "correction")
    assert c.truncated == sum(1 for e in trace.events if not e.emitted and e.kind not in ("rejected", "discarded"))
    # Emitted tokens sit at consecutive positions 0, 1, 2, ...
    assert [e.position for e in emitted_events] == list(range(c.emitted))


@pytest.mark.parametrize("quality", [0.0, 0.4, 0.9, 1.0])
@pytest.mark.parametrize(
    "make",
    [lambda: FixedPolicy(4), lambda: DynamicPolicy(), lambda: ConfidencePolicy(0.3), lambda: OraclePolicy(8)],
    ids=["fixed", "dynamic", "confidence", "oracle"],
)
def test_counters_are_consistent(quality: float, make: Callable[[], DraftPolicy]) -> None:
    pair = quality_pair(quality)
    for seed in range(5):
        trace = generate_speculative(pair, make(), max_tokens=37, rng=random.Random(seed))
        check_counters(trace)
        assert trace.counters.emitted == 37 and trace.stopped == "budget"


def test_perfect_draft_truncates_the_last_round_at_the_budget() -> None:
    # quality 1: q == p, so every draft is accepted. gamma = 4 gives 5 tokens a round: 5, then 2 of the next 5.
    trace = generate_speculative(quality_pair(1.0), FixedPolicy(4), max_tokens=7, rng=random.Random(3))
    c = trace.counters
    assert (c.emitted, c.truncated, c.target_passes, c.drafted) == (7, 3, 2, 8)
    assert (c.accepted, c.bonuses, c.corrections, c.rejected, c.discarded) == (6, 1, 0, 0, 0)
    assert [e.kind for e in trace.events if not e.emitted] == ["accepted", "accepted", "bonus"]
    check_counters(trace)


def end_heavy_pair() -> Pair:
    # Token 2 ("stop") is the end token and likely everywhere, so generations end early and mid-round.
    target = MarkovModel([[0.3, 0.3, 0.4]] * 3, [0.5, 0.3, 0.2])
    draft = MarkovModel([[0.4, 0.4, 0.2]] * 3, [0.4, 0.4, 0.2])
    return Pair(target, draft, ["go", "on", "stop"], end_token=2, name="ends")


def test_generation_stops_right_after_the_end_token() -> None:
    pair = end_heavy_pair()
    ended = 0
    for seed in range(60):
        trace = generate_speculative(pair, FixedPolicy(5), max_tokens=50, rng=random.Random(seed))
        check_counters(trace)
        assert 2 not in trace.tokens[:-1]
        if trace.stopped == "end":
            ended += 1
            assert trace.tokens[-1] == 2
            # Nothing emitted after the end token: whatever the last round produced past it was truncated.
            last = trace.rounds[-1]
            kept_from_last = sum(1 for e in trace.events if e.round == len(trace.rounds) - 1 and e.emitted)
            assert kept_from_last + sum(
                1
                for e in trace.events
                if e.round == len(trace.rounds) - 1 and not e.emitted and e.kind in ("accepted", "correction", "bonus")
            ) == len(last.tokens)
        else:
            assert len(trace.tokens) == 50
    assert ended == 60  # P(no end in 50 tokens) < 0.7**50 per run


def test_end_token_truncation_is_counted() -> None:
    # Find a seeded run whose last round emits the end token before its final token, then check the counts.
    pair = end_heavy_pair()
    for seed in range(200):
        trace = generate_speculative(pair, FixedPolicy(5), max_tokens=50, rng=random.Random(seed))
        if trace.counters.truncated:
            assert trace.stopped == "end"
            assert trace.counters.truncated == len(trace.rounds[-1].tokens) - trace.rounds[-1].tokens.index(2) - 1
            check_counters(trace)
            return
    pytest.fail("no run truncated after an end token in 200 seeds")


def test_autoregressive_also_stops_at_the_end_token() -> None:
    trace = generate_autoregressive(end_heavy_pair(), max_tokens=50, rng=random.Random(1))
    assert trace.stopped == "end" and trace.tokens[-1] == 2
    assert trace.counters.target_passes == trace.counters.emitted == len(trace.tokens)
    assert {e.kind for e in trace.events} == {"plain"}


def test_zero_budget_generates_nothing() -> None:
    for trace in (
        generate_speculative(quality_pair(0.5), FixedPolicy(3), max_tokens=0, rng=random.Random(0)),
        generate_autoregressive(quality_pair(0.5), max_tokens=0, rng=random.Random(0)),
    ):
        assert trace.tokens == [] and trace.counters.target_passes == 0 and trace.tokens_per_pass == 0.0


def test_gamma_zero_is_autoregressive_decoding_token_for_token() -> None:
    # With no drafts a round is one target pass and one bonus drawn with one uniform: the baseline exactly.
    pair = quality_pair(0.3)
    spec = generate_speculative(pair, FixedPolicy(0), max_tokens=40, rng=random.Random(9))
    plain = generate_autoregressive(pair, max_tokens=40, rng=random.Random(9))
    assert spec.tokens == plain.tokens
    assert spec.counters.target_passes == plain.counters.target_passes == 40
    assert spec.counters.bonuses == 40


def test_better_drafts_need_fewer_target_passes() -> None:
    passes = []
    for quality in (0.0, 0.5, 1.0):
        trace = generate_speculative(quality_pair(quality), FixedPolicy(4), max_tokens=400, rng=random.Random(2))
        passes.append(trace.counters.target_passes)
    assert passes[0] > passes[1] > passes[2] == 80


# Determinism and output format ---------------------------------------------------------------------------------


def test_deterministic_when_seeded() -> None:
    pair = quality_pair(0.6)
    first = generate_speculative(pair, DynamicPolicy(), max_tokens=60, rng=random.Random(42)).to_dict()
    again = generate_speculative(pair, DynamicPolicy(), max_tokens=60, rng=random.Random(42)).to_dict()
    other = generate_speculative(pair, DynamicPolicy(), max_tokens=60, rng=random.Random(43)).to_dict()
    assert first == again
    assert first["tokens"] != other["tokens"]


def test_to_dict_is_plain_json() -> None:
    trace = generate_speculative(quality_pair(0.5), OraclePolicy(5), max_tokens=20, rng=random.Random(5))
    data = trace.to_dict()
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    assert data["counters"]["emitted"] == 20 and data["mode"] == "speculative" and data["policy"] == "oracle"
    assert data["events"][0].keys() == {"position", "token", "word", "kind", "round", "emitted"}
    assert data["text"] == quality_pair(0.5).decode(data["tokens"])


def test_ngram_pair_generates_text_with_fewer_target_passes() -> None:
    pair = ngram_pair()
    context = pair.encode("it is a truth")
    trace = generate_speculative(pair, FixedPolicy(3), max_tokens=30, rng=random.Random(7), context=context)
    check_counters(trace)
    assert trace.counters.target_passes < trace.counters.emitted
    assert trace.text == pair.decode(trace.tokens) and trace.text


# Bad input -----------------------------------------------------------------------------------------------------


class _GreedyPolicy(FixedPolicy):
    def start_round(self) -> int:
        return 65


def test_bad_arguments_are_named() -> None:
    pair = quality_pair(0.5)
    with pytest.raises(ValueError, match="max_tokens"):
        generate_speculative(pair, FixedPolicy(2), max_tokens=-1, rng=random.Random(0))
    with pytest.raises(TypeError, match="max_tokens"):
        generate_autoregressive(pair, max_tokens=2.5, rng=random.Random(0))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="rng"):
        generate_speculative(pair, FixedPolicy(2), max_tokens=3, rng=7)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"context\[1\]"):
        generate_speculative(pair, FixedPolicy(2), max_tokens=3, rng=random.Random(0), context=[0, 24])
    with pytest.raises(TypeError, match=r"context\[0\]"):
        generate_autoregressive(pair, max_tokens=3, rng=random.Random(0), context=["the"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="between 0 and 64"):
        generate_speculative(pair, _GreedyPolicy(1), max_tokens=3, rng=random.Random(0))


def test_a_model_returning_a_bad_row_is_reported() -> None:
    good = FixedModel([0.5, 0.5])
    broken = FixedModel.__new__(FixedModel)
    broken.row = [0.5, 0.6]  # bypasses the constructor's check, as a buggy model would
    with pytest.raises(ValueError, match="draft_probs"):
        generate_speculative(Pair(good, broken, ["a", "b"]), FixedPolicy(2), max_tokens=5, rng=random.Random(0))
    with pytest.raises(ValueError, match="target"):
        generate_speculative(Pair(broken, good, ["a", "b"]), FixedPolicy(2), max_tokens=5, rng=random.Random(0))
    with pytest.raises(ValueError, match=r"target\.probs"):
        generate_autoregressive(Pair(broken, good, ["a", "b"]), max_tokens=5, rng=random.Random(0))
