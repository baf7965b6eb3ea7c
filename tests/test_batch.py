"""The numpy batch engine: scenarios, bad input, exactness in distribution, and agreement with the scalar engine.

Statistical tests are seeded, so they are deterministic; their tolerances are still derived from the sample size
(stated in each docstring) so that a correct engine would pass them with overwhelming probability for any seed.
"""

from __future__ import annotations

import inspect
import math
import random
from typing import Any

import numpy as np
import pytest

from specdec_core import batch, steps, theory
from specdec_core.batch import (
    MAX_GAMMA,
    SimulationCounts,
    simulate,
    speculative_round,
    speculative_round_from_uniforms,
)

pytestmark = pytest.mark.numpy

# The paper's worked example: beta = sum min(p, q) = .65, residual [4/7, 3/7, 0].
P = np.array([0.4, 0.35, 0.25])
Q = np.array([0.2, 0.2, 0.6])


def _one_hot(token: int, vocab: int) -> np.ndarray[Any, np.dtype[np.float64]]:
    row = np.zeros(vocab)
    row[token] = 1.0
    return row


def _random_rows(rng: np.random.Generator, shape: tuple[int, ...], vocab: int, concentration: float = 0.5) -> Any:
    """Dirichlet rows: with a small concentration many entries are tiny, so acceptance varies widely."""
    return rng.dirichlet(np.full(vocab, concentration), size=shape)


