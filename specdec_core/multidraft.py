"""Several drafts per position, and token trees verified in one target pass.

A chain drafts one token per position; a *tree* drafts up to k candidates at each position, each with its own
continuation. The target scores every node of the tree in one forward pass (a tree-attention mask lets each node
see only its ancestors), and verification walks down from the root, keeping the output exactly the target's.

**Recursive rejection** (SpecInfer's multi-step speculative sampling, Miao et al. 2024, Algorithm 2). At one
position the target is p and the draft q; candidates x_1..x_k are drawn i.i.d. from q. With r_1 = p:

    candidate i is accepted with probability min(1, r_i(x_i) / q(x_i));
    after a rejection, r_{i+1} = residual(r_i, q) = normalize(max(0, r_i - q));
    if all k are rejected, the token is drawn from r_{k+1}  (the *correction*).

Why it is exact, by induction from the last candidate: given that candidate i is reached, the token emitted is
x_i with probability q(y) min(1, r_i(y)/q(y)) = min(q, r_i)(y), or, after the rejection (probability
1 - sum min(r_i, q)), a token distributed as r_{i+1} by induction; min(q, r_i) + max(0, r_i - q) = r_i. With i = 1
the emitted token follows r_1 = p (Leviathan et al. 2023, Appendix A.1, applied k times).

**Without replacement** (trees are usually built from the top-k distinct children). Drawing x_i from q with
x_1..x_{i-1} removed, renormalised (q_i), breaks the rule above: a token rejected once could never come back
through q, yet r_{i+1} was built as if it could. The exact rule uses q_i in both places, accept with
min(1, r_i(x_i) / q_i(x_i)) and r_{i+1} = residual(r_i, q_i): the induction above goes through unchanged because
candidate i is an exact draw from q_i given the earlier ones. This is the recursive rejection sampling of Jeon et
al. (2024, Recursive Speculative Decoding), who draw the distinct candidates with the Gumbel-top-k trick; SpecTr
(Sun et al. 2023) first framed multi-draft verification as the optimal-transport problem these rules solve
approximately. When q has fewer than k tokens of positive probability, a node gets fewer children.

**The tree round.** Each node at depth < d gets up to k children drawn from the draft at that node's context
(siblings that drew the same token share one node: the tree is a trie of the drafted sequences). From the root,
recursive rejection runs over the current node's candidates; the accepted child becomes the current node. If every
candidate is rejected, a correction is drawn from the last residual; if a leaf is accepted, a *bonus* token is drawn
from the target at that leaf. Each node ends with one fate: accepted, rejected, never checked (its parent was not
on the path, or a sibling before it was accepted), and the round adds one correction or bonus node. The tree's shape
may depend on anything drawn before a node's children are drawn (the dynamic tree below does), because a node's
children are then still a fresh draw from q at its context.

**Theory** (``tree_expected_tokens``). Under the i.i.d. per-position model (the same p and q at every position,
Leviathan et al. 2023, Section 3.1), let A = P(some of k candidates is accepted) =
1 - prod_{i=1..k} (1 - beta_i), beta_i = sum_x min(r_i(x), q(x)): the recursion rejects candidate i with
probability 1 - beta_i whatever token it drew, since r_{i+1} does not depend on it. In a full tree every accepted
node below depth d has its own k fresh children, so the walk passes level j with probability A^j independently of
the levels above. The tokens a pass emits are N = L + 1 with L the levels accepted, and

    E[N] = sum_{j=0}^{d} P(L >= j) = sum_{j=0}^{d} A^j = (1 - A^{d+1}) / (1 - A)   (d + 1 when A = 1),

Eq. 1 of Leviathan et al. with alpha replaced by A and gamma by d, for k + k^2 + ... + k^d nodes scored per pass.

Randomness comes in through a *chooser* (``accept(prob)``, ``pick(row)``): ``RandomChooser`` draws from a
``random.Random``; ``enumerate_outcomes`` replays the same code along every branch with exact ``Fraction``
weights, which is how the tests prove exactness of the code itself, not of a copy.

Non-goals: batching, KV caches, learned draft heads (Medusa, EAGLE); ``dynamic_tree`` only borrows EAGLE-2's idea
(Li et al. 2024) of spending a node budget on the branches with the highest draft path probability.
"""

from __future__ import annotations

import math
import random
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import accumulate
from typing import Any, Literal, Protocol, TypeVar, cast

