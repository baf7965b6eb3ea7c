"""Speculative decoding over a batch with numpy: the vectorised twin of ``steps.speculative_round``.

Scope: one verify-correct-bonus round for ``B`` independent sequences at once, in the convention of vLLM's
rejection sampler (accepted drafts, then one correction or bonus token, then ``-1`` padding), and ``simulate``,
a Monte Carlo of many i.i.d. rounds that returns counts, fast enough for millions of tokens. This is the only
module of the package that imports numpy; it is native-only (numpy is absent in the browser).

Non-goals: drafting from a model (the draft tokens come in), logits, temperature or top-k/top-p (shape the rows
first with ``distributions``), GPU kernels, and per-position records (``steps.Round`` keeps those).

Vocabulary, as on the pages: the draft proposes ``gamma`` tokens; verify *accepts* a prefix of them; the first
draft that fails verify is *rejected* and the drafts after it are *discarded*; the round then emits one more
token, a *correction* drawn from normalize(max(0, p - q)) after a rejection, or a *bonus* drawn from the
target's next row when all ``gamma`` drafts were accepted. So every round emits

    output = accepted + (correction or bonus),  between 1 and gamma + 1 tokens.

Randomness is drawn up front, ``gamma + 1`` uniforms per sequence in the same order as the scalar engine
(``gamma`` for verify, then one for the final token), so the two engines agree token for token on the same
uniforms (``speculative_round_from_uniforms``), up to float rounding at inverse-CDF boundaries.

>>> import numpy as np
>>> p = np.array([[[0.0, 1.0], [1.0, 0.0]]])  # [B=1, gamma + 1 = 2, V=2]
>>> q = np.array([[[0.0, 1.0]]])  # [B=1, gamma=1, V=2]
>>> speculative_round(p, q, np.array([[1]]), np.random.default_rng(0))
array([[1, 0]])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "MAX_GAMMA",
    "SimulationCounts",
    "simulate",
    "speculative_round",
    "speculative_round_from_uniforms",
]

MAX_GAMMA = 64

# Row-sum tolerance per dtype: float32 carries about 7 significant digits, so a row of 32,000 entries that
# was normalised in float32 routinely misses 1 by 1e-6; float64 rows are held to the scalar engine's 1e-9.
_TOLERANCE: dict[np.dtype[Any], float] = {np.dtype(np.float64): 1e-9, np.dtype(np.float32): 1e-4}

# Tokens per block of the two-level inverse CDF in ``_sample_rows``.
_BLOCK = 256

FloatArray = NDArray[np.floating[Any]]
IntArray = NDArray[np.int64]


# --------------------------------------------------------------------------------------------------------
# Validation: cheap and vectorised, since it sits on the benchmark path.


def _check_rng(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (got {type(rng).__name__})")
    return rng


def _check_gamma(gamma: object, name: str = "gamma") -> int:
    if isinstance(gamma, bool) or not isinstance(gamma, int | np.integer):
        raise TypeError(f"{name} must be an int (got {type(gamma).__name__})")
    if not 0 <= int(gamma) <= MAX_GAMMA:
        raise ValueError(f"{name} must be between 0 and {MAX_GAMMA} (got {gamma})")
    return int(gamma)


def _as_float_array(x: object, name: str, shape_text: str, ndim: int) -> FloatArray:
    arr = np.asarray(x)
    if arr.dtype not in _TOLERANCE:
        raise TypeError(f"{name} must be a float32 or float64 array (got dtype {arr.dtype})")
    if arr.ndim != ndim:
        raise ValueError(f"{name} must have shape {shape_text} (got shape {arr.shape})")
    if arr.shape[-1] == 0:
        raise ValueError(f"{name} must have a non-empty vocabulary, V >= 1 (got shape {arr.shape})")
    return arr


def _check_rows(arr: FloatArray, name: str) -> None:
    """Every row along the last axis must be a distribution: finite, non-negative, summing to 1.

    Two passes over the data: a NaN or infinite entry makes its row sum non-finite, so the sums catch those,
    and the minimum catches negatives. The exact culprit is looked up only when a check fails.
    """
    if arr.size == 0:
        return
    sums = arr.sum(axis=-1)  # [...rows]
    if not np.isfinite(sums).all() and not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite (found NaN or infinity)")
    if arr.min() < 0:
        raise ValueError(f"{name} must be non-negative (found {arr.min()})")
    tol = _TOLERANCE[arr.dtype]
    off = np.abs(sums - 1.0) > tol  # [...rows]
    if off.any():
        where = tuple(int(i) for i in np.argwhere(off)[0])
        raise ValueError(
            f"{name} rows must sum to 1 within {tol:g} for {arr.dtype} (row {list(where)} sums to "
            f"{float(sums[where])!r})"
        )


def _check_round_inputs(
    target_probs: object,
    draft_probs: object,
    draft_tokens: object,
    validate: bool,
) -> tuple[FloatArray, FloatArray, NDArray[np.intp]]:
    tokens = np.asarray(draft_tokens)  # [B, gamma]
    if not np.issubdtype(tokens.dtype, np.integer):
        raise TypeError(f"draft_tokens must be an integer array (got dtype {tokens.dtype})")
    if tokens.ndim != 2:
        raise ValueError(f"draft_tokens must have shape [B, gamma] (got shape {tokens.shape})")
    batch, gamma = tokens.shape
    if gamma > MAX_GAMMA:
        raise ValueError(f"gamma must be between 0 and {MAX_GAMMA} (draft_tokens has {gamma} columns)")
    target = _as_float_array(target_probs, "target_probs", "[B, gamma + 1, V]", 3)  # [B, gamma + 1, V]
    vocab = target.shape[2]
    if target.shape != (batch, gamma + 1, vocab):
        raise ValueError(
            f"target_probs must have shape [B, gamma + 1, V] = [{batch}, {gamma + 1}, V] to match "
            f"draft_tokens (got shape {target.shape})"
        )
    draft = _as_float_array(draft_probs, "draft_probs", "[B, gamma, V]", 3)  # [B, gamma, V]
    if draft.shape != (batch, gamma, vocab):
        raise ValueError(
            f"draft_probs must have shape [B, gamma, V] = [{batch}, {gamma}, {vocab}] to match "
            f"draft_tokens and target_probs (got shape {draft.shape})"
        )
    if tokens.size and (tokens.min() < 0 or tokens.max() >= vocab):
        raise ValueError(
            f"draft_tokens must be token ids in 0..{vocab - 1} (got values from {tokens.min()} to {tokens.max()})"
        )
    if validate:
        _check_rows(target, "target_probs")
        _check_rows(draft, "draft_probs")
    return target, draft, tokens.astype(np.intp, copy=False)


def _check_distribution(x: object, name: str) -> NDArray[np.float64]:
    arr = _as_float_array(x, name, "[V]", 1)
    _check_rows(arr, name)
    return arr.astype(np.float64, copy=False)


# --------------------------------------------------------------------------------------------------------
# Sampling


def _last_positive(weights: FloatArray) -> IntArray:
    """Index of the last positive entry of each row: where inverse CDF lands when rounding leaves u * total
    at or above the final running sum. Every row must have a positive entry."""
    # weights: [N, V] -> [N]
    vocab = weights.shape[1]
    last: IntArray = (vocab - 1 - np.argmax(weights[:, ::-1] > 0, axis=1)).astype(np.int64)
    return last


def _sample_rows(weights: FloatArray, u: NDArray[np.float64]) -> IntArray:
    """Inverse-CDF sample one token per row of non-negative ``weights`` (unnormalised), using uniforms ``u``.

    The token of a row is the first ``i`` whose running sum exceeds ``u * total``: scaling ``u`` by the row
    total is the same as normalising the row, without a pass to divide it. A full cumulative sum over the
    vocabulary is slow in numpy (a sequential scan, several times slower than a sum), so the search runs on two
    levels: block sums of ``_BLOCK`` tokens pick the block, and a running sum inside that one block picks the
    token. A token of weight 0 never moves a running sum, so it is never the first to exceed it.

    Running sums are kept in float64. Block sums stay in the rows' dtype (a float64 sum of float32 rows would
    triple the cost of this pass), so for float32 rows a block total can differ from its tokens' float64 sum
    by float32 rounding, about 1e-7 of the block's mass: far below the 1e-4 the rows themselves are held to.
    """
    # weights: [N, V], u: [N] -> [N] int64
    n, vocab = weights.shape
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    rows = np.arange(n)  # [N]
    width = min(_BLOCK, vocab)  # a small vocabulary is one block
    starts = np.arange(0, vocab, width)  # [nb]
    block_sums = np.add.reduceat(weights, starts, axis=1)  # [N, nb]
    block_cdf = np.cumsum(block_sums, axis=1, dtype=np.float64)  # [N, nb]
    target = u * block_cdf[:, -1]  # [N]
    block = (block_cdf <= target[:, None]).sum(axis=1)  # [N] first block whose running sum exceeds target
    nb = starts.size
    # Rounding can put target at the very top: fall back to the last block that carries weight.
    over = block >= nb  # [N]
    if over.any():
        block[over] = nb - 1 - np.argmax(block_sums[over][:, ::-1] > 0, axis=1)
    before = np.where(block > 0, block_cdf[rows, np.maximum(block - 1, 0)], 0.0)  # [N]
    inner = np.maximum(target - before, 0.0)  # [N] how far into the chosen block the target falls
    cols = starts[block][:, None] + np.arange(width)  # [N, width]
    inside = cols < vocab  # [N, width] the last block may be short
    cols = np.minimum(cols, vocab - 1)
    chunk = np.where(inside, weights[rows[:, None], cols], 0.0)  # [N, width]
    chunk_cdf = np.cumsum(chunk, axis=1, dtype=np.float64)  # [N, width]
    offset = (chunk_cdf <= inner[:, None]).sum(axis=1)  # [N]
    short = offset >= width  # [N] rounding again: take the block's last positive token
    if short.any():
        offset[short] = _last_positive(chunk[short])
    tokens: IntArray = (starts[block] + offset).astype(np.int64)
    return tokens


def _round_from_uniforms(
    target: FloatArray,  # [B, gamma + 1, V]
    draft: FloatArray,  # [B, gamma, V]
    tokens: NDArray[np.intp],  # [B, gamma]
    uniforms: NDArray[np.float64],  # [B, gamma + 1]
) -> IntArray:
    batch, gamma = tokens.shape
    rows = np.arange(batch)  # [B]
    cols = np.arange(gamma)  # [gamma]

    # Step 1: verify. Accept draft i with probability min(1, p(x)/q(x)), written u*q < p so nothing divides.
    # NOTE: the paper indexes drafts from 1; column i here is the paper's draft i + 1.
    p_tok = target[rows[:, None], cols[None, :], tokens]  # [B, gamma] p at each drafted token
    q_tok = draft[rows[:, None], cols[None, :], tokens]  # [B, gamma] q at each drafted token
    # A draft probability of 0 means reject: the draft could not have proposed that token, so no ratio
    # can justify keeping it (and u*0 < p would otherwise accept it).
    ok = (uniforms[:, :gamma] * q_tok < p_tok) & (q_tok > 0)  # [B, gamma]
    accepted = np.logical_and.accumulate(ok, axis=1).sum(axis=1)  # [B] length of the accepted prefix

    out = np.full((batch, gamma + 1), -1, dtype=np.int64)  # [B, gamma + 1]
    out[:, :gamma] = np.where(cols[None, :] < accepted[:, None], tokens, -1)

    # Step 2: the final token. Only the row at the first rejection is gathered, and the residual is computed
    # for rejected sequences alone; a fully accepted sequence samples its bonus from the target's last row.
    # The groups are gathered and sampled apart, so no [B, V] array is built and copied around: at V = 32,000
    # each fresh array costs about as much as the arithmetic done on it.
    rejected = np.flatnonzero(accepted < gamma)  # [R]
    if rejected.size:
        at = accepted[rejected]  # [R] position of the rejection
        # Correction: normalize(max(0, p - q)) (Leviathan et al. 2023, Alg. 1); _sample_rows normalises.
        residual = target[rejected, at].astype(np.result_type(target, draft), copy=False)  # [R, V]
        np.subtract(residual, draft[rejected, at], out=residual)
        np.maximum(residual, 0.0, out=residual)
        # p <= q everywhere (p == q up to the row tolerance) leaves no residual mass; a rejection then has
        # probability zero or a rounding error's worth, and p itself is the natural correction.
        empty = ~(residual > 0).any(axis=1)  # [R]
        if empty.any():
            residual[empty] = target[rejected[empty], at[empty]]
        out[rejected, at] = _sample_rows(residual, uniforms[rejected, gamma])
    full = np.flatnonzero(accepted == gamma)  # [A]
    if full.size:
        out[full, gamma] = _sample_rows(target[full, gamma], uniforms[full, gamma])  # bonus from [A, V]
    return out


# --------------------------------------------------------------------------------------------------------
# Public API


def speculative_round_from_uniforms(
    target_probs: FloatArray,  # [B, gamma + 1, V]; row gamma is the bonus distribution
    draft_probs: FloatArray,  # [B, gamma, V]
    draft_tokens: NDArray[np.integer[Any]],  # [B, gamma]
    uniforms: NDArray[np.float64],  # [B, gamma + 1]: gamma verify uniforms, then one for the final token
    *,
    validate: bool = True,
) -> IntArray:
    """``speculative_round`` with its uniforms given, one row of ``gamma + 1`` per sequence.

    Row ``b`` consumes its uniforms exactly as ``steps.speculative_round_from_uniforms`` does, which is what
    lets the tests compare the two engines token for token.
    """
    target, draft, tokens = _check_round_inputs(target_probs, draft_probs, draft_tokens, validate)
    batch, gamma = tokens.shape
    u = np.asarray(uniforms)  # [B, gamma + 1]
    if u.dtype != np.float64:
        raise TypeError(f"uniforms must be a float64 array (got dtype {u.dtype})")
    if u.shape != (batch, gamma + 1):
        raise ValueError(f"uniforms must have shape [B, gamma + 1] = [{batch}, {gamma + 1}] (got shape {u.shape})")
    if u.size and not ((u >= 0.0) & (u < 1.0)).all():
        raise ValueError("uniforms must be in [0, 1)")
    return _round_from_uniforms(target, draft, tokens, u)


def speculative_round(
    target_probs: FloatArray,  # [B, gamma + 1, V]; row gamma is the bonus distribution
    draft_probs: FloatArray,  # [B, gamma, V]
    draft_tokens: NDArray[np.integer[Any]],  # [B, gamma]
    rng: np.random.Generator,
    *,
    validate: bool = True,
) -> IntArray:
    """One speculative round for each of ``B`` sequences: verify, then correct or add a bonus.

    Returns int64 ``[B, gamma + 1]``: the accepted drafts, then the correction token at the first rejection,
    then ``-1`` padding; the last column holds a bonus token only when all ``gamma`` drafts were accepted.
    The number of tokens a row emits is its count of entries ``>= 0``.

    ``rng`` supplies ``gamma + 1`` uniforms per sequence, drawn up front. Float32 and float64 rows are
    accepted; each row must sum to 1 within 1e-9 (float64) or 1e-4 (float32). ``validate=False`` skips only
    those per-entry row checks (shapes, token ids and ``rng`` are always checked), for callers that built
    the rows themselves.
    """
    generator = _check_rng(rng)
    target, draft, tokens = _check_round_inputs(target_probs, draft_probs, draft_tokens, validate)
    batch, gamma = tokens.shape
    uniforms = generator.random((batch, gamma + 1))  # [B, gamma + 1]
    return _round_from_uniforms(target, draft, tokens, uniforms)


@dataclass(frozen=True, eq=False)
class SimulationCounts:
    """What ``simulate`` counted over its rounds (every field is a count)."""

    gamma: int
    rounds: int
    accepted_hist: IntArray  # [gamma + 1]: rounds by number of accepted drafts
    first_token: IntArray  # [V]: the first emitted token of each round
    second_token: IntArray  # [V]: the second emitted token (continuing into the next round if needed)
    emitted: int  # accepted + corrections + bonuses
    accepted: int
    corrections: int
    bonuses: int
    drafted: int  # gamma * rounds
    discarded: int  # drafts after the first rejection: drafted - accepted - corrections

    def to_dict(self) -> dict[str, Any]:
        """Plain ints and lists, ready for JSON."""
        return {
            "gamma": self.gamma,
            "rounds": self.rounds,
            "accepted_hist": self.accepted_hist.tolist(),
            "first_token": self.first_token.tolist(),
            "second_token": self.second_token.tolist(),
            "emitted": self.emitted,
            "accepted": self.accepted,
            "corrections": self.corrections,
            "bonuses": self.bonuses,
            "drafted": self.drafted,
            "discarded": self.discarded,
        }


def _inverse_cdf(cdf: NDArray[np.float64], last: int, u: NDArray[np.float64]) -> IntArray:
    """Tokens for uniforms ``u`` (any shape) under one fixed distribution with running sums ``cdf`` [V]."""
    idx = np.searchsorted(cdf, u * cdf[-1], side="right")  # first running sum that exceeds u * total
    tokens: IntArray = np.minimum(idx, last).astype(np.int64)  # rounding at the top: the last positive token
    return tokens


def simulate(
    p: FloatArray,  # [V] target distribution, the same at every position
    q: FloatArray,  # [V] draft distribution, the same at every position
    gamma: int,
    rounds: int,
    rng: np.random.Generator,
    *,
    chunk: int = 1 << 16,
) -> SimulationCounts:
    """Monte Carlo of ``rounds`` independent speculative rounds with fixed per-position distributions.

    Positions are i.i.d., as in the analysis of Leviathan et al. 2023 (Sec. 3.1), so each round drafts
    ``gamma`` tokens from ``q``, verifies them against ``p``, and ends with a correction from
    normalize(max(0, p - q)) or a bonus from ``p``. The accepted count is then truncated-geometric in
    alpha = sum min(p, q), and every emitted token is distributed as ``p``.

    The second emitted token of a round that emits only one comes from the next round, which is a fresh
    independent continuation; each chunk simulates one extra round to continue its last one.

    >>> import numpy as np
    >>> c = simulate(np.array([0.5, 0.5]), np.array([0.5, 0.5]), 3, 10, np.random.default_rng(0))
    >>> c.accepted_hist.tolist(), c.emitted, c.bonuses
    ([0, 0, 0, 10], 40, 10)
    """
    p_row, q_row, g = _check_simulate_args(p, q, gamma, rounds, chunk)
    generator = _check_rng(rng)
    vocab = p_row.size
    samplers = _samplers(p_row, q_row)

    hist = np.zeros(g + 1, dtype=np.int64)  # [gamma + 1]
    first_counts = np.zeros(vocab, dtype=np.int64)  # [V]
    second_counts = np.zeros(vocab, dtype=np.int64)  # [V]
    done = 0
    while done < rounds:
        n = min(chunk, rounds - done)
        accepted, first, second = _simulate_chunk(p_row, q_row, g, n, samplers, generator)
        hist += np.bincount(accepted, minlength=g + 1)
        first_counts += np.bincount(first, minlength=vocab)
        second_counts += np.bincount(second, minlength=vocab)
        done += n

    accepted_total = int(np.dot(np.arange(g + 1), hist))
    bonuses = int(hist[g])
    corrections = rounds - bonuses
    drafted = g * rounds
    return SimulationCounts(
        gamma=g,
        rounds=rounds,
        accepted_hist=hist,
        first_token=first_counts,
        second_token=second_counts,
        emitted=accepted_total + rounds,
        accepted=accepted_total,
        corrections=corrections,
        bonuses=bonuses,
        drafted=drafted,
        discarded=drafted - accepted_total - corrections,
    )


def _check_simulate_args(
    p: object, q: object, gamma: object, rounds: object, chunk: object
) -> tuple[NDArray[np.float64], NDArray[np.float64], int]:
    p_row = _check_distribution(p, "p")  # [V]
    q_row = _check_distribution(q, "q")  # [V]
    if p_row.shape != q_row.shape:
        raise ValueError(f"p and q must have the same length (got {p_row.size} and {q_row.size})")
    g = _check_gamma(gamma)
    if isinstance(rounds, bool) or not isinstance(rounds, int | np.integer):
        raise TypeError(f"rounds must be an int (got {type(rounds).__name__})")
    if rounds < 0:
        raise ValueError(f"rounds must be >= 0 (got {rounds})")
    if isinstance(chunk, bool) or not isinstance(chunk, int):
        raise TypeError(f"chunk must be an int (got {type(chunk).__name__})")
    if chunk < 1:
        raise ValueError(f"chunk must be a positive int (got {chunk})")
    return p_row, q_row, g


def _samplers(p_row: NDArray[np.float64], q_row: NDArray[np.float64]) -> list[tuple[NDArray[np.float64], int]]:
    """Running sums [V] and last positive token of the three fixed laws a round samples: q, the residual, p."""
    residual = np.maximum(p_row - q_row, 0.0)  # [V]
    if not (residual > 0).any():
        residual = p_row  # p == q: rejections have probability zero, see _round_from_uniforms
    return [(np.cumsum(d), int(d.size - 1 - np.argmax(d[::-1] > 0))) for d in (q_row, residual, p_row)]


def _simulate_chunk(
    p_row: NDArray[np.float64],  # [V]
    q_row: NDArray[np.float64],  # [V]
    g: int,
    n: int,
    samplers: list[tuple[NDArray[np.float64], int]],  # (running sums [V], last positive token) of q, residual, p
    generator: np.random.Generator,
) -> tuple[IntArray, IntArray, IntArray]:
    """``n`` rounds (plus one that continues the last): accepted counts, first and second emitted tokens, [n]."""
    m = n + 1  # one extra round continues the last counted one
    u = generator.random((m, 2 * g + 1))  # [m, 2 gamma + 1]: draft, verify, final
    # Step 1: draft gamma tokens from q.
    drafts = _inverse_cdf(*samplers[0], u[:, :g])  # [m, gamma]
    # Step 2: verify, exactly as in _round_from_uniforms (q(x) > 0 always holds for a token drawn from q).
    ok = u[:, g : 2 * g] * q_row[drafts] < p_row[drafts]  # [m, gamma]
    accepted = np.logical_and.accumulate(ok, axis=1).sum(axis=1)  # [m]
    # Step 3: correct after a rejection, or Step 4: bonus after a full acceptance.
    final = np.where(
        accepted < g,
        _inverse_cdf(*samplers[1], u[:, 2 * g]),
        _inverse_cdf(*samplers[2], u[:, 2 * g]),
    )  # [m]
    first = drafts[:, 0] if g else final  # [m] the round's first emitted token
    if g:
        first = np.where(accepted >= 1, first, final)
    second = np.where(accepted[:n] == 1, final[:n], first[1:])  # [n]
    if g >= 2:
        second = np.where(accepted[:n] >= 2, drafts[:n, 1], second)
    return accepted[:n], first[:n], second