def _random_batch(
    seed: int, batch: int, gamma: int, vocab: int
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    rng = np.random.default_rng(seed)
    target = _random_rows(rng, (batch, gamma + 1), vocab)  # [B, gamma + 1, V]
    draft = _random_rows(rng, (batch, gamma), vocab)  # [B, gamma, V]
    # Draft tokens drawn from the draft rows, as a real draft model would propose them.
    cdf = np.cumsum(draft, axis=-1)  # [B, gamma, V]
    u = rng.random((batch, gamma, 1)) * cdf[..., -1:]  # [B, gamma, 1]
    tokens = np.minimum((cdf <= u).sum(axis=-1), vocab - 1)  # [B, gamma]
    return target, draft, tokens


def _five_sigma(count: int | np.integer[Any], n: int, prob: float) -> bool:
    """|count - n prob| within 5 binomial standard deviations (plus 1 for the discreteness of counts)."""
    return abs(float(count) - n * prob) <= 5.0 * math.sqrt(n * prob * (1.0 - prob)) + 1.0


# Scenarios ---------------------------------------------------------------------------------------------------


def test_perfect_match() -> None:
    """When draft and target agree, u * q < p is u < 1: every draft is accepted and a bonus follows."""
    target, _, _ = _random_batch(1, 32, 4, 10)
    draft = target[:, :4].copy()  # [B, gamma, V]: the draft is the target
    tokens = draft.argmax(axis=-1)  # [B, gamma]: a token the draft gives positive probability
    out = speculative_round(target, draft, tokens, np.random.default_rng(0))
    assert out.shape == (32, 5) and out.dtype == np.int64
    np.testing.assert_array_equal(out[:, :4], tokens)
    bonus = out[:, 4]
    assert (target[np.arange(32), 4, bonus] > 0).all()


def test_early_mismatch() -> None:
    """The target puts all its mass on token 0; the draft proposed token 1 first: rejected at position 0,
    corrected to 0 (the residual max(0, p - q) is one-hot at 0), and the rest padded with -1."""
    vocab = 4
    target = np.stack([_one_hot(0, vocab), _one_hot(2, vocab), _one_hot(3, vocab)])[None]  # [1, 3, V]
    draft = np.stack([_one_hot(1, vocab), _one_hot(2, vocab)])[None]  # [1, 2, V]
    out = speculative_round(target, draft, np.array([[1, 2]]), np.random.default_rng(0))
    np.testing.assert_array_equal(out, [[0, -1, -1]])


def test_mismatch_in_the_middle_keeps_the_accepted_prefix() -> None:
    vocab = 5
    target = np.stack([_one_hot(1, vocab), _one_hot(4, vocab), _one_hot(0, vocab), _one_hot(0, vocab)])[None]
    draft = np.stack([_one_hot(1, vocab), _one_hot(2, vocab), _one_hot(0, vocab)])[None]  # [1, 3, V]
    out = speculative_round(target, draft, np.array([[1, 2, 0]]), np.random.default_rng(0))
    np.testing.assert_array_equal(out, [[1, 4, -1, -1]])


def test_all_accepted_adds_bonus() -> None:
    vocab = 6
    target = np.stack([_one_hot(2, vocab), _one_hot(5, vocab), _one_hot(3, vocab)])[None]  # [1, 3, V]
    draft = target[:, :2].copy()  # [1, 2, V]
    out = speculative_round(target, draft, np.array([[2, 5]]), np.random.default_rng(0))
    np.testing.assert_array_equal(out, [[2, 5, 3]])


def test_zero_draft_probability_rejects() -> None:
    """q(x) = 0 at the drafted token rejects even with u = 0, where u * q < p would read 0 < p and accept."""
    target = np.array([[[0.5, 0.5], [0.5, 0.5]]])  # [1, 2, V]
    draft = np.array([[[1.0, 0.0]]])  # [1, 1, V]: token 1 has draft probability 0
    out = speculative_round_from_uniforms(target, draft, np.array([[1]]), np.array([[0.0, 0.75]]))
    # Rejected; the residual max(0, p - q) = [0, .5] puts all mass on token 1.
    np.testing.assert_array_equal(out, [[1, -1]])


def test_rejection_without_residual_mass_corrects_from_the_target() -> None:
    """p == q, and the draft token has q(x) = 0, so it is rejected; max(0, p - q) is all zero, and the correction
    comes from p itself (as ``distributions.residual`` returns p when p == q): u = .75 gives token 1, never 2."""
    row = np.array([0.5, 0.5, 0.0])
    target = np.stack([row, row])[None]  # [1, 2, V]
    out = speculative_round_from_uniforms(target, row[None, None], np.array([[2]]), np.array([[0.0, 0.75]]))
    np.testing.assert_array_equal(out, [[1, -1]])


def test_paper_worked_example_corrects_from_the_residual() -> None:
    """p = [.4, .35, .25], q = [.2, .2, .6], draft token 2: p/q = .25/.6 ~ .417, so u = .9 rejects it and the
    correction comes from [4/7, 3/7, 0]: u = .5 < 4/7 gives token 0, u = .6 > 4/7 gives token 1."""
    target = np.stack([P, _one_hot(0, 3)])[None]  # [1, 2, V]
    draft = Q[None, None]  # [1, 1, V]
    tokens = np.array([[2]])
    both = np.array([[0.9, 0.5], [0.9, 0.6], [0.4, 0.6]])  # the last row accepts (.4 < .417), then a bonus
    outs = [speculative_round_from_uniforms(target, draft, tokens, u[None]) for u in both]
    assert [o.tolist()[0] for o in outs] == [[0, -1], [1, -1], [2, 0]]


def test_deterministic_when_seeded() -> None:
    target, draft, tokens = _random_batch(2, 128, 4, 50)
    first = speculative_round(target, draft, tokens, np.random.default_rng(123))
    again = speculative_round(target, draft, tokens, np.random.default_rng(123))
    other = speculative_round(target, draft, tokens, np.random.default_rng(124))
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_output_layout_accepted_then_one_final_token_then_padding() -> None:
    """Every row is: a prefix equal to the drafts, one token >= 0 that is not padding, then -1 to the end."""
    batch, gamma = 500, 5
    target, draft, tokens = _random_batch(3, batch, gamma, 20)
    out = speculative_round(target, draft, tokens, np.random.default_rng(4))
    emitted = (out >= 0).sum(axis=1)  # [B]
    assert set(np.unique(emitted)) > {1, gamma + 1}  # the sample covers short and full rounds
    for row, draft_row, n in zip(out, tokens, emitted, strict=True):
        assert (row[: n - 1] == draft_row[: n - 1]).all()
        assert (row[n:] == -1).all() and row[n - 1] >= 0


def test_never_emits_a_zero_probability_token() -> None:
    """Zeros scattered over a vocabulary of several sampling blocks, and uniforms up to the largest double
    below 1: every correction and bonus token still has positive probability in its row."""
    rng = np.random.default_rng(5)
    batch, gamma, vocab = 400, 2, 700
    target = rng.random((batch, gamma + 1, vocab)) * (rng.random((batch, gamma + 1, vocab)) < 0.05)
    target[..., 650:] = 0.0  # a whole empty tail, so u near 1 must fall back to an earlier token
    target[..., 3] += 1e-3  # no empty row
    target /= target.sum(axis=-1, keepdims=True)
    draft = rng.dirichlet(np.ones(vocab), size=(batch, gamma))  # [B, gamma, V]
    tokens = rng.integers(0, vocab, size=(batch, gamma))  # [B, gamma]
    uniforms = rng.random((batch, gamma + 1))  # [B, gamma + 1]
    uniforms[::2, gamma] = np.nextafter(1.0, 0.0)
    out = speculative_round_from_uniforms(target, draft, tokens, uniforms)
    accepted = (out >= 0).sum(axis=1) - 1  # [B]
    final = out[np.arange(batch), accepted]  # [B]
    rows = target[np.arange(batch), accepted]  # [B, V]
    residual_or_p = np.where(
        (accepted < gamma)[:, None],
        np.maximum(rows - draft[np.arange(batch), np.minimum(accepted, gamma - 1)], 0.0),
        rows,
    )
    assert (residual_or_p[np.arange(batch), final] > 0).all()


def test_final_token_is_inverse_cdf_of_the_row() -> None:
    """With gamma = 0 the round is one bonus draw from target row 0: it must be the first token whose running
    sum exceeds u, the textbook inverse CDF, across a vocabulary that spans several sampling blocks."""
    rng = np.random.default_rng(6)
    batch, vocab = 2000, 1000
    target = rng.dirichlet(np.full(vocab, 0.3), size=(batch, 1))  # [B, 1, V]
    uniforms = rng.random((batch, 1))  # [B, 1]
    out = speculative_round_from_uniforms(target, np.zeros((batch, 0, vocab)), np.zeros((batch, 0), int), uniforms)
    cdf = np.cumsum(target[:, 0], axis=1)  # [B, V]
    expected = (cdf <= uniforms * cdf[:, -1:]).sum(axis=1)  # [B]
    np.testing.assert_array_equal(out[:, 0], expected)


@pytest.mark.parametrize(
    ("vocab", "mass", "uniform", "token"),
    [
        (4, [1, 3], 0.0, 1),  # u = 0 skips the leading zero-probability token
        (4, [1, 3], 0.5, 3),  # u exactly on a running sum moves past it and past the zero after it
        (600, [300, 599], 0.0, 300),  # the same across the sampling blocks of a large vocabulary
        (600, [300, 599], 0.5, 599),
        (600, [255, 256], 0.5, 256),  # mass on both sides of a block boundary
    ],
)
def test_inverse_cdf_boundaries(vocab: int, mass: list[int], uniform: float, token: int) -> None:
    """The token is the first whose running sum exceeds u: a uniform equal to a running sum is past it."""
    row = np.zeros(vocab)
    row[mass] = 0.5
    out = speculative_round_from_uniforms(
        row[None, None], np.zeros((1, 0, vocab)), np.zeros((1, 0), int), np.array([[uniform]])
    )
    assert out.tolist() == [[token]]


def test_matches_the_scalar_engine_on_the_same_uniforms() -> None:
    """Both engines read the uniforms in the same order (gamma verify, then one final), so they agree token for
    token; only a uniform landing within rounding error of an inverse-CDF boundary could split them."""
    batch, gamma, vocab = 300, 3, 9
    target, draft, tokens = _random_batch(7, batch, gamma, vocab)
    uniforms = np.random.default_rng(8).random((batch, gamma + 1))
    out = speculative_round_from_uniforms(target, draft, tokens, uniforms)
    for b in range(batch):
        scalar = steps.speculative_round_from_uniforms(
            target[b].tolist(), draft[b].tolist(), tokens[b].tolist(), uniforms[b].tolist()
        )
        assert out[b][out[b] >= 0].tolist() == scalar.tokens


def test_gamma_zero_is_one_bonus_token() -> None:
    target = np.tile(P, (3, 1, 1))  # [3, 1, V]
    out = speculative_round_from_uniforms(
        target, np.zeros((3, 0, 3)), np.zeros((3, 0), dtype=np.int64), np.array([[0.1], [0.5], [0.9]])
    )
    np.testing.assert_array_equal(out, [[0], [1], [2]])


def test_empty_batch_gives_an_empty_result() -> None:
    out = speculative_round(np.zeros((0, 3, 4)), np.zeros((0, 2, 4)), np.zeros((0, 2), int), np.random.default_rng())
    assert out.shape == (0, 3) and out.dtype == np.int64


def test_discarded_positions_are_never_read() -> None:
    """Draft rows after the first rejection belong to discarded drafts: filling them with NaN (row checks off)
    changes nothing, so no residual or ratio is computed there."""
    batch, gamma = 200, 4
    target, draft, tokens = _random_batch(9, batch, gamma, 12)
    uniforms = np.random.default_rng(10).random((batch, gamma + 1))
    clean = speculative_round_from_uniforms(target, draft, tokens, uniforms)
    accepted = (clean >= 0).sum(axis=1) - 1  # [B]
    poisoned = draft.copy()
    after = np.arange(gamma)[None, :] > accepted[:, None]  # [B, gamma]
    assert after.any()
    poisoned[after] = np.nan
    again = speculative_round_from_uniforms(target, poisoned, tokens, uniforms, validate=False)
    np.testing.assert_array_equal(again, clean)


# float32 ------------------------------------------------------------------------------------------------------


def test_float32_rows_give_the_same_tokens_as_float64() -> None:
    """Rows of multiples of 1/64 are exact in both dtypes, so both must produce identical outputs."""
    rng = np.random.default_rng(11)
    batch, gamma, vocab = 300, 3, 8
    target = rng.multinomial(64, np.full(vocab, 1 / vocab), size=(batch, gamma + 1)) / 64.0  # [B, gamma + 1, V]
    draft = rng.multinomial(64, np.full(vocab, 1 / vocab), size=(batch, gamma)) / 64.0  # [B, gamma, V]
    tokens = rng.integers(0, vocab, size=(batch, gamma))
    uniforms = rng.random((batch, gamma + 1))
    out64 = speculative_round_from_uniforms(target, draft, tokens, uniforms)
    out32 = speculative_round_from_uniforms(target.astype(np.float32), draft.astype(np.float32), tokens, uniforms)
    np.testing.assert_array_equal(out32, out64)


def test_float32_rows_within_1e_4_are_accepted() -> None:
    target = np.array([[[0.5, 0.49995]]], dtype=np.float32)  # sums to 1 - 5e-5
    out = speculative_round(target, np.zeros((1, 0, 2), np.float32), np.zeros((1, 0), int), np.random.default_rng())
    assert out.shape == (1, 1)


def test_float32_rows_off_by_more_than_1e_4_are_rejected() -> None:
    target = np.array([[[0.5, 0.4997]]], dtype=np.float32)  # sums to 1 - 3e-4
    with pytest.raises(ValueError, match=r"target_probs rows must sum to 1 within 0.0001"):
        speculative_round(target, np.zeros((1, 0, 2), np.float32), np.zeros((1, 0), int), np.random.default_rng())


def test_float64_rows_are_held_to_1e_9() -> None:
    ok = np.array([[[0.5, 0.5 - 1e-10]]])
    speculative_round(ok, np.zeros((1, 0, 2)), np.zeros((1, 0), int), np.random.default_rng())
    off = np.array([[[0.5, 0.5 - 1e-8]]])
    with pytest.raises(ValueError, match=r"target_probs rows must sum to 1 within 1e-09"):
        speculative_round(off, np.zeros((1, 0, 2)), np.zeros((1, 0), int), np.random.default_rng())


# Bad input ----------------------------------------------------------------------------------------------------


def _good() -> dict[str, Any]:
    return {
        "target_probs": np.tile(P, (2, 3, 1)),  # [B=2, gamma + 1 = 3, V=3]
        "draft_probs": np.tile(Q, (2, 2, 1)),  # [2, 2, 3]
        "draft_tokens": np.array([[0, 2], [1, 1]]),  # [2, 2]
        "rng": np.random.default_rng(0),
    }


def _with(name: str, value: Any) -> dict[str, Any]:
    args = _good()
    args[name] = value
    return args


def _poke(name: str, index: tuple[int, ...], value: float) -> dict[str, Any]:
    args = _good()
    arr = args[name].copy()
    arr[index] = value
    args[name] = arr
    return args


BAD_ROUND_INPUTS = [
    (_poke("target_probs", (1, 2, 0), -0.1), ValueError, r"target_probs must be non-negative"),
    (_poke("draft_probs", (0, 1, 1), -1e-3), ValueError, r"draft_probs must be non-negative"),
    (_poke("target_probs", (0, 0, 0), np.nan), ValueError, r"target_probs must be finite"),
    (_poke("draft_probs", (1, 0, 2), np.inf), ValueError, r"draft_probs must be finite"),
    (_poke("target_probs", (0, 1, 0), -np.inf), ValueError, r"target_probs must be finite"),
    (_poke("target_probs", (1, 1, 0), 0.5), ValueError, r"target_probs rows must sum to 1 .*row \[1, 1\] sums to 1.1"),
    (_poke("draft_probs", (0, 0, 0), 0.3), ValueError, r"draft_probs rows must sum to 1"),
    (_with("target_probs", np.tile(P, (2, 2, 1))), ValueError, r"target_probs must have shape \[B, gamma \+ 1, V\]"),
    (_with("target_probs", np.tile(P, (3, 3, 1))), ValueError, r"target_probs must have shape \[B, gamma \+ 1, V\]"),
    (_with("target_probs", P), ValueError, r"target_probs must have shape \[B, gamma \+ 1, V\]"),
    (_with("draft_probs", np.tile(Q, (2, 3, 1))), ValueError, r"draft_probs must have shape \[B, gamma, V\]"),
    (_with("draft_probs", np.full((2, 2, 4), 0.25)), ValueError, r"draft_probs must have shape \[B, gamma, V\]"),
    (_with("target_probs", np.tile(P, (2, 3, 1)).astype(np.float16)), TypeError, r"target_probs must be a float32"),
    (_with("draft_probs", np.ones((2, 2, 3), dtype=np.int64)), TypeError, r"draft_probs must be a float32"),
    (_with("target_probs", np.zeros((2, 3, 0))), ValueError, r"target_probs must have a non-empty vocabulary"),
    (_with("draft_tokens", np.array([[0, 3], [1, 1]])), ValueError, r"draft_tokens must be token ids in 0\.\.2"),
    (_with("draft_tokens", np.array([[0, -1], [1, 1]])), ValueError, r"draft_tokens must be token ids in 0\.\.2"),
    (_with("draft_tokens", np.array([[0.0, 1.0], [1.0, 1.0]])), TypeError, r"draft_tokens must be an integer array"),
    (
        _with("draft_tokens", np.array([[True, False], [True, True]])),
        TypeError,
        r"draft_tokens must be an integer array",
    ),
    (_with("draft_tokens", np.array([0, 2])), ValueError, r"draft_tokens must have shape \[B, gamma\]"),
    (_with("draft_tokens", np.zeros((2, 65), int)), ValueError, r"gamma must be between 0 and 64"),
    (_with("rng", random.Random(0)), TypeError, r"rng must be a numpy.random.Generator"),
    (_with("rng", np.random.RandomState(0)), TypeError, r"rng must be a numpy.random.Generator"),
    (_with("rng", None), TypeError, r"rng must be a numpy.random.Generator"),
]


@pytest.mark.parametrize(("args", "error", "message"), BAD_ROUND_INPUTS)
def test_bad_round_input_raises_naming_the_argument(args: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        speculative_round(**args)


def test_the_good_input_of_the_bad_input_table_is_good() -> None:
    """The table above changes one thing at a time; this is the baseline it changes."""
    assert speculative_round(**_good()).shape == (2, 3)


def test_validate_false_skips_only_the_row_checks() -> None:
    args = _poke("target_probs", (0, 0, 0), 0.9)  # row sums to 1.5
    speculative_round(**args, validate=False)
    with pytest.raises(ValueError, match=r"target_probs must have shape"):
        speculative_round(**_with("target_probs", np.tile(P, (2, 2, 1))), validate=False)
    with pytest.raises(ValueError, match=r"draft_tokens must be token ids"):
        speculative_round(**_with("draft_tokens", np.array([[0, 3], [1, 1]])), validate=False)


@pytest.mark.parametrize(
    ("uniforms", "error", "message"),
    [
        (np.full((2, 2), 0.5), ValueError, r"uniforms must have shape \[B, gamma \+ 1\] = \[2, 3\]"),
        (np.full((2, 3), 1.0), ValueError, r"uniforms must be in \[0, 1\)"),
        (np.full((2, 3), -0.1), ValueError, r"uniforms must be in \[0, 1\)"),
        (np.full((2, 3), 0.5, dtype=np.float32), TypeError, r"uniforms must be a float64 array"),
    ],
)
def test_bad_uniforms_raise(uniforms: Any, error: type[Exception], message: str) -> None:
    args = _good()
    del args["rng"]
    with pytest.raises(error, match=message):
        speculative_round_from_uniforms(**args, uniforms=uniforms)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"p": np.array([0.5, 0.5, 0.0, 0.0])}, ValueError, r"p and q must have the same length"),
        ({"q": np.array([0.5, 0.6, -0.1])}, ValueError, r"q must be non-negative"),
        ({"p": np.array([0.5, np.nan, 0.5])}, ValueError, r"p must be finite"),
        ({"p": np.array([0.5, 0.4, 0.05])}, ValueError, r"p rows must sum to 1"),
        ({"p": np.zeros(0)}, ValueError, r"p must have a non-empty vocabulary"),
        ({"q": np.full((2, 3), 1 / 3)}, ValueError, r"q must have shape \[V\]"),
        ({"gamma": -1}, ValueError, r"gamma must be between 0 and 64"),
        ({"gamma": MAX_GAMMA + 1}, ValueError, r"gamma must be between 0 and 64"),
        ({"gamma": 2.0}, TypeError, r"gamma must be an int"),
        ({"gamma": True}, TypeError, r"gamma must be an int"),
        ({"rounds": -1}, ValueError, r"rounds must be >= 0"),
        ({"rounds": 10.0}, TypeError, r"rounds must be an int"),
        ({"chunk": 0}, ValueError, r"chunk must be a positive int"),
        ({"chunk": 8.0}, TypeError, r"chunk must be an int"),
        ({"rng": random.Random(0)}, TypeError, r"rng must be a numpy.random.Generator"),
    ],
)
def test_bad_simulate_input_raises_naming_the_argument(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    args: dict[str, Any] = {"p": P, "q": Q, "gamma": 3, "rounds": 10, "rng": np.random.default_rng(0)}
    args.update(kwargs)
    with pytest.raises(error, match=message):
        simulate(**args)


# Exactness in distribution ------------------------------------------------------------------------------------


def test_first_and_second_tokens_of_a_batch_round_follow_the_target() -> None:
    """N = 200,000 rounds of the batch engine with the paper's p and q at every position (gamma = 3).

    The first emitted token must be distributed as p. So must the second, among rounds that accepted their first
    draft (the rest of such a round is a fresh round on i.i.d. positions, with gamma - 1 drafts). Each cell is
    held to 5 binomial standard deviations of its sample size n: with 3 tokens x 2 positions, a correct engine
    fails with probability below 6 x 5.7e-7 (normal approximation), while a bias of 1 percentage point at
    n = 200,000 is about 10 standard deviations (sd = sqrt(.25 * .75 / n) ~ 0.001) and cannot pass.
    """
    n, gamma = 200_000, 3
    rng = np.random.default_rng(12)
    target = np.broadcast_to(P, (n, gamma + 1, 3))  # [N, gamma + 1, V]
    draft = np.broadcast_to(Q, (n, gamma, 3))  # [N, gamma, V]
    tokens = np.minimum(np.searchsorted(np.cumsum(Q), rng.random((n, gamma)), side="right"), 2)  # [N, gamma] from q
    out = speculative_round(target, draft, tokens, rng)
    first = np.bincount(out[:, 0], minlength=3)
    assert first.sum() == n
    for token in range(3):
        assert _five_sigma(first[token], n, P[token]), (token, first)
    went_on = out[:, 1] >= 0  # rounds whose first draft was accepted
    n2 = int(went_on.sum())
    assert _five_sigma(n2, n, 0.65)  # P(first draft accepted) = beta = .65
    second = np.bincount(out[went_on, 1], minlength=3)
    for token in range(3):
        assert _five_sigma(second[token], n2, P[token]), (token, second)


def _alpha(p: Any, q: Any) -> float:
    return float(np.minimum(p, q).sum())


@pytest.mark.parametrize(("seed", "vocab", "gamma"), [(13, 16, 4), (14, 5, 1), (15, 40, 7)])
def test_simulate_emits_the_target_distribution(seed: int, vocab: int, gamma: int) -> None:
    """Over R = 300,000 rounds, both the first and the second emitted token are distributed as p.

    Chi-square with V - 1 degrees of freedom on each: the bound mean + 6 sd = (V - 1) + 6 sqrt(2 (V - 1)) has a
    tail probability below about 1e-5 for every V here (Wilson-Hilferty), so a correct engine passes.
    """
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(vocab, 0.7))
    q = rng.dirichlet(np.full(vocab, 0.7))
    rounds = 300_000
    counts = simulate(p, q, gamma, rounds, rng)
    bound = (vocab - 1) + 6.0 * math.sqrt(2.0 * (vocab - 1))
    for observed in (counts.first_token, counts.second_token):
        assert observed.sum() == rounds
        expected = rounds * p
        support = expected > 0
        assert (observed[~support] == 0).all()
        chi2 = float((((observed - expected) ** 2)[support] / expected[support]).sum())
        assert chi2 <= bound, (chi2, bound)


