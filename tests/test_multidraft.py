"""Multi-draft verification and token trees are exact: the emitted tokens follow the target's law.

Proven on the code itself, twice:

1. Exact enumeration. ``multidraft.enumerate_outcomes`` replays the real round (drafting included) along every
   branch of its random choices with ``Fraction`` weights. Enumerated: recursive rejection at one position for
   k = 1..3 candidates (i.i.d. and without replacement) over a 3-token vocabulary; and the tree round on a
   first-order Markov pair over 3 tokens (target and draft rows depend on the previous token, the draft leaves
   some tokens out, or has full support): full trees with k = 2, depth 2 and k = 3, depth 1, both drawing modes,
   and a best-first (dynamic) tree with a budget of 4 nodes up to depth 3. The joint law of the first two emitted
   tokens (taking the next round's first token when a round emits one) must equal p(a) p(b | a) exactly.
2. Seeded Monte Carlo of the float round with a tolerance derived from n (``_stats.tv_bound``, and 5 standard
   errors for tokens per pass), including the theory of a full k-ary tree under the i.i.d. per-position model.

Then three wrong rules, patched into the module one at a time, must each make the exact check fail: the residual
taken from p instead of r_i, the correction drawn from p, and acceptance measured against the parent node's q.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from fractions import Fraction

import pytest
from _stats import empirical, tv_bound

from specdec_core import multidraft as md
from specdec_core.distributions import total_variation
from specdec_core.models import agreement_distributions

F = Fraction
P3 = [F(2, 5), F(7, 20), F(1, 4)]  # the house example: p = [.4, .35, .25], q = [.2, .2, .6]
Q3 = [F(1, 5), F(1, 5), F(3, 5)]

# A first-order Markov pair over 3 tokens; () is the row for an empty context.
TARGET = {(): [F(1, 2), F(1, 3), F(1, 6)], 0: [F(1, 5), F(3, 5), F(1, 5)], 1: [F(1, 2), F(1, 4), F(1, 4)]}
TARGET[2] = [F(1, 3), F(1, 3), F(1, 3)]
# The draft misses a token in every context, so corrections must put mass where q has none.
SPARSE = {(): [F(1, 4), F(0), F(3, 4)], 0: [F(0), F(1, 3), F(2, 3)], 1: [F(3, 4), F(1, 4), F(0)]}
SPARSE[2] = [F(1, 2), F(0), F(1, 2)]
FULL = {(): [F(1, 4), F(1, 8), F(5, 8)], 0: [F(1, 6), F(1, 3), F(1, 2)], 1: [F(3, 4), F(1, 8), F(1, 8)]}
FULL[2] = [F(1, 2), F(1, 4), F(1, 4)]

Table = dict[object, list[Fraction]]


def markov(table: Table) -> Callable[[Sequence[int]], list[Fraction]]:
    return lambda context: table[context[-1]] if context else table[()]


def first_two_law(draft: Table, k: int, depth: int, replacement: bool = True, budget: int | None = None) -> dict:
    """Exact law of the first two emitted tokens, over as many tree rounds as that takes (at most two)."""

    def rounds_from(context: tuple[int, ...]) -> list[tuple[Fraction, tuple[int, ...]]]:
        def one(chooser: md.Chooser) -> tuple[int, ...]:
            tree = md.tree_round_with(
                markov(TARGET), markov(draft), context, k, depth, chooser, replacement=replacement, budget=budget
            )
            return tuple(tree.tokens)

        return md.enumerate_outcomes(one)

    law: dict[tuple[int, int], Fraction] = Counter()
    for weight, tokens in rounds_from(()):
        if len(tokens) >= 2:
            law[tokens[:2]] += weight
        else:
            for weight2, tokens2 in rounds_from(tokens):
                law[(tokens[0], tokens2[0])] += weight * weight2
    return dict(law)


TARGET_LAW = {(a, b): TARGET[()][a] * TARGET[a][b] for a in range(3) for b in range(3)}


# 1. Exact enumeration -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("replacement", [True, False])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_recursive_rejection_emits_the_target_exactly(k: int, replacement: bool) -> None:
    assert md.exact_multidraft_distribution(P3, Q3, k, replacement=replacement) == P3
    # q with no mass where p has most: every token p wants must come through the residuals.
    q = [F(0), F(1, 2), F(1, 2)]
    assert md.exact_multidraft_distribution(P3, q, k, replacement=replacement) == P3


def test_acceptance_formula_matches_enumeration() -> None:
    """1 - prod(1 - beta_i) from the recursion equals P(accepted) summed over every enumerated branch.

    Worked example: beta_1 = .65, r_2 = [4/7, 3/7, 0], beta_2 = min(4/7, .2) + min(3/7, .2) = .4, so k = 2 gives
    1 - .35 * .6 = .79.
    """
    assert md.multidraft_acceptance(P3, Q3, 1) == F(13, 20)
    assert md.multidraft_acceptance(P3, Q3, 2) == F(79, 100)
    for k in (1, 2, 3):
        enumerated = sum(w for w, v in md._position_law(P3, Q3, k, True) if v.accepted is not None)
        assert md.multidraft_acceptance(P3, Q3, k) == enumerated
    # Distinct candidates cover more of q, so they are accepted at least as often.
    assert md.multidraft_acceptance(P3, Q3, 2, replacement=False) >= md.multidraft_acceptance(P3, Q3, 2)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_distinct_acceptance_equals_the_enumerated_sampler(k: int) -> None:
    """Without replacement, multidraft_acceptance sums over the ordered draws by its own recursion; it must equal,
    as a Fraction, the acceptance of every branch the sampler's own code takes (``_position_law``). The pairs: the
    house example (V = 3: k = 4 runs out of tokens), a q with a zero (two tokens to draw) and an agreement pair with
    V = 6 built from floats."""
    p6, q6 = agreement_distributions(0.55, vocab_size=6)
    pairs = [(P3, Q3), (SPARSE[0], SPARSE[()]), (md._exact_row(p6, "p"), md._exact_row(q6, "q"))]
    for p, q in pairs:
        enumerated = sum((w for w, v in md._position_law(p, q, k, False) if v.accepted is not None), F(0))
        assert md.multidraft_acceptance(p, q, k, replacement=False) == enumerated
        assert md.multidraft_acceptance(p, q, k, replacement=False) >= md.multidraft_acceptance(p, q, k)


@pytest.mark.parametrize(
    ("draft", "k", "depth", "replacement", "budget"),
    [
        (SPARSE, 2, 2, True, None),
        (SPARSE, 2, 2, False, None),
        (SPARSE, 3, 1, True, None),
        (FULL, 3, 1, True, None),
        (FULL, 2, 1, False, None),
        (SPARSE, 2, 3, True, 4),  # best first: the shape depends on what was drawn
    ],
)
def test_tree_round_first_two_tokens_follow_the_target(
    draft: Table, k: int, depth: int, replacement: bool, budget: int | None
) -> None:
    law = first_two_law(draft, k, depth, replacement, budget)
    assert law == TARGET_LAW
    assert sum(law.values()) == 1


def test_enumeration_covers_every_branch_once() -> None:
    outcomes = md.enumerate_outcomes(
        lambda c: md.tree_round_with(markov(TARGET), markov(SPARSE), (), 2, 2, c).nodes_scored
    )
    assert sum(w for w, _ in outcomes) == 1
    assert {n for _, n in outcomes} <= set(range(2, 7))  # 1 or 2 distinct children per node


# 2. Mutations: each wrong rule must break the exact check -------------------------------------------------------


def test_residual_from_p_breaks_exactness(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(md, "_next_residual", lambda r, q, p: md._residual(p, q))
    assert md.exact_multidraft_distribution(P3, Q3, 3) != P3
    assert first_two_law(SPARSE, 3, 1) != TARGET_LAW


def test_correction_from_p_breaks_exactness(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(md, "_correction_row", lambda r, p: p)
    assert md.exact_multidraft_distribution(P3, Q3, 2) != P3
    assert first_two_law(SPARSE, 2, 2) != TARGET_LAW


def test_acceptance_against_the_parents_q_breaks_exactness(monkeypatch: pytest.MonkeyPatch) -> None:
    def parents_row(tree: md.TreeRound, node: int) -> Sequence[Fraction | float]:
        parent = tree.nodes[node].parent
        row = tree.draft_rows[parent if parent >= 0 else node]
        assert row is not None
        return row

    monkeypatch.setattr(md, "_checked_draft_row", parents_row)
    assert first_two_law(SPARSE, 2, 2) != TARGET_LAW
    assert first_two_law(SPARSE, 2, 2, replacement=False) != TARGET_LAW


def test_unpatched_rules_restore_exactness() -> None:
    """The mutation tests patch module attributes; with the real ones back, the check passes again."""
    assert first_two_law(SPARSE, 3, 1) == TARGET_LAW


# 3. Seeded Monte Carlo ------------------------------------------------------------------------------------------


def test_tree_rounds_follow_the_target_and_the_tree_theory() -> None:
    """n = 6,000 full trees (k = 2, depth 3) on the agreement pair at alpha = 0.6, 6 tokens.

    First emitted token: TV from p below tv_bound(n, 6) = .5 sqrt(6/n) + sqrt(ln(1e9) / 2n) ~ .050 (exceeded with
    probability < 1e-9 by an exact sampler). Tokens per pass: within 5 standard errors of
    sum_{j<=3} A^j, A = multidraft_acceptance(p, q, 2); the variance comes from P(L >= j) = A^j, L in 0..3.
    """
    p, q = agreement_distributions(0.6, vocab_size=6)
    rng, n, k, depth = random.Random(7), 6000, 2, 3
    firsts, emitted = [0] * 6, []
    for _ in range(n):
        tree = md.tree_round(lambda c: p, lambda c: q, [], k, depth, rng)
        firsts[tree.tokens[0]] += 1
        emitted.append(len(tree.tokens))
    assert total_variation(empirical(firsts), p) < tv_bound(n, 6)
    a = float(md.multidraft_acceptance(p, q, k))
    expected = md.tree_expected_tokens(a, depth)
    tail = [a**j for j in range(depth + 2)]  # P(N > j) = A^j for j <= depth, 0 beyond
    second = math.fsum((2 * j + 1) * tail[j] for j in range(depth + 1))  # E[N^2] = sum (2j + 1) P(N > j)
    se = math.sqrt((second - expected**2) / n)
    assert abs(sum(emitted) / n - expected) < 5 * se
    assert expected > md.tree_expected_tokens(float(md.multidraft_acceptance(p, q, 1)), depth)


def test_without_replacement_rounds_follow_the_target() -> None:
    """n = 6,000 rounds of distinct candidates (k = 3, depth 2): first-token TV below tv_bound(n, 6) ~ .050."""
    p, q = agreement_distributions(0.4, vocab_size=6)
    rng, n = random.Random(11), 6000
    firsts = [0] * 6
    for _ in range(n):
        firsts[md.tree_round(lambda c: p, lambda c: q, [], 3, 2, rng, replacement=False).tokens[0]] += 1
    assert total_variation(empirical(firsts), p) < tv_bound(n, 6)


# 4. The round's record -------------------------------------------------------------------------------------------


def test_fates_and_mask_describe_the_walk() -> None:
    p, q = agreement_distributions(0.5, vocab_size=8)
    tree = md.tree_round(lambda c: p, lambda c: q, [5], 3, 3, random.Random(2), replacement=False)
    fates = Counter(node.fate for node in tree.nodes)
    assert fates["context"] == 1 and fates["accepted"] == tree.accepted
    assert fates["correction"] + fates["bonus"] == 1 and tree.ended_with in ("correction", "bonus")
    assert tree.nodes_scored == md.full_tree_nodes(3, 3) == 39  # distinct children: the full tree
    assert tree.tokens == [tree.nodes[n].token for n in tree.path] + [tree.nodes[-1].token]
    mask = md.attention_mask(tree)
    assert len(mask) == tree.nodes_scored + 1
    for i, row in enumerate(mask):
        assert sum(row) == tree.nodes[i].depth + 1  # itself and its ancestors
    checked_out = [n for n in tree.nodes if n.fate == "rejected"]
    assert all(tree.nodes[n.parent].fate in ("context", "accepted") for n in checked_out)


def test_dynamic_tree_spends_its_budget_on_likely_paths() -> None:
    p, q = agreement_distributions(0.7, vocab_size=8)
    tree = md.tree_round(lambda c: p, lambda c: q, [], 2, 6, random.Random(4), replacement=False, budget=10)
    assert tree.nodes_scored == 10
    assert max(n.depth for n in tree.nodes[1:-1]) > 2  # deeper than a full binary tree of 10 nodes could go


def test_bad_input_names_the_argument() -> None:
    rng = random.Random(0)
    with pytest.raises(ValueError, match="candidates"):
        md.recursive_rejection([0.5, 0.5], [0.5, 0.5], [], rng)
    with pytest.raises(ValueError, match="candidates\\[0\\]"):
        md.recursive_rejection([0.5, 0.5], [0.5, 0.5], [2], rng)
    with pytest.raises(TypeError, match="candidates\\[0\\]"):
        md.recursive_rejection([0.5, 0.5], [0.5, 0.5], ["a"], rng)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="distinct"):
        md.recursive_rejection_without_replacement([0.5, 0.5], [0.5, 0.5], [1, 1], rng)
    with pytest.raises(ValueError, match="draft_probs"):
        md.recursive_rejection([0.5, 0.5], [0.5, 0.6], [1], rng)
    with pytest.raises(TypeError, match="rng"):
        md.recursive_rejection([0.5, 0.5], [0.5, 0.5], [1], 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^k must"):
        md.tree_round(lambda c: [1.0], lambda c: [1.0], [], 0, 2, rng)
    with pytest.raises(ValueError, match=r"^depth must"):
        md.tree_round(lambda c: [1.0], lambda c: [1.0], [], 2, 9, rng)
    with pytest.raises(TypeError, match=r"^depth must"):
        md.tree_round(lambda c: [1.0], lambda c: [1.0], [], 2, 1.5, rng)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="draft output"):
        md.tree_round(lambda c: [1.0], lambda c: [0.5], [], 2, 2, rng)
    with pytest.raises(ValueError, match=r"^p must sum"):
        md.exact_multidraft_distribution([F(1, 2)], [F(1)], 1)
    with pytest.raises(ValueError, match=r"^acceptance"):
        md.tree_expected_tokens(1.5, 2)
