"""Where drafts come from: three drafters the engine can run with, and Medusa's lossy typical acceptance.

A *drafter* proposes the next draft token's distribution q from the context and the drafts proposed so far in the
round: ``row(context, drafts) -> q`` (a full row over the vocabulary), or ``None`` to stop drafting this round.
``engine.SpeculativeRun(..., drafter=...)`` samples each draft token from that row and verifies it as usual, so a
drafter only has to say honestly which q it drew from. Three drafters:

(a) ``ModelDrafter``: a small draft model, drafting autoregressively, q_i = q(. | context, x_1..x_{i-1}).
    The baseline (the n-gram pair's bigram draft on the page).
(b) ``PromptLookupDrafter``: prompt lookup. Find the last earlier occurrence of the context's last n tokens
    (n from ``max_ngram`` down to ``min_ngram``, the longest that matches) and copy the tokens that followed it.
    q is one-hot on the copied token, so the verifier accepts it with probability min(1, p(x) / 1) = p(x), and
    on a rejection the correction comes from normalize(max(0, p - onehot(x))): p with x removed. When nothing
    matches, it drafts nothing that round, and the round is one plain target pass (its bonus token is drawn from
    p). The idea: Saxena's prompt-lookup decoding (github.com/apoorvumang/prompt-lookup-decoding), which
    transformers (``PromptLookupCandidateGenerator``) and vLLM (``NgramProposer``) implement.
(c) ``IndependentHeadsDrafter``: Medusa-style heads (Cai et al. 2024). Head i predicts the token i steps ahead
    from the context alone, without seeing drafts 1..i-1. We simulate head i with the draft model's i-step-ahead
    marginal, q_i(x) = sum over paths of q(x_1 | c) q(x_2 | c, x_1) ... with x_i = x: the best any head could do
    without the drafts before it. Position i's acceptance falls faster than with (a), because q_i spreads out.

All three keep the output distribution *exactly* the target's under the exact rule of ``steps.py``: the proof of
Leviathan et al. (2023, Appendix A.1) only needs each draft token to be drawn from the q the verifier is told,
where q may depend on the context and the earlier drafts in any way (a one-hot q included), or on the context
alone as in (c). ``tests/test_drafters.py`` checks it by exact enumeration and seeded Monte Carlo.

(d) ``typical_round_from_uniforms``: Medusa's *typical acceptance* (Cai et al. 2024, arXiv Section 3.3.1), a rule in
    place of the exact one. Draft token x at position i is accepted when p_i(x) > min(epsilon, delta *
    exp(-H(p_i))), H the entropy of the target's row in nats; the first rejected position gets a token drawn
    from p_i itself (no residual). Medusa's code calls epsilon ``posterior_threshold`` and delta
    ``posterior_alpha``, with defaults 0.09 and 0.3 (FasterDecoding/Medusa's ``medusa_generate``; at temperature 0,
    as in its published MT-bench answers, Medusa checks drafts by greedy match instead). It can accept more
    than the exact rule, and it is LOSSY: the emitted tokens no longer follow p. ``typical_output_distribution``
    gives the exact law of the first emitted token, and its distance from p is above zero whenever
    q restricted to the accepted set A is not q(A) times p.

Non-goals: trees of candidates (``multidraft``), trained heads, EAGLE's feature-level drafting, batching.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Protocol

from .distributions import sample, validate_probs
from .steps import Position, Round, bonus, speculative_round_from_uniforms

__all__ = [
    "DRAFTER_NAMES",
    "LOSSLESS",
    "IndependentHeadsDrafter",
    "ModelDrafter",
    "PromptLookupDrafter",
    "entropy",
    "exact_rule",
    "lookup_continuation",
    "typical_distance",
    "typical_output_distribution",
    "typical_round_from_uniforms",
    "typical_rule",
    "typical_threshold",
]

#: The drafters' short names, as the page and the handlers use them.
DRAFTER_NAMES = ("model", "lookup", "heads")

#: Which methods keep the output distribution exactly the target's: the three drafters under the exact rule do;
#: typical acceptance does not, whatever the drafter.
LOSSLESS = {"model": True, "lookup": True, "heads": True, "typical": False}


class _Model(Protocol):
    def probs(self, context: Sequence[int]) -> list[float]: ...


# (a) A draft model ------------------------------------------------------------------------------------------------


class ModelDrafter:
    """Autoregressive drafting from a draft model: q_i = model(context + drafts so far). Lossless."""

    name = "model"

    def __init__(self, model: _Model) -> None:
        if not callable(getattr(model, "probs", None)):
            raise TypeError(f"model must have a probs(context) method, got {type(model).__name__}")
        self.model = model

    def row(self, context: Sequence[int], drafts: Sequence[int]) -> list[float] | None:
        return list(self.model.probs([*context, *drafts]))


# (b) Prompt lookup ------------------------------------------------------------------------------------------------


# --8<-- [start:lookup]
def lookup_continuation(context: Sequence[int], length: int, max_ngram: int = 3, min_ngram: int = 1) -> list[int]:
    """The up to ``length`` tokens that followed the last earlier match of the context's last n tokens.

    n runs from ``max_ngram`` down to ``min_ngram``; the first n with a match wins, and among its matches the
    latest one (the nearest text is the likeliest to repeat). A match must be followed by at least one token, so
    the suffix never matches itself. No match: an empty list.

    >>> lookup_continuation([5, 6, 7, 8, 5, 6], 3)  # "5 6" occurred before, followed by 7 8 5
    [7, 8, 5]
    >>> lookup_continuation([1, 2, 3], 2)
    []
    """
    if length < 0 or min_ngram < 1 or max_ngram < min_ngram:
        raise ValueError("length must be >= 0 and 1 <= min_ngram <= max_ngram")
    size = len(context)
    for n in range(min(max_ngram, size - 1), min_ngram - 1, -1):
        suffix = list(context[size - n :])
        # NOTE: start j runs down from size - n - 1, so context[j + n] (the first copied token) always exists.
        for j in range(size - n - 1, -1, -1):
            if list(context[j : j + n]) == suffix:
                return list(context[j + n : j + n + length])
    return []


# --8<-- [end:lookup]


class PromptLookupDrafter:
    """Prompt lookup: copy what followed the last earlier match of the last n tokens; q one-hot. Lossless.

    Draft i of a round is the i-th token of the continuation found for the round's context (one match per
    round, as transformers and vLLM do); when the continuation is shorter than the policy allows, or empty,
    drafting stops there.

    >>> d = PromptLookupDrafter(vocab_size=10)
    >>> d.row([5, 6, 7, 8, 5, 6], [])[7], d.row([5, 6, 7, 8, 5, 6], [7])[8], d.row([1, 2, 3], [])
    (1.0, 1.0, None)
    """

    name = "lookup"

    def __init__(self, vocab_size: int, max_ngram: int = 3, min_ngram: int = 1, max_draft: int = 64) -> None:
        for value, label in ((vocab_size, "vocab_size"), (max_ngram, "max_ngram"), (min_ngram, "min_ngram")):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{label} must be an int, got {type(value).__name__}")
        if vocab_size < 1:
            raise ValueError(f"vocab_size must be at least 1 (got {vocab_size})")
        if not 1 <= min_ngram <= max_ngram:
            raise ValueError(
                f"min_ngram and max_ngram must satisfy 1 <= min_ngram <= max_ngram (got {min_ngram}, {max_ngram})"
            )
        self.vocab_size, self.max_ngram, self.min_ngram, self.max_draft = vocab_size, max_ngram, min_ngram, max_draft
        self._last: tuple[list[int], list[int]] | None = None  # (context, its continuation): one search per round

    def continuation(self, context: Sequence[int]) -> list[int]:
        """The tokens this drafter would copy after ``context`` (at most ``max_draft``)."""
        context = list(context)
        if self._last is None or self._last[0] != context:
            found = lookup_continuation(context, self.max_draft, self.max_ngram, self.min_ngram)
            self._last = (context, found)
        return self._last[1]

    def row(self, context: Sequence[int], drafts: Sequence[int]) -> list[float] | None:
        copied = self.continuation(context)
        if len(drafts) >= len(copied):
            return None
        token = copied[len(drafts)]
        if not 0 <= token < self.vocab_size:
            raise ValueError(f"context holds token {token}, outside the vocabulary 0..{self.vocab_size - 1}")
        q = [0.0] * self.vocab_size
        q[token] = 1.0
        return q


# (c) Independent heads --------------------------------------------------------------------------------------------


class IndependentHeadsDrafter:
    """Medusa-style heads, simulated: draft i comes from the draft model's i-step-ahead marginal. Lossless.

    The model's row must depend on the last token only (``context_size`` 0 or 1, as ``MarkovModel`` and the
    bigram ``NGramModel`` declare), so that the marginal is a chain: m_1 = q(. | c), m_{k+1}(x) = sum_v m_k(v)
    q(x | v). A model with ``mixed_row(weights)`` (the bigram n-gram) computes that sum from its counts in
    O(V + bigram types) instead of O(V^2). Marginals are cached per last token.

    >>> from specdec_core.models import MarkovModel
    >>> flip = MarkovModel([[0.0, 1.0], [1.0, 0.0]], start=[1.0, 0.0])  # always the other token
    >>> d = IndependentHeadsDrafter(flip)
    >>> d.row([0], []), d.row([0], [1]), d.row([0], [1, 0])  # 1 step: token 1; 2 steps: back to 0
    ([0.0, 1.0], [1.0, 0.0], [0.0, 1.0])
    """

    name = "heads"

    def __init__(self, model: _Model, cache_size: int = 64) -> None:
        size = getattr(model, "context_size", None)
        if size not in (0, 1):
            raise ValueError("model must declare context_size 0 or 1 (its row depends on the last token at most)")
        self.model, self.context_size = model, size
        self._cache: OrderedDict[tuple[int, ...], list[list[float]]] = OrderedDict()
        self._cache_size = cache_size

    # --8<-- [start:heads]
    def marginal(self, context: Sequence[int], steps: int) -> list[float]:
        """q's distribution of the token ``steps`` positions after ``context`` (steps >= 1), drafts unseen."""
        if steps < 1:
            raise ValueError(f"steps must be at least 1 (got {steps})")
        key = tuple(context[-1:]) if self.context_size else ()
        chain = self._cache.get(key)
        if chain is None:
            chain = [list(self.model.probs(list(context)))]
            self._cache[key] = chain
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        self._cache.move_to_end(key)
        while len(chain) < steps:
            chain.append(self._step(chain[-1]))
        return list(chain[steps - 1])

    def _step(self, weights: list[float]) -> list[float]:
        if self.context_size == 0:
            return list(weights)  # i.i.d. positions: every marginal is the same row
        mixed = getattr(self.model, "mixed_row", None)
        if callable(mixed):
            return list(mixed(weights))
        out = [0.0] * len(weights)
        for v, w in enumerate(weights):
            if w > 0.0:
                for x, qx in enumerate(self.model.probs([v])):
                    out[x] += w * qx
        return out

    def row(self, context: Sequence[int], drafts: Sequence[int]) -> list[float] | None:
        # NOTE: the drafts are deliberately unused: head i never sees drafts 1..i-1.
        return self.marginal(context, len(drafts) + 1)

    # --8<-- [end:heads]


