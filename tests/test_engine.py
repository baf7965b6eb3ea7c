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
from collections.abc import Callable, Sequence
from fractions import Fraction

import pytest
from _stats import empirical, tv_bound

from specdec_core.distributions import total_variation
from specdec_core.engine import (
    AutoregressiveRun,
    Counters,
    SpeculativeRun,
    Trace,
    generate_autoregressive,
    generate_speculative,
)
from specdec_core.models import FixedModel, MarkovModel, Pair, ngram_pair, quality_pair
from specdec_core.policies import (
    POLICY_NAMES,
    ConfidencePolicy,
    DraftPolicy,
    DynamicPolicy,
    FixedPolicy,
    OraclePolicy,
    make_policy,
)
from specdec_core.steps import Round

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
    this covers a rejection followed by a later round, a bonus, and a last round whose draft the budget cut
    short (one token left: no draft, the bonus alone)."""
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
        oracle = first_round(pair, OraclePolicy(6), recorder)
        *drafting, final = recorder.values
        extra = random.Random(10_000 + seed)
        full = drafting + [extra.random() for _ in range(12 - len(drafting))]
        fixed = first_round(pair, FixedPolicy(6), _Script([*full, final]))
        assert fixed.tokens == oracle.tokens and fixed.ended_with == oracle.ended_with
        assert oracle.discarded == 0 and oracle.gamma == min(6, oracle.accepted + 1)
        stopped_early += oracle.gamma < 6
        # Any policy drafting at most 6 tokens on these draws accepts no more than the oracle.
        for gamma in range(1, 7):
            other = first_round(pair, FixedPolicy(gamma), _Script([*full[: 2 * gamma], final]))
            assert other.accepted <= oracle.accepted
    assert stopped_early > 50  # the coupling was exercised where it matters


def first_round(pair: Pair, policy: DraftPolicy, rng: random.Random) -> Round:
    """The first round of a run whose budget is far away, so that nothing caps its draft."""
    run = SpeculativeRun(pair, policy, max_tokens=100, rng=rng)
    run.advance(1)  # whole rounds until one token is out: exactly one round
    assert len(run.trace.rounds) == 1
    return run.trace.rounds[0]


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


def check_counters(trace: Trace, end_token: int | None = None) -> None:
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
    # The budget caps every draft, so only an end token can leave tokens of a round behind.
    if end_token is None or end_token not in trace.tokens:
        assert c.truncated == 0


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


def test_last_round_drafts_only_what_the_budget_can_use() -> None:
    # quality 1: q == p, so every draft is accepted. gamma = 4 gives 5 tokens in round 1; 2 tokens are left, so
    # round 2 drafts 1 and ends with a bonus: nothing truncated. (Drafting the full gamma there would have cost 3
    # more draft steps, for 3 tokens thrown away at the budget.)
    trace = generate_speculative(quality_pair(1.0), FixedPolicy(4), max_tokens=7, rng=random.Random(3))
    c = trace.counters
    assert [r.gamma for r in trace.rounds] == [4, 1]
    assert (c.emitted, c.truncated, c.target_passes, c.drafted, c.draft_steps) == (7, 0, 2, 5, 5)
    assert (c.accepted, c.bonuses, c.corrections, c.rejected, c.discarded) == (5, 2, 0, 0, 0)
    assert all(e.emitted for e in trace.events)
    check_counters(trace)


@pytest.mark.parametrize("name", POLICY_NAMES)
def test_no_draft_step_is_spent_past_the_budget(name: str) -> None:
    """Every round drafts at most (tokens left - 1), and its policy hears the count it really drafted."""
    pair = quality_pair(0.7)
    capped = 0
    for seed in range(20):
        policy = make_policy(name, gamma=6, tau=0.3, max_gamma=6)
        trace = generate_speculative(pair, policy, max_tokens=23, rng=random.Random(seed))
        emitted = 0
        for r in trace.rounds:
            left = 23 - emitted
            assert r.gamma <= min(6, left - 1)
            capped += left - 1 < 6
            emitted += len(r.tokens)
        assert emitted == 23 and trace.counters.truncated == 0
        check_counters(trace)
    assert capped >= 20  # the budget did cut rounds short: every run ends with fewer than 7 tokens left


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
        check_counters(trace, end_token=2)
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
            check_counters(trace, end_token=2)
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


# Resumable runs ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ngram() -> Pair:
    return ngram_pair()


def _pairs(ngram: Pair) -> dict[str, tuple[Pair, dict[str, object]]]:
    # The n-gram pair ends paragraphs with <end>: restart_at_end keeps the run going across them, as the
    # Tuning page does, and window=2 is all its trigram target reads.
    return {
        "quality": (quality_pair(0.6), {"max_tokens": 180}),
        "ngram": (ngram, {"max_tokens": 150, "restart_at_end": True, "window": 2}),
    }


CHUNKS = [1, 7, 25, 3, 40, 11]


def _run(pair: Pair, name: str, seed: int, options: dict[str, object]) -> SpeculativeRun:
    policy = make_policy(name, gamma=4, tau=0.4, max_gamma=12)
    return SpeculativeRun(pair, policy, rng=random.Random(seed), **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("pair_name", ["quality", "ngram"])
@pytest.mark.parametrize("name", POLICY_NAMES)
def test_chunked_run_equals_one_run(ngram: Pair, pair_name: str, name: str) -> None:
    """Streaming a run in chunks of assorted sizes gives the very trace of one call: tokens, rounds, events,
    counters, text, why it stopped."""
    pair, options = _pairs(ngram)[pair_name]
    whole = _run(pair, name, 5, options)
    whole.advance(10_000)
    streamed = _run(pair, name, 5, options)
    for size in itertools.cycle(CHUNKS):
        if streamed.done:
            break
        out = streamed.advance(size)
        assert out >= min(size, 1) and (out >= size or streamed.done)
    assert streamed.trace == whole.trace
    assert streamed.trace.to_dict() == whole.trace.to_dict()
    assert whole.trace.counters.emitted == options["max_tokens"]
    check_counters(whole.trace, pair.end_token)
    if pair_name == "ngram":  # paragraphs ended and the run went on
        assert pair.end_token in whole.trace.tokens[:-1] and whole.trace.stopped == "budget"


@pytest.mark.parametrize("pair_name", ["quality", "ngram"])
@pytest.mark.parametrize("name", POLICY_NAMES)
def test_snapshot_through_json_restores_the_run(ngram: Pair, pair_name: str, name: str) -> None:
    """run -> snapshot -> json.dumps -> json.loads -> restore -> continue, chunk after chunk, adds up to the
    uninterrupted run. Each restored trace holds only its own chunk, with the whole run's positions and round
    indices; ``totals`` carries the counters."""
    pair, options = _pairs(ngram)[pair_name]
    whole = _run(pair, name, 9, options)
    whole.advance(10_000)
    run = _run(pair, name, 9, options)
    tokens: list[int] = []
    events, rounds = [], []
    sizes = itertools.cycle(CHUNKS)
    while not run.done:
        run = SpeculativeRun.restore(pair, json.loads(json.dumps(run.snapshot(), allow_nan=False)))
        assert run.trace.tokens == [] and run.trace.counters == Counters()
        run.advance(next(sizes))
        tokens += run.trace.tokens
        events += run.trace.events
        rounds += run.trace.rounds
        assert run.trace.text == pair.decode(run.trace.tokens)
        check_counters_of_chunk(run.trace)
    assert tokens == whole.trace.tokens
    assert events == whole.trace.events
    assert rounds == whole.trace.rounds
    assert run.totals == whole.trace.counters
    assert run.trace.stopped == whole.trace.stopped and run.trace.policy == whole.trace.policy
    assert pair.decode(tokens) == whole.trace.text


def check_counters_of_chunk(trace: Trace) -> None:
    """The identities that hold for any stretch of rounds, wherever it starts."""
    c = trace.counters
    assert c.emitted == len(trace.tokens) == sum(e.emitted for e in trace.events)
    assert c.emitted == c.accepted + c.corrections + c.bonuses
    assert sum(len(r.tokens) for r in trace.rounds) == c.emitted + c.truncated
    assert c.drafted == c.draft_steps == sum(r.gamma for r in trace.rounds)
    assert c.target_passes == len(trace.rounds)


def test_streaming_keeps_rounds_whole_unlike_one_call_per_chunk() -> None:
    """The Tuning page used to make one generate_speculative call per 25-token chunk, and each call ended its
    last round at the chunk's edge (over 3,000 n-gram tokens at seed 0 the oracle got 3.18 tokens per target
    pass in chunks against 3.42 in one run). With a perfect draft the arithmetic is exact. The oracle (cap 16)
    emits 17 tokens a round: one run of 600 tokens takes 35 full rounds (595 tokens) and a last one capped at 4
    drafts, 36 target passes; a streamed run in 25-token chunks is the same run. One call per chunk needs 2
    passes per chunk (17, then 8 from a draft the budget caps at 7), 48 in all, and spends no draft step past
    its budget: before the cap, the second round of every chunk drafted 16 and threw 9 tokens away."""
    pair, total, size = quality_pair(1.0), 600, 25
    one = SpeculativeRun(pair, OraclePolicy(16), max_tokens=total, rng=random.Random(0))
    one.advance(total)
    assert [r.gamma for r in one.trace.rounds] == [16] * 35 + [4]
    streamed = SpeculativeRun(pair, OraclePolicy(16), max_tokens=total, rng=random.Random(0))
    while not streamed.done:
        streamed.advance(size)
    assert streamed.trace == one.trace and streamed.trace.tokens_per_pass == total / 36

    policy, rng, passes = OraclePolicy(16), random.Random(0), 0
    for _ in range(total // size):
        trace = generate_speculative(pair, policy, max_tokens=size, rng=rng)
        assert [r.gamma for r in trace.rounds] == [16, 7]
        assert (trace.counters.emitted, trace.counters.drafted, trace.counters.truncated) == (25, 23, 0)
        passes += trace.counters.target_passes
    assert passes == 48


def test_snapshot_holds_no_history_and_stays_small() -> None:
    """With a window the snapshot's size does not grow with the run: the random state (625 ints), the policy,
    ten counters, the budget and at most ``window`` context tokens; no events, rounds or text."""
    pair = quality_pair(0.5)
    run = SpeculativeRun(pair, make_policy("dynamic", gamma=3), max_tokens=5000, rng=random.Random(1), window=1)
    sizes = []
    for _ in range(3):
        run.advance(1000)
        snap = run.snapshot()
        assert set(snap) == {
            "format", "mode", "max_tokens", "window", "restart_at_end", "context", "done", "stopped",
            "counters", "rng", "policy",
        }  # fmt: skip
        assert len(snap["context"]) == 1 and len(snap["rng"][1]) == 625
        sizes.append(len(json.dumps(snap)))
    assert max(sizes) < 9000 and max(sizes) - min(sizes) < 40  # a few digits more in the counters


def test_restored_policy_state_carries_over() -> None:
    # The dynamic schedule resumes from the length it had reached, not from its starting length.
    pair = quality_pair(1.0)  # every round accepts everything, so the schedule climbs +2 a round
    run = SpeculativeRun(pair, make_policy("dynamic", gamma=2, max_gamma=20), max_tokens=200, rng=random.Random(0))
    run.advance(30)
    snap = json.loads(json.dumps(run.snapshot()))
    # Rounds drafted 2, 4, 6, 8, 10 (3 + 5 + 7 + 9 + 11 = 35 tokens >= 30), so the next one drafts 12.
    assert [r.gamma for r in run.trace.rounds] == [2, 4, 6, 8, 10]
    assert snap["policy"] == {"name": "dynamic", "gamma": 2, "max_gamma": 20, "state": {"gamma": 12}}
    rest = SpeculativeRun.restore(pair, snap)
    rest.advance(1)
    assert rest.trace.rounds[0].gamma == 12
    assert rest.trace.policy == run.trace.policy == "dynamic from gamma=2"


def test_restart_at_end_samples_paragraphs_exactly() -> None:
    """With ``restart_at_end`` an end token starts a fresh paragraph from the empty context. Enumerated over
    every run, the first three tokens follow the target's law with that restart, for speculative runs and for
    plain ones. With gamma = 1 a round that accepts the end token as its draft truncates its bonus token, and
    the next round drafts from the empty context: after the end token p is [1/2, 1/4, 1/4], not [1/4, 3/4, 0]."""
    pair = toy_pair(end_token=2)
    law = target_law_with_restarts(3, end=2)
    for policy in (FixedPolicy, OraclePolicy):
        truncated: set[int] = set()
        assert enumerate_runs(_paragraph_run(pair, policy, truncated)) == law
        assert truncated >= {0, 1}  # some runs truncated a bonus after an end token, others did not

    def plain(rng: random.Random) -> Trace:
        run = AutoregressiveRun(pair, max_tokens=3, rng=rng, restart_at_end=True)
        run.advance(3)
        return run.trace

    assert enumerate_runs(plain) == law


def _paragraph_run(pair: Pair, policy: Callable[[int], DraftPolicy], truncated: set[int]) -> Callable[..., Trace]:
    def run(rng: random.Random) -> Trace:
        spec = SpeculativeRun(pair, policy(1), max_tokens=3, rng=rng, restart_at_end=True)
        spec.advance(3)
        assert spec.trace.stopped == "budget"
        truncated.add(spec.trace.counters.truncated)
        return spec.trace

    return run


def target_law_with_restarts(length: int, end: int) -> dict[tuple[int, ...], Fraction]:
    """Exact law of ``length`` tokens of plain sampling in which ``end`` sends the chain back to START."""
    out: dict[tuple[int, ...], Fraction] = {}

    def walk(seq: tuple[int, ...], prob: Fraction, previous: int | None) -> None:
        if len(seq) == length:
            out[seq] = out.get(seq, Fraction(0)) + prob
            return
        row = P_START if previous is None else P_AFTER[previous]
        for token in range(3):
            if row[token]:
                walk(seq + (token,), prob * row[token], None if token == end else token)

    walk((), Fraction(1), None)
    return out


def test_restart_truncates_the_rest_of_the_round_after_an_end_token() -> None:
    pair = end_heavy_pair()
    for seed in range(100):
        run = SpeculativeRun(pair, FixedPolicy(5), max_tokens=40, rng=random.Random(seed), restart_at_end=True)
        run.advance(40)
        if run.trace.counters.truncated and run.trace.tokens.count(2) >= 2:
            check_counters(run.trace, end_token=2)
            assert run.trace.stopped == "budget" and run.trace.counters.emitted == 40
            return
    pytest.fail("no run truncated a round after an end token and went on in 100 seeds")


def test_autoregressive_run_streams_and_restores_like_one_call() -> None:
    pair = quality_pair(0.3)
    whole = generate_autoregressive(pair, max_tokens=50, rng=random.Random(4))
    run = AutoregressiveRun(pair, max_tokens=50, rng=random.Random(4))
    tokens: list[int] = []
    while not run.done:
        run = AutoregressiveRun.restore(pair, json.loads(json.dumps(run.snapshot())))
        run.advance(7)
        tokens += run.trace.tokens
    assert tokens == whole.tokens and run.totals == whole.counters
    assert run.trace.events[0].position == 49 and run.trace.events[0].round == -1


def test_advance_on_a_finished_run_does_nothing() -> None:
    run = SpeculativeRun(end_heavy_pair(), FixedPolicy(3), max_tokens=50, rng=random.Random(2))
    while not run.done:
        run.advance(4)
    before = run.trace.to_dict()
    assert run.advance(10) == 0 and run.trace.to_dict() == before
    rest = SpeculativeRun.restore(end_heavy_pair(), json.loads(json.dumps(run.snapshot())))
    assert rest.done and rest.advance(10) == 0 and rest.trace.stopped == run.trace.stopped


def _good_snapshot() -> dict[str, object]:
    run = SpeculativeRun(quality_pair(0.5), FixedPolicy(3), max_tokens=20, rng=random.Random(0))
    run.advance(5)
    snap: dict[str, object] = json.loads(json.dumps(run.snapshot()))
    return snap


@pytest.mark.parametrize(
    ("change", "error", "match"),
    [
        ({"format": "other/1"}, ValueError, r"snapshot\['format'\]"),
        ({"mode": "autoregressive"}, ValueError, r"snapshot\['mode'\]"),
        ({"policy": None}, TypeError, r"snapshot\['policy'\]"),
        ({"policy": {"name": "fixed", "gamma": 3, "speed": 1}}, ValueError, r"snapshot\['policy'\]"),
        ({"policy": {"name": "dynamic", "gamma": 0}}, ValueError, "gamma"),
        ({"max_tokens": -1}, ValueError, r"snapshot\['max_tokens'\]"),
        ({"max_tokens": 2}, ValueError, r"snapshot\['counters'\]\['emitted'\]"),
        ({"window": 1.5}, TypeError, r"snapshot\['window'\]"),
        ({"done": "no"}, TypeError, r"snapshot\['done'\]"),
        ({"stopped": "tired"}, ValueError, r"snapshot\['stopped'\]"),
        ({"context": [0, 99]}, ValueError, r"snapshot\['context'\]\[1\]"),
        ({"context": "abc"}, TypeError, r"snapshot\['context'\]"),
        ({"counters": {"emitted": 1}}, ValueError, r"snapshot\['counters'\]"),
        ({"rng": [3, [1, 2, 3], None]}, ValueError, r"snapshot\['rng'\]"),
        ({"rng": "seed"}, TypeError, r"snapshot\['rng'\]"),
    ],
)
def test_restore_refuses_a_bad_snapshot(change: dict[str, object], error: type[Exception], match: str) -> None:
    snap = _good_snapshot() | change
    with pytest.raises(error, match=match):
        SpeculativeRun.restore(quality_pair(0.5), snap)


def test_restore_names_missing_keys_and_wrong_types() -> None:
    snap = _good_snapshot()
    del snap["rng"]
    with pytest.raises(ValueError, match=r"missing \['rng'\]"):
        SpeculativeRun.restore(quality_pair(0.5), snap)
    with pytest.raises(TypeError, match="snapshot must be a dict"):
        SpeculativeRun.restore(quality_pair(0.5), [1, 2])  # type: ignore[arg-type]
    bad_count = _good_snapshot()
    bad_count["counters"] = dict(bad_count["counters"], drafted=-2)  # type: ignore[call-overload]
    with pytest.raises(ValueError, match=r"snapshot\['counters'\]\['drafted'\]"):
        SpeculativeRun.restore(quality_pair(0.5), bad_count)


def test_restore_refuses_an_rng_word_past_32_bits() -> None:
    snap = _good_snapshot()
    version, internal, gauss = snap["rng"]  # type: ignore[misc]
    snap["rng"] = [version, [2**80, *internal[1:]], gauss]
    with pytest.raises(ValueError, match=r"snapshot\['rng'\]"):
        SpeculativeRun.restore(quality_pair(0.5), snap)


def test_restore_refuses_counters_that_do_not_add_up() -> None:
    snap = _good_snapshot()
    counters = dict(snap["counters"])  # type: ignore[call-overload]
    counters["emitted"] += 1  # one token more than the rounds accepted, corrected and added as bonuses
    snap["counters"] = counters
    with pytest.raises(ValueError, match="do not add up"):
        SpeculativeRun.restore(quality_pair(0.5), snap)


def test_text_is_decoded_when_read_not_after_every_round() -> None:
    calls: list[int] = []
    pair = quality_pair(0.7)
    decode = pair.decode

    class Counting:
        def __getattr__(self, name: str) -> object:
            return getattr(pair, name)

        def decode(self, ids: Sequence[int]) -> str:
            calls.append(len(ids))
            return decode(ids)

    run = SpeculativeRun(Counting(), FixedPolicy(3), max_tokens=200, rng=random.Random(5))  # type: ignore[arg-type]
    for _ in range(40):
        run.advance(1)
    assert calls == []
    assert run.trace.text == pair.decode(run.trace.tokens)
    assert calls == [len(run.trace.tokens)]


def test_a_policy_without_to_dict_cannot_be_snapshotted() -> None:
    class Plain:
        name, peeks = "plain two", False

        def start_round(self) -> int:
            return 2

        def keep_drafting(self, position: int, q_row: Sequence[float], will_accept: bool | None) -> bool:
            return True

        def after_round(self, accepted: int, drafted: int) -> None:
            pass

    run = SpeculativeRun(quality_pair(0.5), Plain(), max_tokens=10, rng=random.Random(0))
    run.advance(10)
    assert run.trace.counters.emitted == 10
    with pytest.raises(TypeError, match="to_dict"):
        run.snapshot()


def test_run_arguments_are_checked_by_name() -> None:
    pair = quality_pair(0.5)
    with pytest.raises(TypeError, match="window"):
        SpeculativeRun(pair, FixedPolicy(2), max_tokens=3, rng=random.Random(0), window=2.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="window"):
        AutoregressiveRun(pair, max_tokens=3, rng=random.Random(0), window=-1)
    with pytest.raises(TypeError, match="restart_at_end"):
        AutoregressiveRun(pair, max_tokens=3, rng=random.Random(0), restart_at_end=1)  # type: ignore[arg-type]
    run = AutoregressiveRun(pair, max_tokens=3, rng=random.Random(0))
    with pytest.raises(ValueError, match="n must be >= 0"):
        run.advance(-1)
    with pytest.raises(TypeError, match="n must be an int"):
        run.advance(2.0)  # type: ignore[arg-type]