from .distributions import ROW_TOLERANCE, check_gamma, sample, validate_probs

__all__ = [
    "Chooser",
    "Fate",
    "Model",
    "RandomChooser",
    "TreeNode",
    "TreeRound",
    "Verdict",
    "attention_mask",
    "enumerate_outcomes",
    "exact_multidraft_distribution",
    "full_tree_nodes",
    "multidraft_acceptance",
    "recursive_rejection",
    "recursive_rejection_without_replacement",
    "tree_expected_tokens",
    "tree_round",
    "tree_round_with",
]

#: Most candidates per position and deepest tree the package builds (a full tree has k + ... + k^d nodes).
MAX_K = 8
MAX_DEPTH = 8

Prob = float | Fraction
T = TypeVar("T")
Fate = Literal["context", "accepted", "rejected", "never checked", "correction", "bonus"]

#: A model as the tree sees it: context (token ids) -> next-token distribution [V] (floats, or Fractions when
#: enumerating exactly).
Model = Callable[[Sequence[int]], Sequence[Prob]]


# Choosers: where randomness comes from -------------------------------------------------------------------------


class Chooser(Protocol):
    """The two random acts of the algorithm: a biased coin and a draw from a distribution."""

    def accept(self, prob: Prob) -> bool: ...

    def pick(self, row: Sequence[Prob]) -> int: ...

    def pick_excluding(self, row: Sequence[Prob], excluded: Sequence[int]) -> int | None: ...


class RandomChooser:
    """Draws with a ``random.Random``: one uniform per coin, one per draw (rejection-resampling for exclusions).

    The cumulative sums of the last rows drawn from are kept, since a tree draws k children from each row.
    """

    def __init__(self, rng: random.Random) -> None:
        if not isinstance(rng, random.Random):
            raise TypeError(f"rng must be a random.Random, got {type(rng).__name__}")
        self.rng = rng
        self._cdf: dict[int, tuple[Sequence[Prob], list[float]]] = {}

    def accept(self, prob: Prob) -> bool:
        return self.rng.random() < prob

    def pick(self, row: Sequence[Prob]) -> int:
        held = self._cdf.get(id(row))
        if held is None or held[0] is not row:
            if len(self._cdf) > 4096:
                self._cdf.clear()
            floats: Sequence[float] = row if type(row[0]) is float else [float(x) for x in row]  # type: ignore[assignment]
            held = (row, list(accumulate(floats)))
            self._cdf[id(row)] = held
        cdf, u = held[1], self.rng.random()
        i = bisect_right(cdf, u)
        # Same token as distributions.sample: the first i whose cumulative sum exceeds u (so p(i) > 0); rounding
        # can leave the total a hair below 1, and u above it falls back to the last token with mass.
        return i if i < len(cdf) else sample([float(x) for x in row], u * cdf[-1] if cdf[-1] > 0 else 0.0)

    def pick_excluding(self, row: Sequence[Prob], excluded: Sequence[int]) -> int | None:
        left = 1.0 - math.fsum(float(row[x]) for x in excluded)
        if left <= ROW_TOLERANCE:
            return None
        # Redrawing until the token is new is an exact draw from the renormalised rest; after many misses (the
        # excluded tokens hold nearly all the mass) draw from the rest directly.
        for _ in range(32):
            token = self.pick(row)
            if token not in excluded:
                return token
        return self.pick(_without(row, excluded))


@dataclass
class _Replay:
    """A chooser that follows a script of branch indices and then always takes the first branch."""

    script: list[int]
    taken: list[int] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    weight: Fraction = Fraction(1)

    def _choose(self, options: list[tuple[T, Fraction]]) -> T:
        live = [(value, w) for value, w in options if w > 0]
        step = len(self.taken)
        index = self.script[step] if step < len(self.script) else 0
        self.taken.append(index)
        self.sizes.append(len(live))
        value, w = live[index]
        self.weight *= w
        return value

    def accept(self, prob: Prob) -> bool:
        a = Fraction(prob)
        return self._choose([(True, a), (False, 1 - a)])

    def pick(self, row: Sequence[Prob]) -> int:
        return self._choose([(i, Fraction(x)) for i, x in enumerate(row)])

    def pick_excluding(self, row: Sequence[Prob], excluded: Sequence[int]) -> int | None:
        if sum((Fraction(row[x]) for x in set(excluded)), Fraction(0)) >= 1:
            return None
        return self.pick(_without(row, excluded))