# (d) Typical acceptance (lossy) -----------------------------------------------------------------------------------

#: A verification rule, as the engine calls it: (target rows [gamma + 1][V], draft rows [gamma][V], drafts [gamma],
#: uniforms [gamma + 1]) -> Round.
RoundRule = Callable[[Sequence[Sequence[float]], Sequence[Sequence[float]], Sequence[int], Sequence[float]], Round]


def entropy(p: Sequence[float]) -> float:
    """Shannon entropy in nats, with 0 log 0 = 0.

    >>> round(entropy([0.5, 0.5]), 6)
    0.693147
    """
    return -math.fsum(x * math.log(x) for x in p if x > 0.0)


# --8<-- [start:typical]
def typical_threshold(p: Sequence[float], epsilon: float, delta: float) -> float:
    """Medusa's bar a draft token must clear: min(epsilon, delta * exp(-H(p))) (Cai et al. 2024, arXiv Sec. 3.3.1).

    A peaked p (low entropy) asks for up to epsilon; a flat p lowers the bar, so more tokens pass.

    >>> round(typical_threshold([0.5, 0.5], 0.09, 0.3), 6)  # exp(-ln 2) * 0.3 = 0.15 > 0.09
    0.09
    >>> round(typical_threshold([0.25] * 4, 0.5, 0.3), 6)  # exp(-ln 4) * 0.3 = 0.075
    0.075
    """
    return min(epsilon, delta * math.exp(-entropy(p)))


