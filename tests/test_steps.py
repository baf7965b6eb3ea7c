"""The four steps and the round: scenario tests, the worked example, determinism and every bad input."""

from __future__ import annotations

import json
import random

import pytest

from specdec_core.steps import (
    bonus,
    correct,
    draft,
    speculative_round,
    speculative_round_from_uniforms,
    verify,
)

P = [0.4, 0.35, 0.25]
Q = [0.2, 0.2, 0.6]
ONE_HOT = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]


def test_perfect_match_accepts_everything_and_adds_bonus() -> None:
    # Target and draft agree and are one-hot: every ratio is 1, whatever the uniforms.
    rows = [ONE_HOT[0], ONE_HOT[1], ONE_HOT[2], ONE_HOT[1]]
    r = speculative_round(rows, rows[:3], [0, 1, 2], random.Random(1))
    assert (r.tokens, r.accepted, r.ended_with, r.final_token) == ([0, 1, 2, 1], 3, "bonus", 1)
    assert [pos.outcome for pos in r.positions] == ["accepted"] * 3
    assert r.discarded == 0


def test_early_mismatch_discards_the_rest() -> None:
    # The target puts no mass on draft token 2 at position 0: rejected for sure, the two later drafts discarded.
    target = [ONE_HOT[0], ONE_HOT[1], ONE_HOT[2], ONE_HOT[0]]
    drafts = [ONE_HOT[2], ONE_HOT[1], ONE_HOT[2]]
    r = speculative_round(target, drafts, [2, 1, 2], random.Random(3))
    assert (r.tokens, r.accepted, r.ended_with) == ([0], 0, "correction")
    assert [pos.outcome for pos in r.positions] == ["rejected", "discarded", "discarded"]
    assert r.positions[1].u is None and r.discarded == 2


def test_worked_example_rejection_draws_from_the_residual() -> None:
    """p = [.4,.35,.25], q = [.2,.2,.6], draft 2: accept iff u < .25/.6 = 5/12; the residual is [4/7, 3/7, 0]
    so a correction uniform below 4/7 gives token 0 and one above gives token 1, never token 2."""
    rows = [P, [1.0, 0.0, 0.0]]
    accepted = speculative_round_from_uniforms(rows, [Q], [2], [5 / 12 - 1e-9, 0.5])
    assert (accepted.tokens, accepted.ended_with) == ([2, 0], "bonus")
    rejected = speculative_round_from_uniforms(rows, [Q], [2], [5 / 12 + 1e-9, 4 / 7 + 1e-9])
    assert (rejected.tokens, rejected.ended_with) == ([1], "correction")
    pos = rejected.positions[0]
    assert (pos.p, pos.q, pos.outcome) == (0.25, 0.6, "rejected")
    assert pos.ratio == pytest.approx(5 / 12)


def test_draft_token_at_least_as_likely_under_target_is_always_accepted() -> None:
    # p(0) = .4 >= q(0) = .2: ratio 2, clipped to 1, so even u just below 1 accepts.
    r = speculative_round_from_uniforms([P, P], [Q], [0], [0.999999, 0.1])
    assert r.accepted == 1 and r.ended_with == "bonus"


def test_zero_draft_probability_rejects() -> None:
    # A token the draft could not have produced is rejected even though the target likes it.
    assert verify([1.0, 0.0], [0.0, 1.0], 0, 0.0) is False
    r = speculative_round_from_uniforms([[1.0, 0.0], [1.0, 0.0]], [[0.0, 1.0]], [0], [0.0, 0.5])
    assert r.ended_with == "correction" and r.positions[0].ratio == 0.0


def test_gamma_zero_is_plain_sampling_from_the_target() -> None:
    r = speculative_round_from_uniforms([P], [], [], [0.5])
    assert (r.tokens, r.accepted, r.ended_with, r.positions) == ([1], 0, "bonus", [])


def test_correct_and_bonus_sample_their_distributions() -> None:
    assert [correct(P, Q, u) for u in (0.0, 0.57, 0.58, 0.99)] == [0, 0, 1, 1]
    assert [bonus(P, u) for u in (0.0, 0.39, 0.41, 0.76)] == [0, 0, 1, 2]