def enumerate_outcomes(run: Callable[[Chooser], T]) -> list[tuple[Fraction, T]]:
    """Every outcome of ``run(chooser)`` with its exact probability, by replaying ``run`` along each branch.

    Branches of probability zero are never taken. The probabilities sum to 1 when ``run`` only ever chooses from
    exact distributions (Fractions, or floats whose exact binary values sum to 1).

    >>> sorted(enumerate_outcomes(lambda c: c.pick([Fraction(1, 4), Fraction(3, 4)])))
    [(Fraction(1, 4), 0), (Fraction(3, 4), 1)]
    """
    out: list[tuple[Fraction, T]] = []
    scripts: list[list[int]] = [[]]
    while scripts:
        script = scripts.pop()
        chooser = _Replay(script)
        result = run(chooser)
        for step in range(len(script), len(chooser.taken)):
            scripts.extend(chooser.taken[:step] + [j] for j in range(1, chooser.sizes[step]))
        out.append((chooser.weight, result))
    return out


# Rows: residuals and renormalisation, for floats and Fractions alike ------------------------------------------


def _residual(r: Sequence[Prob], q: Sequence[Prob]) -> list[Prob]:
    """normalize(max(0, r - q)); ``r`` itself when nothing is left (a rejection then has probability zero)."""
    excess: list[Prob] = [a - b if a > b else 0 * a for a, b in zip(r, q, strict=True)]
    exact = isinstance(excess[0], Fraction)
    total: Prob = sum(excess, Fraction(0)) if exact else math.fsum(float(x) for x in excess)
    if total <= 0 or (not exact and total <= ROW_TOLERANCE * 1e-3):
        return list(r)
    return [x / total for x in excess]


def _without(row: Sequence[Prob], excluded: Sequence[int]) -> list[Prob]:
    """``row`` with the ``excluded`` tokens removed and the rest renormalised."""
    gone = set(excluded)
    kept: list[Prob] = [0 * x if i in gone else x for i, x in enumerate(row)]
    exact = isinstance(kept[0], Fraction)
    total: Prob = sum(kept, Fraction(0)) if exact else math.fsum(float(x) for x in kept)
    return [x / total for x in kept]


# The three rules the exactness proof rests on, each one small function so that a test can swap in a wrong one
# and watch the proof fail.


def _next_residual(r: Sequence[Prob], q: Sequence[Prob], p: Sequence[Prob]) -> list[Prob]:
    """r_{i+1} = residual(r_i, q_i): from the current residual, not from the target ``p``."""
    return _residual(r, q)


def _correction_row(r: Sequence[Prob], p: Sequence[Prob]) -> Sequence[Prob]:
    """All candidates rejected: the correction comes from the last residual r_{k+1}, not from ``p``."""
    return r


def _checked_draft_row(tree: TreeRound, node: int) -> Sequence[Prob]:
    """The draft row a node's children were drawn from: the one their acceptance must be measured against."""
    row = tree.draft_rows[node]
    if row is None:
        raise ValueError(f"node {node} has no children to check")
    return row


# Recursive rejection at one position ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """The outcome at one position: the emitted ``token``; ``accepted``, the index of the accepted candidate or
    None when all were rejected (the token is then a correction); ``checked``, how many candidates were looked at.
    """

    token: int
    accepted: int | None
    checked: int

    def to_dict(self) -> dict[str, Any]:
        return {"token": self.token, "accepted": self.accepted, "checked": self.checked}


def _candidate_rows(q: Sequence[Prob], candidates: Sequence[int], replacement: bool) -> list[Sequence[Prob]]:
    """The row each candidate was drawn from: q every time, or q without the earlier candidates."""
    if replacement:
        return [q] * len(candidates)
    return [q if i == 0 else _without(q, candidates[:i]) for i in range(len(candidates))]


# --8<-- [start:recursive]
def _recursive(
    p: Sequence[Prob], q: Sequence[Prob], candidates: Sequence[int], chooser: Chooser, replacement: bool
) -> Verdict:
    """Recursive rejection over ``candidates`` (see the module docstring), with ``chooser``'s randomness."""
    r: Sequence[Prob] = p
    for i, (x, q_i) in enumerate(zip(candidates, _candidate_rows(q, candidates, replacement), strict=True)):
        # A candidate q_i could not have produced (q_i(x) = 0) is rejected outright, as steps.verify does.
        if q_i[x] > 0 and chooser.accept(min(1, r[x] / q_i[x])):
            return Verdict(x, i, i + 1)
        r = _next_residual(r, q_i, p)
    return Verdict(chooser.pick(_correction_row(r, p)), None, len(candidates))