# --8<-- [end:typical]


def _check_typical(epsilon: float, delta: float) -> tuple[float, float]:
    for value, label in ((epsilon, "epsilon"), (delta, "delta")):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"{label} must be a number, got {type(value).__name__}")
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{label} must be between 0 and 1 (got {value})")
    return float(epsilon), float(delta)


def typical_round_from_uniforms(
    target_probs: Sequence[Sequence[float]],  # [gamma + 1][V]
    draft_probs: Sequence[Sequence[float]],  # [gamma][V]
    draft_tokens: Sequence[int],  # [gamma]
    uniforms: Sequence[float],  # [gamma + 1]: only the last one is used (the token after the accepted prefix)
    *,
    epsilon: float = 0.09,
    delta: float = 0.3,
) -> Round:
    """One round under typical acceptance: LOSSY. Same shape and record as ``steps.speculative_round_from_uniforms``.

    Draft token x_i is accepted when p_i(x_i) > ``typical_threshold(p_i, epsilon, delta)``; q is not consulted,
    so the verify uniforms go unused (the Position keeps them for the record). At the first rejection the token
    is drawn from p_i, the target's own row; after a full acceptance, from p_{gamma+1} (the bonus).

    >>> r = typical_round_from_uniforms([[0.5, 0.5], [1.0, 0.0]], [[0.0, 1.0]], [1], [0.9, 0.5])
    >>> r.accepted, r.ended_with, r.tokens  # p(1) = 0.5 > min(0.09, 0.15): accepted, then the bonus
    (1, 'bonus', [1, 0])
    """
    eps, dlt = _check_typical(epsilon, delta)
    gamma = len(draft_tokens)
    p_rows = [validate_probs(row, f"target_probs[{i}]") for i, row in enumerate(target_probs)]
    if len(p_rows) != gamma + 1 or len(draft_probs) != gamma or len(uniforms) != gamma + 1:
        raise ValueError("target_probs, draft_probs and uniforms must have gamma + 1, gamma and gamma + 1 rows")
    positions: list[Position] = []
    for i, token in enumerate(draft_tokens):
        p_x, q_x = p_rows[i][token], draft_probs[i][token]
        ratio = p_x / q_x if q_x > 0.0 else 0.0
        if p_x > typical_threshold(p_rows[i], eps, dlt):
            positions.append(Position(i, token, p_x, q_x, ratio, uniforms[i], "accepted"))
            continue
        positions.append(Position(i, token, p_x, q_x, ratio, uniforms[i], "rejected"))
        for j in range(i + 1, gamma):
            later = draft_tokens[j]
            p_j, q_j = p_rows[j][later], draft_probs[j][later]
            positions.append(Position(j, later, p_j, q_j, p_j / q_j if q_j > 0.0 else 0.0, None, "discarded"))
        final = sample(p_rows[i], uniforms[gamma])
        return Round([*draft_tokens[:i], final], i, "correction", final, gamma, positions)
    final = bonus(p_rows[gamma], uniforms[gamma])
    return Round([*draft_tokens, final], gamma, "bonus", final, gamma, positions)