def test_deterministic_when_seeded() -> None:
    args = ([P, P, P], [Q, Q], [2, 0])
    first = [speculative_round(*args, random.Random(s)).to_dict() for s in range(50)]
    again = [speculative_round(*args, random.Random(s)).to_dict() for s in range(50)]
    assert first == again
    assert len({json.dumps(d) for d in first}) > 1  # the seed does matter


def test_round_uses_gamma_plus_one_uniforms_whatever_happens() -> None:
    # Drawing up front keeps the rng stream aligned across outcomes: the next draw is the same after any round.
    rng_a, rng_b = random.Random(9), random.Random(9)
    speculative_round([ONE_HOT[0]] * 3, [ONE_HOT[1]] * 2, [1, 1], rng_a)  # rejected at once
    speculative_round([ONE_HOT[0]] * 3, [ONE_HOT[0]] * 2, [0, 0], rng_b)  # accepted in full
    assert rng_a.random() == rng_b.random()


def test_round_record_is_json_safe() -> None:
    r = speculative_round_from_uniforms([P, P, P], [Q, Q], [2, 2], [0.9, 0.1, 0.5])
    d = json.loads(json.dumps(r.to_dict(), allow_nan=False))
    assert d["ended_with"] == "correction" and d["positions"][1]["outcome"] == "discarded"
    assert d["discarded"] == 1 and len(d["tokens"]) == d["accepted"] + 1


def test_draft_is_autoregressive() -> None:
    # The draft model sees the tokens drafted so far: this one always repeats the previous token.
    def echo(context: list[int] | tuple[int, ...]) -> list[float]:
        last = context[-1] if context else 0
        return ONE_HOT[last]

    tokens, rows = draft(echo, [2], 4, random.Random(0))
    assert tokens == [2, 2, 2, 2] and rows == [ONE_HOT[2]] * 4


def test_draft_rejects_a_bad_model_output() -> None:
    with pytest.raises(ValueError, match="draft_model output at position 0 must sum to 1"):
        draft(lambda _c: [0.5, 0.6], [], 2, random.Random(0))


@pytest.mark.parametrize(
    ("target", "drafts", "tokens", "error", "message"),
    [
        ([P, P], [Q, Q], [0, 0], ValueError, r"target_probs must have 3 rows \(got 2\)"),
        ([P, P, P], [Q], [0, 0], ValueError, r"draft_probs must have 2 rows \(got 1\)"),
        ([P, P], [[0.5, 0.5]], [0], ValueError, r"draft_probs\[0\] must have 3 entries"),
        ([P, P], [Q], [3], ValueError, r"draft_tokens\[0\] must be a token id in 0..2 \(got 3\)"),
        ([P, P], [Q], [-1], ValueError, r"draft_tokens\[0\] must be a token id"),
        ([P, P], [Q], [1.0], TypeError, r"draft_tokens\[0\] must be an int"),
        ([P, P], [Q], "0", TypeError, r"draft_tokens must be a sequence of ints"),
        ([P, [0.5, -0.1, 0.6]], [Q], [0], ValueError, r"target_probs\[1\]\[1\] must be non-negative"),
        ([P, [0.5, float("nan"), 0.5]], [Q], [0], ValueError, r"target_probs\[1\]\[1\] must be finite"),
        ([P, [0.5, 0.2, 0.2]], [Q], [0], ValueError, r"target_probs\[1\] must sum to 1"),
        ([[], []], [[]], [0], ValueError, r"target_probs\[0\] must not be empty"),
        ([P] * 66, [Q] * 65, [0] * 65, ValueError, r"gamma \(len\(draft_tokens\)\) must be between 0 and 64"),
    ],
)
def test_bad_round_input_names_the_argument(
    target: list[list[float]], drafts: list[list[float]], tokens: list[int], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        speculative_round(target, drafts, tokens, random.Random(0))


def test_rng_must_be_a_random_instance() -> None:
    with pytest.raises(TypeError, match=r"rng must be a random\.Random"):
        speculative_round([P, P], [Q], [0], 42)  # type: ignore[arg-type]


def test_uniforms_are_checked() -> None:
    with pytest.raises(ValueError, match=r"uniforms must have gamma \+ 1 = 2 entries"):
        speculative_round_from_uniforms([P, P], [Q], [0], [0.5])
    with pytest.raises(ValueError, match=r"uniforms\[1\] must be in \[0, 1\)"):
        speculative_round_from_uniforms([P, P], [Q], [0], [0.5, 1.5])
