"""The four steps of speculative sampling, as pure functions, and the round that joins them.

One *round* of speculative decoding (Leviathan et al. 2023, Algorithm 1; Chen et al. 2023, Algorithm 2):

1. **draft**   the cheap model proposes gamma tokens autoregressively, x_i ~ q(. | prefix, x_<i).
2. **verify**  the target scores all gamma prefixes in one parallel pass, giving p_1..p_{gamma+1}; draft token
               x_i is *accepted* with probability min(1, p_i(x_i) / q_i(x_i)), left to right.
3. **correct** at the first rejection, the rest of the draft is *discarded* and a *correction* token is drawn
               from normalize(max(0, p_i - q_i)).
4. **bonus**   if all gamma drafts are accepted, a *bonus* token is drawn from p_{gamma+1}, the target's
               distribution after the last draft, which the parallel pass computed for free.

Vocabulary, used the same way on every page: a round's output is its *accepted* prefix followed by exactly one
*correction* or *bonus* token, so it emits between 1 and gamma + 1 tokens per target pass.

Randomness always comes in from the caller: ``speculative_round`` draws its uniforms up front from the ``rng``
it is handed (gamma for verify, then one for the final token), and ``speculative_round_from_uniforms`` takes them
ready-made, which is what the exact enumerations in the tests and the oracle policy build on.

Non-goals: models and loops (``engine.py``), batching (``batch.py``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from .distributions import (
    check_gamma,
    residual_unchecked,
    sample,
    validate_probs,
    validate_rows,
)

__all__ = [
    "DraftModel",
    "Outcome",
    "Position",
    "Round",
    "bonus",
    "correct",
    "draft",
    "speculative_round",
    "speculative_round_from_uniforms",
    "verify",
]

Outcome = Literal["accepted", "rejected", "discarded"]

#: A draft model as the steps see it: context (token ids) -> next-token distribution [V].
DraftModel = Callable[[Sequence[int]], Sequence[float]]


@dataclass(frozen=True)
class Position:
    """What happened to one draft token.

    ``ratio`` is p(x) / q(x), the acceptance probability before clipping at 1; it is 0.0 when q(x) = 0, which
    can only happen if the token did not come from q, and is then always rejected. ``u`` is the uniform the
    verifier compared against (None for a discarded token, which is never looked at).
    """

    index: int
    token: int
    p: float
    q: float
    ratio: float
    u: float | None
    outcome: Outcome

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Round:
    """The record of one round: what was emitted, and why, position by position.

    ``tokens`` is the accepted prefix followed by ``final_token`` (the correction or the bonus), so
    ``len(tokens) == accepted + 1``.
    """

    tokens: list[int]
    accepted: int
    ended_with: Literal["correction", "bonus"]
    final_token: int
    gamma: int
    positions: list[Position] = field(default_factory=list)

    @property
    def discarded(self) -> int:
        """Draft tokens thrown away after the first rejection (the rejected one itself not counted)."""
        return sum(1 for pos in self.positions if pos.outcome == "discarded")

    def to_dict(self) -> dict[str, Any]:
        return {
            "tokens": list(self.tokens),
            "accepted": self.accepted,
            "ended_with": self.ended_with,
            "final_token": self.final_token,
            "gamma": self.gamma,
            "discarded": self.discarded,
            "positions": [pos.to_dict() for pos in self.positions],
        }


# Step 1 --------------------------------------------------------------------------------------------------------


# --8<-- [start:draft]
def draft(
    draft_model: DraftModel, context: Sequence[int], gamma: int, rng: random.Random
) -> tuple[list[int], list[list[float]]]:
    """Propose ``gamma`` tokens from the draft model, each conditioned on the ones before it.

    Returns the tokens and the draft distributions they were drawn from, ``[gamma][V]``; the verifier needs
    both. This is the only sequential part of a round, and it runs on the cheap model.

    >>> uniform = lambda context: [0.5, 0.5]
    >>> tokens, rows = draft(uniform, [], 3, random.Random(0))
    >>> len(tokens), rows[0]
    (3, [0.5, 0.5])
    """
    check_gamma(gamma)
    context = list(context)
    tokens: list[int] = []
    rows: list[list[float]] = []
    for i in range(gamma):
        q = validate_probs(draft_model(context + tokens), f"draft_model output at position {i}")
        token = sample(q, rng.random())
        tokens.append(token)
        rows.append(q)
    return tokens, rows


# --8<-- [end:draft]


# Step 2 --------------------------------------------------------------------------------------------------------


# --8<-- [start:verify]
def verify(p_row: Sequence[float], q_row: Sequence[float], token: int, u: float) -> bool:
    """Accept ``token`` with probability min(1, p(x) / q(x)), given a uniform ``u`` in [0, 1).

    ``u < p/q`` is tested as ``u * q < p`` so that q(x) = 0 needs no special division: the product is 0, which
    is never below p(x) >= 0 strictly unless p(x) > 0. We still reject q(x) = 0 outright, because such a token
    cannot have come from q and accepting it would break the proof of exactness (vLLM argues the same case).

    >>> verify([0.4, 0.6], [0.8, 0.2], 0, 0.49), verify([0.4, 0.6], [0.8, 0.2], 0, 0.5)
    (True, False)
    """
    q_x = q_row[token]
    if q_x <= 0.0:
        return False
    return u * q_x < p_row[token]


# --8<-- [end:verify]


# Step 3 --------------------------------------------------------------------------------------------------------


# --8<-- [start:correct]
def correct(p_row: Sequence[float], q_row: Sequence[float], u: float) -> int:
    """Draw the correction token from normalize(max(0, p - q)) after a rejection.

    The residual puts mass exactly where the target wants more than the draft offered; this is what makes the
    emitted token follow p (Leviathan et al. 2023, Appendix A.1).

    >>> correct([0.4, 0.35, 0.25], [0.2, 0.2, 0.6], 0.5), correct([0.4, 0.35, 0.25], [0.2, 0.2, 0.6], 0.6)
    (0, 1)
    """
    return sample(residual_unchecked(p_row, q_row), u)


# --8<-- [end:correct]


# Step 4 --------------------------------------------------------------------------------------------------------


# --8<-- [start:bonus]
def bonus(p_row: Sequence[float], u: float) -> int:
    """Draw the bonus token from the target's next distribution after a full acceptance.

    >>> bonus([0.0, 1.0], 0.3)
    1
    """
    return sample(p_row, u)


# --8<-- [end:bonus]


# The round -----------------------------------------------------------------------------------------------------


def _check_round_inputs(
    target_probs: Sequence[Sequence[float]],
    draft_probs: Sequence[Sequence[float]],
    draft_tokens: Sequence[int],
) -> tuple[list[list[float]], list[list[float]], list[int]]:
    if isinstance(draft_tokens, str | bytes) or not isinstance(draft_tokens, Sequence):
        raise TypeError(f"draft_tokens must be a sequence of ints, got {type(draft_tokens).__name__}")
    gamma = check_gamma(len(draft_tokens), "gamma (len(draft_tokens))")
    # NOTE: the paper indexes p_1..p_{gamma+1}; here row i of target_probs scores draft token i (0-based) and
    # row gamma is the bonus distribution.
    p_rows = validate_rows(target_probs, "target_probs", n_rows=gamma + 1)
    vocab = len(p_rows[0])
    q_rows = validate_rows(draft_probs, "draft_probs", n_rows=gamma, vocab=vocab)
    tokens: list[int] = []
    for i, token in enumerate(draft_tokens):
        if isinstance(token, bool) or not isinstance(token, int):
            raise TypeError(f"draft_tokens[{i}] must be an int, got {type(token).__name__}")
        if not 0 <= token < vocab:
            raise ValueError(f"draft_tokens[{i}] must be a token id in 0..{vocab - 1} (got {token})")
        tokens.append(token)
    return p_rows, q_rows, tokens


# --8<-- [start:round_from_uniforms]
def speculative_round_from_uniforms(
    target_probs: Sequence[Sequence[float]],  # [gamma + 1][V]
    draft_probs: Sequence[Sequence[float]],  # [gamma][V]
    draft_tokens: Sequence[int],  # [gamma]
    uniforms: Sequence[float],  # [gamma + 1]: one per verify, then one for the correction or bonus
) -> Round:
    """One round of verify, then correct or bonus, with every random number supplied.

    Worked example (the site's own single-position example): p = [.4, .35, .25], q = [.2, .2, .6], draft token 2.
    p(2)/q(2) = .25/.6 ~ 0.417, so u = 0.9 rejects it and the correction comes from [4/7, 3/7, 0].

    >>> r = speculative_round_from_uniforms([[0.4, 0.35, 0.25], [1, 0, 0]], [[0.2, 0.2, 0.6]], [2], [0.9, 0.7])
    >>> r.tokens, r.accepted, r.ended_with, r.positions[0].outcome
    ([1], 0, 'correction', 'rejected')
    """
    p_rows, q_rows, tokens = _check_round_inputs(target_probs, draft_probs, draft_tokens)
    gamma = len(tokens)
    if len(uniforms) != gamma + 1:
        raise ValueError(f"uniforms must have gamma + 1 = {gamma + 1} entries (got {len(uniforms)})")
    for i, u in enumerate(uniforms):
        if not 0.0 <= u < 1.0:
            raise ValueError(f"uniforms[{i}] must be in [0, 1) (got {u})")

    positions: list[Position] = []
    emitted: list[int] = []
    for i, token in enumerate(tokens):
        p_x, q_x = p_rows[i][token], q_rows[i][token]
        ratio = p_x / q_x if q_x > 0.0 else 0.0
        if verify(p_rows[i], q_rows[i], token, uniforms[i]):
            positions.append(Position(i, token, p_x, q_x, ratio, uniforms[i], "accepted"))
            emitted.append(token)
            continue
        # --8<-- [start:round_reject]
        # First rejection: this token is replaced, and every later draft was conditioned on it, so they go too.
        positions.append(Position(i, token, p_x, q_x, ratio, uniforms[i], "rejected"))
        for j in range(i + 1, gamma):
            later = tokens[j]
            p_later, q_later = p_rows[j][later], q_rows[j][later]
            ratio_later = p_later / q_later if q_later > 0.0 else 0.0
            positions.append(Position(j, later, p_later, q_later, ratio_later, None, "discarded"))
        final = correct(p_rows[i], q_rows[i], uniforms[gamma])
        return Round(emitted + [final], i, "correction", final, gamma, positions)
        # --8<-- [end:round_reject]

    final = bonus(p_rows[gamma], uniforms[gamma])
    return Round(emitted + [final], gamma, "bonus", final, gamma, positions)


# --8<-- [end:round_from_uniforms]


# --8<-- [start:speculative_round]
def speculative_round(
    target_probs: Sequence[Sequence[float]],  # [gamma + 1][V]
    draft_probs: Sequence[Sequence[float]],  # [gamma][V]
    draft_tokens: Sequence[int],  # [gamma]
    rng: random.Random,
) -> Round:
    """Verify ``draft_tokens`` against the target and emit the accepted prefix plus a correction or bonus.

    The uniforms are drawn up front, gamma + 1 of them in a fixed order, so a seeded ``rng`` gives the same
    round whatever the outcome.

    >>> r = speculative_round([[0.5, 0.5], [0.5, 0.5]], [[0.5, 0.5]], [1], random.Random(0))
    >>> r.accepted, r.ended_with, len(r.tokens)
    (1, 'bonus', 2)
    """
    if not isinstance(rng, random.Random):
        raise TypeError(f"rng must be a random.Random, got {type(rng).__name__}")
    gamma = len(draft_tokens) if isinstance(draft_tokens, Sequence) else 0
    uniforms = [rng.random() for _ in range(gamma + 1)]
    return speculative_round_from_uniforms(target_probs, draft_probs, draft_tokens, uniforms)


# --8<-- [end:speculative_round]
