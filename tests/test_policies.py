"""Draft-length policies on their own, and as the engine runs them."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from specdec_core.engine import Trace, generate_speculative
from specdec_core.models import MarkovModel, Pair, quality_pair
from specdec_core.policies import (
    POLICY_NAMES,
    ConfidencePolicy,
    DynamicPolicy,
    FixedPolicy,
    OraclePolicy,
    make_policy,
)
from specdec_core.steps import Round


def budget_caps(trace: Trace, max_tokens: int, cap: int) -> list[int]:
    """Each round's largest allowed draft: the policy's cap, or (tokens left - 1) near the end of the budget."""
    caps, emitted = [], 0
    for r in trace.rounds:
        caps.append(min(cap, max_tokens - emitted - 1))
        emitted += len(r.tokens)
    return caps


def test_fixed_policy_always_asks_for_gamma() -> None:
    policy = FixedPolicy(3)
    for accepted in (0, 3, 1):
        assert policy.start_round() == 3
        assert policy.keep_drafting(0, [0.01] * 100, None)
        policy.after_round(accepted, 3)
    trace = generate_speculative(quality_pair(0.2), FixedPolicy(3), max_tokens=50, rng=random.Random(0))
    assert [r.gamma for r in trace.rounds] == budget_caps(trace, 50, 3)
    assert trace.rounds[0].gamma == 3 and min(budget_caps(trace, 50, 3)) < 3  # the budget cut the end short


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
    # (Only the budget can make it less: with one token left a round drafts nothing.)
    trace = generate_speculative(quality_pair(0.5), ConfidencePolicy(1.0, 8), max_tokens=40, rng=random.Random(1))
    assert [r.gamma for r in trace.rounds] == budget_caps(trace, 40, 1)
    assert {r.gamma for r in trace.rounds[:-1]} == {1} and trace.rounds[-1].gamma in (0, 1)
    # tau = 0 never stops early: the cap every round.
    trace = generate_speculative(quality_pair(0.5), ConfidencePolicy(0.0, 6), max_tokens=40, rng=random.Random(1))
    assert [r.gamma for r in trace.rounds] == budget_caps(trace, 40, 6)
    assert trace.rounds[0].gamma == 6


def test_confidence_rounds_end_exactly_where_the_draft_became_unsure() -> None:
    # Draft rows: after token 0 the draft is sure (0.9), after token 1 it is not (0.5).
    rows = [[0.9, 0.1], [0.5, 0.5]]
    pair = Pair(MarkovModel(rows, [0.9, 0.1]), MarkovModel(rows, [0.9, 0.1]), ["yes", "no"])
    trace = generate_speculative(pair, ConfidencePolicy(0.8, max_gamma=6), max_tokens=200, rng=random.Random(4))
    for r, cap in zip(trace.rounds, budget_caps(trace, 200, 6), strict=True):
        # Every drafted token but the last came from a confident row, and the last from an unsure one unless
        # the cap (the policy's, or the budget's in the last rounds) was reached. The row a token was drafted
        # from is set by the token before it.
        if r.gamma == 0:
            assert cap == 0
            continue
        q_tops = [max(rows[t][0], rows[t][1]) for t in _previous_tokens(trace, r)]
        assert all(top >= 0.8 for top in q_tops[:-1])
        assert r.gamma == cap or q_tops[-1] < 0.8


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
    for r, cap in zip(trace.rounds, budget_caps(trace, 300, 8), strict=True):
        outcomes = [pos.outcome for pos in r.positions]
        if r.ended_with == "correction":
            assert outcomes == ["accepted"] * r.accepted + ["rejected"]
        else:
            assert outcomes == ["accepted"] * cap
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
    assert make_policy("dynamic", gamma=1).start_round() == 1
    assert make_policy("oracle", max_gamma=4).start_round() == 4
    with pytest.raises(ValueError, match=r"name must be one of fixed, confidence, dynamic, oracle \(got 'greedy'\)"):
        make_policy("greedy")


def test_make_policy_dynamic_refuses_gamma_zero() -> None:
    # It used to become 1 silently: a schedule cannot start from no draft at all.
    with pytest.raises(ValueError, match="gamma must be between 1 and 64 for the dynamic policy"):
        make_policy("dynamic", gamma=0)
    assert make_policy("fixed", gamma=0).start_round() == 0  # fixed gamma = 0 is plain decoding, and allowed


@pytest.mark.parametrize(("gamma", "tau", "max_gamma"), [(4, 0.5, 16), (20, 0.9, 8), (1, 0.0, 1), (0, 1.0, 64)])
def test_make_policy_covers_the_tuning_page(gamma: int, tau: float, max_gamma: int) -> None:
    """What the Tuning page builds from its controls: fixed gamma, confidence tau under the cap, the dynamic
    schedule from gamma within max(max_gamma, gamma) with the length carried between chunks, the oracle."""
    fixed = make_policy("fixed", gamma=gamma, tau=tau, max_gamma=max_gamma)
    assert isinstance(fixed, FixedPolicy) and fixed.gamma == gamma
    confidence = make_policy("confidence", gamma=gamma, tau=tau, max_gamma=max_gamma)
    assert isinstance(confidence, ConfidencePolicy) and (confidence.tau, confidence.max_gamma) == (tau, max_gamma)
    oracle = make_policy("oracle", gamma=gamma, tau=tau, max_gamma=max_gamma)
    assert isinstance(oracle, OraclePolicy) and oracle.max_gamma == max_gamma
    if gamma >= 1:
        dynamic = make_policy("dynamic", gamma=gamma, tau=tau, max_gamma=max_gamma)
        assert isinstance(dynamic, DynamicPolicy)
        assert (dynamic.start_round(), dynamic.max_gamma) == (gamma, max(max_gamma, gamma))
        carried = make_policy("dynamic", gamma=gamma, max_gamma=max_gamma, state={"gamma": 1})
        assert carried.start_round() == 1 and carried.name == dynamic.name


@pytest.mark.parametrize("name", POLICY_NAMES)
def test_make_policy_rebuilds_a_policy_from_to_dict(name: str) -> None:
    """``make_policy(**policy.to_dict())`` gives back the same policy, mid-run state included."""
    policy = make_policy(name, gamma=3, tau=0.25, max_gamma=9)
    policy.after_round(3, 3)  # moves the dynamic schedule to 5; the others keep no state
    rebuilt = make_policy(**policy.to_dict())
    assert type(rebuilt) is type(policy) and rebuilt.name == policy.name
    assert rebuilt.to_dict() == policy.to_dict()
    assert rebuilt.start_round() == policy.start_round() == {"fixed": 3, "dynamic": 5}.get(name, 9)


def test_make_policy_checks_the_state() -> None:
    with pytest.raises(ValueError, match=r"state has keys the fixed policy does not keep: \['gamma'\]"):
        make_policy("fixed", state={"gamma": 3})
    with pytest.raises(ValueError, match=r"state\['gamma'\] must be between 1 and 16"):
        make_policy("dynamic", gamma=4, state={"gamma": 17})
    with pytest.raises(TypeError, match=r"state\['gamma'\] must be an int"):
        make_policy("dynamic", gamma=4, state={"gamma": 2.0})
    with pytest.raises(TypeError, match="state must be a mapping"):
        make_policy("dynamic", state=[4])  # type: ignore[arg-type]


WRONG_TYPES = [
    (lambda: FixedPolicy("3"), "gamma"),  # type: ignore[arg-type]
    (lambda: ConfidencePolicy("0.5"), "tau"),  # type: ignore[arg-type]
    (lambda: ConfidencePolicy(True), "tau"),
    (lambda: ConfidencePolicy(0.5, max_gamma=2.0), "max_gamma"),  # type: ignore[arg-type]
    (lambda: DynamicPolicy(initial=2.0), "initial"),  # type: ignore[arg-type]
    (lambda: DynamicPolicy(max_gamma="8"), "max_gamma"),  # type: ignore[arg-type]
    (lambda: DynamicPolicy(current=2.5), "current"),  # type: ignore[arg-type]
    (lambda: OraclePolicy(1.5), "max_gamma"),  # type: ignore[arg-type]
    (lambda: FixedPolicy(2).after_round(1.0, 2), "accepted"),  # type: ignore[arg-type]
    (lambda: DynamicPolicy().after_round(1, 2.0), "drafted"),  # type: ignore[arg-type]
    (lambda: make_policy(3), "name"),  # type: ignore[arg-type]
    (lambda: make_policy("fixed", gamma=2.0), "gamma"),  # type: ignore[arg-type]
    (lambda: make_policy("confidence", tau="high"), "tau"),  # type: ignore[arg-type]
    (lambda: make_policy("oracle", max_gamma=None), "max_gamma"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("build", "argument"), WRONG_TYPES, ids=[f"{i}-{a}" for i, (_, a) in enumerate(WRONG_TYPES)])
def test_a_wrong_type_raises_type_error_naming_the_argument(build: Callable[[], object], argument: str) -> None:
    with pytest.raises(TypeError, match=rf"^{argument} must be"):
        build()


def test_wrong_values_raise_value_error_naming_the_argument() -> None:
    with pytest.raises(ValueError, match="tau"):
        ConfidencePolicy(float("nan"))
    with pytest.raises(ValueError, match="current"):
        DynamicPolicy(initial=2, max_gamma=8, current=9)
    with pytest.raises(ValueError, match="max_gamma"):
        make_policy("oracle", max_gamma=0)
    with pytest.raises(ValueError, match="will_accept"):
        OraclePolicy().keep_drafting(0, [1.0], None)