# --8<-- [end:recursive]


def _check_position(
    target_probs: Sequence[float], draft_probs: Sequence[float], candidates: Sequence[int], distinct: bool
) -> tuple[list[float], list[float], list[int]]:
    p = validate_probs(target_probs, "target_probs")
    q = validate_probs(draft_probs, "draft_probs")
    if len(p) != len(q):
        raise ValueError(f"target_probs and draft_probs must have the same length (got {len(p)} and {len(q)})")
    if isinstance(candidates, str | bytes) or not isinstance(candidates, Sequence):
        raise TypeError(f"candidates must be a sequence of ints, got {type(candidates).__name__}")
    if not 1 <= len(candidates) <= MAX_K:
        raise ValueError(f"candidates must hold between 1 and {MAX_K} token ids (got {len(candidates)})")
    for i, x in enumerate(candidates):
        if isinstance(x, bool) or not isinstance(x, int):
            raise TypeError(f"candidates[{i}] must be an int, got {type(x).__name__}")
        if not 0 <= x < len(p):
            raise ValueError(f"candidates[{i}] must be a token id in 0..{len(p) - 1} (got {x})")
    if distinct and len(set(candidates)) != len(candidates):
        raise ValueError("candidates must be distinct when drawn without replacement")
    return p, q, list(candidates)


def recursive_rejection(
    target_probs: Sequence[float],  # [V] p at this position
    draft_probs: Sequence[float],  # [V] q at this position
    candidates: Sequence[int],  # [k] drawn i.i.d. from q
    rng: random.Random,
) -> Verdict:
    """SpecInfer's multi-step speculative sampling at one position (Miao et al. 2024, Algorithm 2).

    Worked example: p = [.4, .35, .25], q = [.2, .2, .6], candidates [2, 2]. Candidate 0 is accepted with
    probability p(2)/q(2) = 5/12. If it is rejected, r_2 = residual(p, q) = [4/7, 3/7, 0] puts no mass on token 2,
    so candidate 1 is rejected for sure and the correction comes from residual(r_2, q) = [4/7, 3/7, 0].

    >>> recursive_rejection([0.4, 0.35, 0.25], [0.2, 0.2, 0.6], [2, 2], random.Random(1))
    Verdict(token=2, accepted=0, checked=1)
    >>> recursive_rejection([0.4, 0.35, 0.25], [0.2, 0.2, 0.6], [2, 2], random.Random(0))
    Verdict(token=0, accepted=None, checked=2)
    """
    p, q, xs = _check_position(target_probs, draft_probs, candidates, distinct=False)
    return _recursive(p, q, xs, RandomChooser(rng), replacement=True)


def recursive_rejection_without_replacement(
    target_probs: Sequence[float],  # [V] p at this position
    draft_probs: Sequence[float],  # [V] q at this position
    candidates: Sequence[int],  # [k] distinct: x_i drawn from q without x_1..x_{i-1}, renormalised
    rng: random.Random,
) -> Verdict:
    """Recursive rejection for distinct candidates (Jeon et al. 2024): q_i replaces q in the test and residual.

    Worked example: p = [.5, .5, 0], q = [0, .5, .5], candidates [2, 1]. p(2) = 0 rejects token 2 and leaves
    r_2 = residual(p, q) = [1, 0, 0]; token 1 was drawn from q_2 = [0, 1, 0] and r_2(1) = 0 rejects it; the
    correction comes from residual(r_2, q_2) = [1, 0, 0], whatever the seed.

    >>> recursive_rejection_without_replacement([0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [2, 1], random.Random(0))
    Verdict(token=0, accepted=None, checked=2)
    """
    p, q, xs = _check_position(target_probs, draft_probs, candidates, distinct=True)
    return _recursive(p, q, xs, RandomChooser(rng), replacement=False)


# Exact laws and theory -----------------------------------------------------------------------------------------


