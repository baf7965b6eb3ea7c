"""Draft-length policies on their own, and as the engine runs them."""

from __future__ import annotations

import random

import pytest

from specdec_core.engine import Trace, generate_speculative
from specdec_core.models import MarkovModel, Pair, quality_pair
from specdec_core.policies import (
    ConfidencePolicy,
    DynamicPolicy,
    FixedPolicy,
    OraclePolicy,
    make_policy,
)
from specdec_core.steps import Round


def test_fixed_policy_always_asks_for_gamma() -> None:
    policy = FixedPolicy(3)
    for accepted in (0, 3, 1):
        assert policy.start_round() == 3
        assert policy.keep_drafting(0, [0.01] * 100, None)
        policy.after_round(accepted, 3)
    trace = generate_speculative(quality_pair(0.2), FixedPolicy(3), max_tokens=50, rng=random.Random(0))
    assert {r.gamma for r in trace.rounds} == {3}


def test_gamma_outside_0_to_64_is_refused() -> None:
    with pytest.raises(ValueError, match="gamma must be between 0 and 64"):
        FixedPolicy(65)
    with pytest.raises(ValueError, match="gamma must be between 0 and 64"):
        FixedPolicy(-1)
    with pytest.raises(TypeError, match="gamma"):
        FixedPolicy(2.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_gamma"):
        OraclePolicy(0)
    with pytest.raises(ValueError, match="max_gamma"):
        ConfidencePolicy(0.5, max_gamma=65)
    with pytest.raises(ValueError, match="initial"):
        DynamicPolicy(initial=0)
    with pytest.raises(ValueError, match="tau"):
        ConfidencePolicy(1.5)


def test_after_round_checks_its_report() -> None:
    with pytest.raises(ValueError, match="accepted"):
        FixedPolicy(2).after_round(3, 2)
    with pytest.raises(ValueError, match="drafted"):
        DynamicPolicy().after_round(0, 70)


def test_confidence_stops_after_an_unsure_token() -> None:
    policy = ConfidencePolicy(0.6, max_gamma=5)
    assert policy.start_round() == 5
    assert policy.keep_drafting(0, [0.7, 0.3], None)
    assert not policy.keep_drafting(1, [0.5, 0.5], None)
    assert policy.keep_drafting(2, [0.6, 0.4], None)  # exactly tau still counts as confident


def test_confidence_drafts_at_least_one_token_per_round() -> None:
    # tau = 1: no row of the quality-0.5 draft is one-hot, so every round stops after its first token.
    trace = generate_speculative(quality_pair(0.5), ConfidencePolicy(1.0, 8), max_tokens=40, rng=random.Random(1))
    assert {r.gamma for r in trace.rounds} == {1}
    # tau = 0 never stops early: the cap every round.
    trace = generate_speculative(quality_pair(0.5), ConfidencePolicy(0.0, 6), max_tokens=40, rng=random.Random(1))
    assert {r.gamma for r in trace.rounds} == {6}


def test_confidence_rounds_end_exactly_where_the_draft_became_unsure() -> None:
    # Draft rows: after token 0 the draft is sure (0.9), after token 1 it is not (0.5).
    rows = [[0.9, 0.1], [0.5, 0.5]]
    pair = Pair(MarkovModel(rows, [0.9, 0.1]), MarkovModel(rows, [0.9, 0.1]), ["yes", "no"])
    trace = generate_speculative(pair, ConfidencePolicy(0.8, max_gamma=6), max_tokens=200, rng=random.Random(4))
    for r in trace.rounds:
        # Every drafted token but the last came from a confident row, and the last from an unsure one unless
        # the cap was reached. The row a token was drafted from is set by the token before it.
        q_tops = [max(rows[t][0], rows[t][1]) for t in _previous_tokens(trace, r)]
        assert all(top >= 0.8 for top in q_tops[:-1])
        assert r.gamma == 6 or q_tops[-1] < 0.8


def _previous_tokens(trace: Trace, round_: Round) -> list[int]:
    # The token before each draft: the last token emitted before the round, then the drafts themselves.
    index = trace.rounds.index(round_)
    before = [e.token for e in trace.events if e.emitted and e.round < index]
    drafts = [pos.token for pos in round_.positions]
    first = before[-1] if before else 0  # the start row equals row 0 in this pair
    return [first, *drafts[:-1]]


def test_dynamic_follows_the_transformers_heuristic() -> None:
    policy = DynamicPolicy()
    assert policy.start_round() == 5  # transformers' num_assistant_tokens default for the heuristic schedule
    history = []
    for accepted_all in (True, True, False, False, False, False, False, False, False, True):
        gamma = policy.start_round()
        policy.after_round(gamma if accepted_all else gamma - 1, gamma)
        history.append(policy.start_round())
    assert history == [7, 9, 8, 7, 6, 5, 4, 3, 2, 4]
    floor = DynamicPolicy(initial=1)
    floor.after_round(0, 1)
    assert floor.start_round() == 1
    cap = DynamicPolicy(initial=63, max_gamma=64)
    cap.after_round(63, 63)
    assert cap.start_round() == 64


def test_dynamic_grows_with_a_perfect_draft_and_shrinks_with_a_bad_one() -> None:
    good = generate_speculative(quality_pair(1.0), DynamicPolicy(), max_tokens=100, rng=random.Random(2))
    assert [r.gamma for r in good.rounds][:4] == [5, 7, 9, 11]
    bad = generate_speculative(quality_pair(0.0), DynamicPolicy(), max_tokens=100, rng=random.Random(2))
    assert min(r.gamma for r in bad.rounds[5:]) == 1


def test_oracle_never_discards_and_stops_at_the_first_rejection() -> None:
    trace = generate_speculative(quality_pair(0.4), OraclePolicy(8), max_tokens=300, rng=random.Random(3))
    assert trace.counters.discarded == 0
    for r in trace.rounds:
        outcomes = [pos.outcome for pos in r.positions]
        if r.ended_with == "correction":
            assert outcomes == ["accepted"] * r.accepted + ["rejected"]
        else:
            assert outcomes == ["accepted"] * 8
    assert trace.counters.rejected > 10 and any(r.ended_with == "bonus" for r in trace.rounds)


def test_oracle_needs_the_engine_to_peek() -> None:
    with pytest.raises(ValueError, match="will_accept"):
        OraclePolicy().keep_drafting(0, [1.0], None)


def test_oracle_beats_fixed_gamma_on_drafts_per_emitted_token() -> None:
    # Same cap, same tokens per pass in expectation (see OraclePolicy), but no discarded drafts: over 600
    # tokens at quality 0.4 fixed gamma = 6 discards hundreds of drafts, the oracle none.
    fixed = generate_speculative(quality_pair(0.4), FixedPolicy(6), max_tokens=600, rng=random.Random(8))
    oracle = generate_speculative(quality_pair(0.4), OraclePolicy(6), max_tokens=600, rng=random.Random(8))
    assert oracle.counters.drafted < fixed.counters.drafted
    assert fixed.counters.discarded > 100
    assert oracle.counters.discarded == 0


def test_make_policy_by_name() -> None:
    assert isinstance(make_policy("fixed", gamma=2), FixedPolicy)
    assert isinstance(make_policy("confidence", tau=0.3), ConfidencePolicy)
    assert make_policy("dynamic", gamma=0).start_round() == 1
    assert make_policy("oracle", max_gamma=4).start_round() == 4
    with pytest.raises(ValueError, match="policy"):
        make_policy("greedy")