@pytest.mark.parametrize(("seed", "gamma"), [(16, 4), (17, 1), (18, 10)])
def test_accepted_count_histogram_is_truncated_geometric(seed: int, gamma: int) -> None:
    """P(accepted = k) = alpha^k (1 - alpha) for k < gamma and alpha^gamma at k = gamma (Leviathan et al. 2023,
    Sec. 3.1), alpha = sum min(p, q). R = 300,000 rounds; each cell within 5 binomial standard deviations.
    The mean tokens per round is within 4 standard errors (sample sd / sqrt(R)) of expected_tokens."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(16))
    q = rng.dirichlet(np.ones(16))
    alpha = _alpha(p, q)
    rounds = 300_000
    counts = simulate(p, q, gamma, rounds, rng)
    law = theory.accepted_count_distribution(alpha, gamma)
    assert counts.accepted_hist.sum() == rounds
    for k, prob in enumerate(law):
        assert _five_sigma(counts.accepted_hist[k], rounds, prob), (k, counts.accepted_hist[k], rounds * prob)
    per_round = np.repeat(np.arange(gamma + 1) + 1, counts.accepted_hist)  # [R] tokens per round
    mean = counts.emitted / rounds
    assert mean == pytest.approx(per_round.mean())
    assert abs(mean - theory.expected_tokens(alpha, gamma)) <= 4.0 * per_round.std() / math.sqrt(rounds)


def test_simulate_counters_add_up() -> None:
    """accepted + corrections + bonuses = emitted; accepted + rejected + discarded = drafted, one rejection per
    correction. The discarded mean is checked against theory.expected_discarded within 4 standard errors."""
    rng = np.random.default_rng(19)
    p = rng.dirichlet(np.ones(8))
    q = rng.dirichlet(np.ones(8))
    gamma, rounds = 5, 100_000
    c = simulate(p, q, gamma, rounds, rng)
    assert isinstance(c, SimulationCounts)
    assert c.accepted + c.corrections + c.bonuses == c.emitted
    assert c.corrections + c.bonuses == rounds and c.drafted == gamma * rounds
    assert c.accepted + c.corrections + c.discarded == c.drafted
    assert c.accepted == int((np.arange(gamma + 1) * c.accepted_hist).sum())
    discarded = np.repeat(np.maximum(gamma - 1 - np.arange(gamma + 1), 0), c.accepted_hist)  # [R]
    assert c.discarded == discarded.sum()
    expected = theory.expected_discarded(_alpha(p, q), gamma)
    assert abs(c.discarded / rounds - expected) <= 4.0 * discarded.std() / math.sqrt(rounds)
    d = c.to_dict()
    assert d["emitted"] == c.emitted and d["accepted_hist"] == c.accepted_hist.tolist()
    assert all(type(x) is int for x in d["first_token"])


def test_simulate_with_equal_distributions_accepts_everything() -> None:
    c = simulate(P, P, 4, 1000, np.random.default_rng(20))
    assert c.accepted_hist.tolist() == [0, 0, 0, 0, 1000]
    assert c.emitted == 5000 and c.corrections == 0 and c.discarded == 0


def test_simulate_with_disjoint_supports_rejects_every_draft() -> None:
    """alpha = 0: every round is one correction drawn from p itself (the residual of disjoint p and q is p)."""
    p = np.array([0.5, 0.5, 0.0, 0.0])
    q = np.array([0.0, 0.0, 0.25, 0.75])
    c = simulate(p, q, 3, 2000, np.random.default_rng(21))
    assert c.accepted_hist.tolist() == [2000, 0, 0, 0]
    assert c.emitted == c.corrections == 2000 and c.discarded == 4000
    assert c.first_token[2:].sum() == 0 and c.second_token[2:].sum() == 0


def test_simulate_is_deterministic_when_seeded_and_independent_of_chunking() -> None:
    """The chunk size changes how uniforms are grouped, not what is counted: totals agree exactly with the same
    seed and chunking, and the histogram's shape does not depend on the chunk size."""
    a = simulate(P, Q, 3, 5000, np.random.default_rng(22))
    b = simulate(P, Q, 3, 5000, np.random.default_rng(22))
    assert a.to_dict() == b.to_dict()
    small = simulate(P, Q, 3, 5000, np.random.default_rng(22), chunk=7)
    assert small.rounds == 5000 and small.accepted_hist.sum() == 5000 and small.second_token.sum() == 5000