def _exact_row(row: Sequence[Prob], name: str) -> list[Fraction]:
    """Fractions (a float converts exactly), rescaled by their exact sum, after the usual checks."""
    if isinstance(row, str | bytes) or not isinstance(row, Sequence):
        raise TypeError(f"{name} must be a sequence of probabilities, got {type(row).__name__}")
    if not row:
        raise ValueError(f"{name} must not be empty (the vocabulary needs at least one token)")
    out: list[Fraction] = []
    for i, x in enumerate(row):
        if isinstance(x, bool) or not isinstance(x, int | float | Fraction):
            raise TypeError(f"{name}[{i}] must be a real number, got {type(x).__name__}")
        if isinstance(x, float) and not math.isfinite(x):
            raise ValueError(f"{name}[{i}] must be finite, got {x}")
        if x < 0:
            raise ValueError(f"{name}[{i}] must be non-negative, got {x}")
        out.append(Fraction(x))
    total = sum(out, Fraction(0))
    if abs(total - 1) > Fraction(1, 10**9):
        raise ValueError(f"{name} must sum to 1 (got {float(total):.12g})")
    return [x / total for x in out]


def _check_k(k: object, vocab: int | None = None) -> int:
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"k must be an int, got {type(k).__name__}")
    if not 1 <= k <= MAX_K:
        raise ValueError(f"k must be between 1 and {MAX_K} (got {k})")
    return k


def _exact_pair(p: Sequence[Prob], q: Sequence[Prob], k: object) -> tuple[list[Fraction], list[Fraction], int]:
    p_row, q_row = _exact_row(p, "p"), _exact_row(q, "q")
    if len(p_row) != len(q_row):
        raise ValueError(f"p and q must have the same length (got {len(p_row)} and {len(q_row)})")
    return p_row, q_row, _check_k(k)


def _position_law(p: list[Fraction], q: list[Fraction], k: int, replacement: bool) -> list[tuple[Fraction, Verdict]]:
    """Every verdict at one position with its probability: the k draws from q, then the recursion."""

    def one(chooser: Chooser) -> Verdict:
        drawn: list[int] = []
        for _ in range(k):
            x = chooser.pick(q) if replacement else chooser.pick_excluding(q, drawn)
            if x is None:
                break
            drawn.append(x)
        return _recursive(p, q, drawn, chooser, replacement) if drawn else Verdict(chooser.pick(p), None, 0)

    return enumerate_outcomes(one)


def exact_multidraft_distribution(
    p: Sequence[Prob], q: Sequence[Prob], k: int, *, replacement: bool = True
) -> list[Fraction]:
    """The exact law of the token recursive rejection emits from k candidates; it equals p.

    Enumerates the k draws (i.i.d., or without replacement) and every accept / reject branch of the same code
    the sampler runs.

    >>> exact_multidraft_distribution([0.4, 0.35, 0.25], [0.2, 0.2, 0.6], 2) == exact_multidraft_distribution(
    ...     [0.4, 0.35, 0.25], [0.2, 0.2, 0.6], 1)
    True
    """
    p_row, q_row, kk = _exact_pair(p, q, k)
    law = [Fraction(0)] * len(p_row)
    for weight, verdict in _position_law(p_row, q_row, kk, replacement):
        law[verdict.token] += weight
    return law


def multidraft_acceptance(p: Sequence[Prob], q: Sequence[Prob], k: int, *, replacement: bool = True) -> Fraction:
    """P(some candidate is accepted) = 1 - prod_{i=1..k} (1 - sum_x min(r_i(x), q(x))), r_1 = p, exactly.

    Without replacement the rejection chances depend on which tokens were drawn, so the probability is summed
    over the enumerated draws instead. Worked example: p = [.4, .35, .25], q = [.2, .2, .6]: beta_1 = .65,
    r_2 = [4/7, 3/7, 0], beta_2 = .4, so two candidates are accepted with probability 1 - .35 * .6 = .79.

    >>> multidraft_acceptance([Fraction(2, 5), Fraction(7, 20), Fraction(1, 4)], [Fraction(1, 5), Fraction(1, 5),
    ...     Fraction(3, 5)], 2)
    Fraction(79, 100)
    """
    p_row, q_row, kk = _exact_pair(p, q, k)
    if not replacement:
        return _distinct_acceptance(p_row, q_row, kk)
    r: Sequence[Prob] = p_row
    rejected_all = Fraction(1)
    for _ in range(kk):
        beta = sum((min(Fraction(a), b) for a, b in zip(r, q_row, strict=True)), Fraction(0))
        rejected_all *= 1 - beta
        r = _residual(r, q_row)
    return 1 - rejected_all