def typical_rule(epsilon: float = 0.09, delta: float = 0.3) -> RoundRule:
    """``typical_round_from_uniforms`` with its knobs fixed, as ``engine.SpeculativeRun(rule=...)`` takes it."""
    eps, dlt = _check_typical(epsilon, delta)

    def rule(
        target_probs: Sequence[Sequence[float]],
        draft_probs: Sequence[Sequence[float]],
        draft_tokens: Sequence[int],
        uniforms: Sequence[float],
    ) -> Round:
        return typical_round_from_uniforms(target_probs, draft_probs, draft_tokens, uniforms, epsilon=eps, delta=dlt)

    return rule


def exact_rule() -> RoundRule:
    """The exact rule (``steps.speculative_round_from_uniforms``), for symmetry with ``typical_rule``."""
    return speculative_round_from_uniforms


def typical_output_distribution(
    p: Sequence[float | Fraction], q: Sequence[float | Fraction], epsilon: float = 0.09, delta: float = 0.3
) -> list[Fraction]:
    """Exact law of the first token a typical-acceptance round emits, given the target row p and draft row q.

    With A = {x : p(x) > min(epsilon, delta exp(-H(p)))} (decided in floating point, as the rule decides), the
    draft x ~ q is kept when x is in A, and otherwise a token is drawn from p:

        out(x) = q(x) [x in A] + q(not A) p(x).

    The exact rule would give p. Here out = p only when q restricted to A equals q(A) p, so in general
    the distance is above zero. With p = [.4, .35, .25] and q = [.2, .2, .6] every token clears the bar
    (min(0.09, 0.3 exp(-H)) ~ 0.10 > 0.09), so A is everything and out = q: the draft's law, not the target's.

    >>> [float(x) for x in typical_output_distribution([0.4, 0.35, 0.25], [0.2, 0.2, 0.6])]
    [0.2, 0.2, 0.6]
    """
    eps, dlt = _check_typical(epsilon, delta)
    p_exact = [Fraction(x) for x in p]
    q_exact = [Fraction(x) for x in q]
    if len(p_exact) != len(q_exact) or not p_exact:
        raise ValueError("p and q must be non-empty and of the same length")
    if min(p_exact + q_exact) < 0 or sum(p_exact) == 0 or sum(q_exact) == 0:
        raise ValueError("p and q must be non-negative with positive mass")
    # Floats are taken as the binary fractions they are and normalised exactly, so a float row that sums to
    # 1 only up to rounding still gives an exact law.
    p_total, q_total = sum(p_exact), sum(q_exact)
    p_exact = [x / p_total for x in p_exact]
    q_exact = [x / q_total for x in q_exact]
    bar = typical_threshold([float(x) for x in p_exact], eps, dlt)
    kept = [float(x) > bar for x in p_exact]
    missed = sum((qx for qx, k in zip(q_exact, kept, strict=True) if not k), Fraction(0))
    return [(qx if k else Fraction(0)) + missed * px for px, qx, k in zip(p_exact, q_exact, kept, strict=True)]


def typical_distance(p: Sequence[float], q: Sequence[float], epsilon: float = 0.09, delta: float = 0.3) -> float:
    """Total variation between the first token's law under typical acceptance and p, in floating point.

    The float twin of ``typical_output_distribution`` for a full vocabulary (the page takes it at every round):
    with out = q 1_A + q(not A) p, the distance is (1/2) sum_x |out(x) - p(x)|.

    >>> round(typical_distance([0.4, 0.35, 0.25], [0.2, 0.2, 0.6]), 12)  # every token passes: out = q
    0.35
    """
    eps, dlt = _check_typical(epsilon, delta)
    if len(p) != len(q):
        raise ValueError(f"p and q must have the same length (got {len(p)} and {len(q)})")
    bar = typical_threshold(p, eps, dlt)
    missed = math.fsum(qx for px, qx in zip(p, q, strict=True) if not px > bar)
    return 0.5 * math.fsum(abs((qx if px > bar else 0.0) + missed * px - px) for px, qx in zip(p, q, strict=True))