def test_simulate_zero_rounds_and_gamma_zero() -> None:
    empty = simulate(P, Q, 4, 0, np.random.default_rng(23))
    assert empty.emitted == 0 and empty.accepted_hist.tolist() == [0] * 5
    plain = simulate(P, Q, 0, 100, np.random.default_rng(23))
    assert plain.emitted == plain.bonuses == 100 and plain.drafted == 0


# Cross-check with the scalar engine -------------------------------------------------------------------------


def test_batch_engine_matches_scalar_engine_in_distribution() -> None:
    """Fixed, different rows at each position (not i.i.d.), V = 4, gamma = 3. The scalar engine runs
    n1 = 20,000 rounds with its own random.Random; the batch engine n2 = 200,000 rounds with its own Generator,
    drafting from the same rows. For every output column and every value (a token or -1 padding), the two
    frequencies must agree within 5 standard deviations of their difference,
    sqrt(f (1 - f) (1/n1 + 1/n2)) with f the pooled frequency (plus one count of slack for small cells).
    """
    rng = np.random.default_rng(24)
    vocab, gamma = 4, 3
    target = rng.dirichlet(np.ones(vocab), size=gamma + 1)  # [gamma + 1, V]
    draft = rng.dirichlet(np.ones(vocab), size=gamma)  # [gamma, V]
    draft_cdf = np.cumsum(draft, axis=1)  # [gamma, V]

    n1 = 20_000
    py_rng = random.Random(25)
    t_rows, d_rows = target.tolist(), draft.tolist()
    scalar = np.full((n1, gamma + 1), -1, dtype=np.int64)  # [n1, gamma + 1]
    for i in range(n1):
        tokens = [min(int(np.searchsorted(draft_cdf[j], py_rng.random(), "right")), vocab - 1) for j in range(gamma)]
        r = steps.speculative_round(t_rows, d_rows, tokens, py_rng)
        scalar[i, : len(r.tokens)] = r.tokens

    n2 = 200_000
    tokens_b = np.minimum((draft_cdf[None] <= rng.random((n2, gamma, 1))).sum(axis=2), vocab - 1)  # [n2, gamma]
    batch = speculative_round(
        np.broadcast_to(target, (n2, gamma + 1, vocab)), np.broadcast_to(draft, (n2, gamma, vocab)), tokens_b, rng
    )
    for col in range(gamma + 1):
        for value in range(-1, vocab):
            c1 = int((scalar[:, col] == value).sum())
            c2 = int((batch[:, col] == value).sum())
            pooled = (c1 + c2) / (n1 + n2)
            sd = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
            assert abs(c1 / n1 - c2 / n2) <= 5 * sd + 1 / n1, (col, value, c1, c2)


def test_all_is_sorted_and_lists_every_public_name() -> None:
    assert batch.__all__ == sorted(batch.__all__)
    public = {
        name
        for name, obj in vars(batch).items()
        if not name.startswith("_")
        and (inspect.isfunction(obj) or inspect.isclass(obj))
        and obj.__module__ == batch.__name__
    }
    assert public <= set(batch.__all__) and all(hasattr(batch, name) for name in batch.__all__)