def _distinct_acceptance(p: list[Fraction], q: list[Fraction], k: int) -> Fraction:
    """P(some of k distinct candidates is accepted), summed over the ordered draws by recursion.

    The residual after a rejection, residual(r_i, q_i), depends on the tokens drawn so far but not on the one just
    rejected, so each level computes it once for all its branches: one visit per ordered draw, V (V-1) ... (V-k+2)
    of them, where replaying the sampler for every branch (``_position_law``, which tests hold this to) took seconds
    for V = 8, k = 4. Candidates stop when q has no token left, as ``tree_round`` draws them.
    """

    def walk(r: list[Fraction], drawn: tuple[int, ...]) -> Fraction:
        if sum((q[x] for x in drawn), Fraction(0)) == 1:
            return Fraction(0)  # q has no token left to draw
        q_i = cast(list[Fraction], _without(q, drawn)) if drawn else q  # Fractions in, Fractions out
        after = cast(list[Fraction], _residual(r, q_i)) if len(drawn) + 1 < k else None
        total = Fraction(0)
        for x, qx in enumerate(q_i):
            if qx == 0:
                continue
            accept = min(Fraction(1), r[x] / qx)
            total += qx * accept
            if after is not None and accept < 1:
                total += qx * (1 - accept) * walk(after, (*drawn, x))
        return total

    return walk(p, ())


def tree_expected_tokens(acceptance: float, depth: int) -> float:
    """E[tokens per target pass] for a full tree of ``depth`` levels whose levels pass with probability A.

    sum_{j=0}^{d} A^j (derivation in the module docstring); d + 1 when A = 1.

    >>> tree_expected_tokens(0.79, 2)
    2.4141
    """
    a = float(acceptance)
    if not 0.0 <= a <= 1.0:
        raise ValueError(f"acceptance must be between 0 and 1 (got {acceptance})")
    d = check_gamma(depth, "depth")
    return round(math.fsum(a**j for j in range(d + 1)), 12)


def full_tree_nodes(k: int, depth: int) -> int:
    """Nodes in a full k-ary tree of ``depth`` levels below the root: k + k^2 + ... + k^d.

    >>> full_tree_nodes(1, 5), full_tree_nodes(4, 5)
    (5, 1364)
    """
    return sum(_check_k(k) ** j for j in range(1, _check_depth(depth) + 1))


def _check_depth(depth: object) -> int:
    if isinstance(depth, bool) or not isinstance(depth, int):
        raise TypeError(f"depth must be an int, got {type(depth).__name__}")
    if not 1 <= depth <= MAX_DEPTH:
        raise ValueError(f"depth must be between 1 and {MAX_DEPTH} (got {depth})")
    return depth


# Token trees ---------------------------------------------------------------------------------------------------


@dataclass
class TreeNode:
    """One node of a drafted tree. The root (index 0) is the context; ``token`` and ``parent`` are -1 there.

    ``draft_prob`` is q(token) at the parent's context and ``path_prob`` the product of those along the path
    (the draft's own probability of the sequence, which the dynamic tree ranks by).
    """

    index: int
    parent: int
    token: int
    depth: int
    draft_prob: float
    path_prob: float
    tokens: tuple[int, ...]  # the path's tokens below the root
    fate: Fate = "never checked"

    def to_dict(self) -> dict[str, Any]:
        keys = ("index", "parent", "token", "depth", "draft_prob", "path_prob", "fate")
        return {key: getattr(self, key) for key in keys}


@dataclass
class TreeRound:
    """The record of one tree round: the drafted tree, every node's fate and what was emitted.

    ``candidates[n]`` lists, in draw order, the child each of node n's candidates landed on (i.i.d. draws that
    repeat a token repeat its child); ``draft_rows[n]`` is the draft row they were drawn from (None for a node
    never expanded). ``checks`` holds one ``Verdict`` per level the walk verified. The final node (the correction
    or the bonus) is the last of ``nodes``; ``nodes_scored`` counts the drafted nodes the target's one pass scored.
    """

    context: tuple[int, ...]
    replacement: bool
    nodes: list[TreeNode]
    candidates: list[list[int]]
    draft_rows: list[Sequence[Prob] | None]
    tokens: list[int] = field(default_factory=list)
    path: list[int] = field(default_factory=list)
    checks: list[Verdict] = field(default_factory=list)
    ended_with: Literal["correction", "bonus", ""] = ""

    @property
    def accepted(self) -> int:
        return len(self.path)

    @property
    def nodes_scored(self) -> int:
        return len(self.nodes) - 2 if self.ended_with else len(self.nodes) - 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "tokens": list(self.tokens),
            "accepted": self.accepted,
            "ended_with": self.ended_with,
            "nodes_scored": self.nodes_scored,
            "path": list(self.path),
            "nodes": [node.to_dict() for node in self.nodes],
            "checks": [check.to_dict() for check in self.checks],
        }


def _model_fn(model: object, name: str) -> tuple[Model, int | None]:
    """A callable for ``model`` (a callable, or an object with ``probs``) and the context length its rows use."""
    probs = getattr(model, "probs", None)
    fn = probs if callable(probs) else model
    if not callable(fn):
        raise TypeError(f"{name} must be a model with probs(context) or a callable, got {type(model).__name__}")
    size = getattr(model, "context_size", None)
    return fn, size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else None


class _Rows:
    """Rows of one model within a round, fetched once per distinct context the model's rows depend on."""

    def __init__(self, model: object, name: str) -> None:
        self.fn, self.size = _model_fn(model, name)
        self.name = name
        self.cache: dict[tuple[int, ...], Sequence[Prob]] = {}

    def __call__(self, context: tuple[int, ...]) -> Sequence[Prob]:
        # NOTE: context[-0:] would be the whole context, hence the explicit case.
        key = context if self.size is None else (context[-self.size :] if self.size else ())
        row = self.cache.get(key)
        if row is None:
            row = self.fn(list(context))
            if not row or not isinstance(row[0], Fraction):
                row = validate_probs(row, f"{self.name} output")  # type: ignore[arg-type]
            self.cache[key] = row
        return row


def _expand(tree: TreeRound, node: int, draft: _Rows, k: int, chooser: Chooser) -> list[int]:
    """Draw up to k candidates from the draft at ``node``'s context; new distinct tokens become child nodes."""
    parent = tree.nodes[node]
    q = draft(tree.context + parent.tokens)
    tree.draft_rows[node] = q
    drawn: list[int] = []
    children: dict[int, int] = {}
    for _ in range(k):
        x = chooser.pick(q) if tree.replacement else chooser.pick_excluding(q, drawn)
        if x is None:  # without replacement, q has no token left
            break
        drawn.append(x)
        if x not in children:
            children[x] = len(tree.nodes)
            qx = float(q[x])
            child = TreeNode(len(tree.nodes), node, x, parent.depth + 1, qx, parent.path_prob * qx, (*parent.tokens, x))
            tree.nodes.append(child)
            tree.candidates.append([])
            tree.draft_rows.append(None)
    tree.candidates[node] = [children[x] for x in drawn]
    return list(children.values())


def _draft_full(tree: TreeRound, draft: _Rows, k: int, depth: int, chooser: Chooser) -> None:
    """A full tree: every node above ``depth`` gets up to k children (breadth first)."""
    frontier = [0]
    for _ in range(depth):
        frontier = [child for node in frontier for child in _expand(tree, node, draft, k, chooser)]


def _draft_dynamic(tree: TreeRound, draft: _Rows, k: int, depth: int, budget: int, chooser: Chooser) -> None:
    """Spend ``budget`` nodes best first: expand the unexpanded node with the highest draft path probability.

    The choice of which node to expand, and with how many candidates, is made before its children are drawn,
    from what was drawn so far: the children are still a fresh draw from q at that node, so the round stays exact.
    """
    open_nodes = [0]
    while open_nodes and tree.nodes[-1].index < budget:
        best = max(open_nodes, key=lambda n: (tree.nodes[n].path_prob, -n))
        open_nodes.remove(best)
        room = budget - (len(tree.nodes) - 1)
        children = _expand(tree, best, draft, min(k, room), chooser)
        open_nodes.extend(c for c in children if tree.nodes[c].depth < depth)


def _finish(tree: TreeRound, node: int, token: int, fate: Literal["correction", "bonus"]) -> None:
    parent = tree.nodes[node]
    tree.nodes.append(TreeNode(len(tree.nodes), node, token, parent.depth + 1, 0.0, 0.0, (*parent.tokens, token), fate))
    tree.tokens = [tree.nodes[n].token for n in tree.path] + [token]
    tree.ended_with = fate


# --8<-- [start:verify_tree]
def _verify_tree(tree: TreeRound, target: _Rows, chooser: Chooser) -> None:
    """Walk down from the root: recursive rejection over each node's candidates, then a correction or a bonus."""
    node = 0
    while True:
        p = target(tree.context + tree.nodes[node].tokens)
        kids = tree.candidates[node]
        if not kids:  # an accepted leaf: the target's row after it is free
            _finish(tree, node, chooser.pick(p), "bonus")
            return
        verdict = _recursive(
            p, _checked_draft_row(tree, node), [tree.nodes[c].token for c in kids], chooser, tree.replacement
        )
        tree.checks.append(verdict)
        for c in kids[: verdict.checked]:
            tree.nodes[c].fate = "rejected"
        if verdict.accepted is None:
            _finish(tree, node, verdict.token, "correction")
            return
        node = kids[verdict.accepted]
        tree.nodes[node].fate = "accepted"
        tree.path.append(node)


# --8<-- [end:verify_tree]


def _check_tree_args(context: object, k: object, depth: object, budget: object) -> tuple[tuple[int, ...], int, int]:
    if isinstance(context, str | bytes) or not isinstance(context, Sequence):
        raise TypeError(f"context must be a sequence of token ids, got {type(context).__name__}")
    for i, t in enumerate(context):
        if isinstance(t, bool) or not isinstance(t, int) or t < 0:
            raise ValueError(f"context[{i}] must be a token id (got {t!r})")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= 4096):
        raise ValueError(f"budget must be None or an int between 1 and 4096 (got {budget!r})")
    return tuple(context), _check_k(k), _check_depth(depth)


def tree_round_with(
    target: object,
    draft: object,
    context: Sequence[int],
    k: int,
    depth: int,
    chooser: Chooser,
    *,
    replacement: bool = True,
    budget: int | None = None,
) -> TreeRound:
    """One tree round with ``chooser``'s randomness: draft the tree, then verify it as the one pass would.

    ``target`` and ``draft`` are models (``probs(context)``) or callables context -> row. ``budget`` None drafts
    a full tree of ``depth`` levels with up to ``k`` children per node; an int spends that many nodes best first
    (``_draft_dynamic``), no deeper than ``depth``.
    """
    ctx, kk, d = _check_tree_args(context, k, depth, budget)
    root = TreeNode(0, -1, -1, 0, 1.0, 1.0, (), "context")
    tree = TreeRound(ctx, bool(replacement), [root], [[]], [None])
    draft_rows = _Rows(draft, "draft")
    if budget is None:
        _draft_full(tree, draft_rows, kk, d, chooser)
    else:
        _draft_dynamic(tree, draft_rows, kk, d, budget, chooser)
    _verify_tree(tree, _Rows(target, "target"), chooser)
    return tree


def tree_round(
    target: object,
    draft: object,
    context: Sequence[int],
    k: int,
    depth: int,
    rng: random.Random,
    *,
    replacement: bool = True,
    budget: int | None = None,
) -> TreeRound:
    """One tree round drawn with ``rng`` (see ``tree_round_with``).

    >>> row = [0.5, 0.5]
    >>> t = tree_round(lambda c: row, lambda c: row, [], 2, 2, random.Random(0))
    >>> t.ended_with, len(t.tokens), t.nodes_scored <= 6
    ('bonus', 3, True)
    """
    return tree_round_with(target, draft, context, k, depth, RandomChooser(rng), replacement=replacement, budget=budget)


def attention_mask(tree: TreeRound, nodes: int | None = None) -> list[list[int]]:
    """[n + 1][n + 1] over the root and the n drafted nodes: 1 where row i may attend to column j.

    A node sees itself and its ancestors, never a sibling's branch: that is what lets one pass score every node
    as if each path had been fed alone (SpecInfer's tree attention; Medusa's tree mask, Cai et al. 2024).
    ``nodes`` keeps the root and the first that many nodes only (a parent always comes before its children, so
    that corner of the mask is whole); a figure of a 1,364-node tree needs no 1,365 x 1,365 table.

    >>> t = tree_round(lambda c: [0.5, 0.5], lambda c: [0.5, 0.5], [], 2, 1, random.Random(3))
    >>> attention_mask(t)
    [[1, 0, 0], [1, 1, 0], [1, 0, 1]]
    >>> attention_mask(t, nodes=1)
    [[1, 0], [1, 1]]
    """
    size = tree.nodes_scored + 1 if nodes is None else min(tree.nodes_scored, max(0, nodes)) + 1
    mask = [[0] * size for _ in range(size)]
    for i in range(size):
        j = i
        while j >= 0:
            mask[i][j] = 1
            j = tree.nodes[j].parent
    return mask
