"""Handlers of the Correct, Bonus and Why-it-is-exact pages: JSON-safe, seeded, exact where they claim to be.

Statistical checks use the bounds of ``_stats.py``: an exact sampler exceeds ``tv_bound(n, k)`` with probability
below 1e-9, so a seeded run that passes is not luck, and a broken variant whose exact distance from p is several
times that bound cannot hide in the noise.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from typing import Any

import pytest
from _stats import tv_bound

from specdec_core import theory, web
from specdec_core.distributions import acceptance_rate, residual

P = [0.4, 0.35, 0.25]
Q = [0.2, 0.2, 0.6]
PRESETS = ["paper", "disjoint", "equal", "one-hot"]


def run(name: str, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(web.call(name, json.dumps(args)))
    return result


def as_fraction(text: str) -> Fraction:
    return Fraction(text)


def strict_json(name: str, **args: Any) -> dict[str, Any]:
    """The handler's text as the browser reads it: JSON.parse has no NaN or Infinity, so neither may appear."""
    text = web.call(name, json.dumps(args))
    result: dict[str, Any] = json.loads(text, parse_constant=lambda token: pytest.fail(f"{name} emitted {token}"))
    return result


@pytest.mark.parametrize(
    ("name", "args"),
    [("correct.split", {"preset": preset, "temperature": 0.25, "shift": 2, "blend": 0.5}) for preset in PRESETS]
    + [("correct.sample", {"p": [1.0, 0.0], "q": [0.0, 1.0], "n": 50, "seed": 1})]
    + [("bonus.simulate", {"alpha": a, "gamma": 8, "rounds": 50}) for a in (0.0, 1.0)]
    + [("exactness.check", {"p": [0, 1, 0], "q": [1, 0, 0], "gamma": 4})]
    + [
        ("exactness.broken", {"variant": v, "p": [1.0, 0.0, 0.0], "q": [0.0, 0.5, 0.5], "n": 50})
        for v in web.BROKEN_VARIANTS
    ],
)
def test_handlers_stay_json_safe_at_the_edges(name: str, args: dict[str, Any]) -> None:
    """Degenerate pairs (one-hot, disjoint, alpha 0 or 1) are where a division or a log could produce inf or NaN."""
    result = strict_json(name, **args)
    numbers = {k: v for k, v in result["metrics"].items() if not (k == "chi-square" and v is None)}  # None: infinite
    assert all(isinstance(v, int | float) and math.isfinite(v) for v in numbers.values())


# Correct -------------------------------------------------------------------------------------------------------


def test_correct_split_paper_example_residual() -> None:
    """p = [.4, .35, .25], q = [.2, .2, .6]: beta = .65, residual [.2, .15, 0] / .35 = [4/7, 3/7, 0]."""
    result = run("correct.split", preset="paper")
    assert result["metrics"]["accept-rate"] == pytest.approx(0.65, abs=1e-12)
    assert result["residual"] == pytest.approx([4 / 7, 3 / 7, 0.0], abs=1e-12)
    assert result["q"] == pytest.approx(Q, abs=1e-12)


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize(("temperature", "shift", "blend"), [(1.0, 0, 0.0), (0.25, 1, 0.0), (4.0, -2, 0.3)])
def test_correct_split_stack_adds_up_to_p(preset: str, temperature: float, shift: int, blend: float) -> None:
    """The proof chart's claim, per token: min(p, q)(x) + (1 - beta) residual(x) = p(x), to float rounding."""
    result = run("correct.split", preset=preset, temperature=temperature, shift=shift, blend=blend)
    accepted, corrected = (trace["y"] for trace in result["figures"]["proof"]["data"][:2])
    for a, c, p in zip(accepted, corrected, result["p"], strict=True):
        assert a + c == pytest.approx(p, abs=1e-9)
    assert result["metrics"]["identity-gap"] <= 1e-12
    assert result["metrics"]["accept-rate"] == pytest.approx(acceptance_rate(result["p"], result["q"]), abs=1e-9)


def test_correct_split_presets_mean_what_they_say() -> None:
    """Disjoint supports accept nothing (residual = p); p = q accepts everything; one-hot q accepts p(cat)."""
    disjoint = run("correct.split", preset="disjoint")
    assert disjoint["metrics"]["accept-rate"] == 0.0
    assert disjoint["residual"] == pytest.approx(disjoint["p"], abs=1e-12)
    assert run("correct.split", preset="equal")["metrics"]["accept-rate"] == pytest.approx(1.0, abs=1e-12)
    one_hot = run("correct.split", preset="one-hot")
    assert one_hot["metrics"]["accept-rate"] == pytest.approx(one_hot["p"][0], abs=1e-12)


def test_correct_split_blend_one_moves_the_draft_onto_the_target() -> None:
    result = run("correct.split", preset="disjoint", temperature=2.0, shift=1, blend=1.0)
    assert result["q"] == pytest.approx(result["p"], abs=1e-12)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"preset": "nope"}, "preset must be one of"),
        ({"temperature": 0.0}, "temperature must be"),
        ({"shift": 1.5}, "shift must be an int"),
        ({"blend": 2}, "blend must be"),
    ],
)
def test_correct_split_rejects_bad_arguments(args: dict[str, Any], message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        run("correct.split", **args)


def test_correct_sample_is_deterministic_with_a_seed() -> None:
    first = run("correct.sample", p=P, q=Q, n=500, seed=7)
    assert first == run("correct.sample", p=P, q=Q, n=500, seed=7)
    assert first["counts"] != run("correct.sample", p=P, q=Q, n=500, seed=8)["counts"]


def test_correct_sample_matches_the_target() -> None:
    """10,000 real rounds: TV(emitted, p) <= tv_bound(10_000, 3) ~ 0.041 (exceeded with probability < 1e-9).

    The share of rounds ending in a correction is a binomial mean with p = 1 - beta = .35; Hoeffding puts it within
    sqrt(ln(2 / 1e-9) / (2 n)) ~ 0.033 of .35 except with probability 1e-9.
    """
    n = 10_000
    result = run("correct.sample", p=P, q=Q, n=n, seed=0)
    m = result["metrics"]
    assert sum(result["counts"]) == n
    assert m["tv-distance"] <= tv_bound(n, 3)
    assert abs(m["correction-share"] - 0.35) <= math.sqrt(math.log(2 / 1e-9) / (2 * n))
    assert m["correction-share-theory"] == pytest.approx(0.35, abs=1e-12)
    # The noise scale the page quotes is the mean TV of an exact sampler, well inside the worst-case bound.
    assert 0 < m["tv-noise"] < tv_bound(n, 3)


def test_correct_sample_with_disjoint_supports_emits_only_corrections() -> None:
    """beta = 0: every draft is rejected and every emitted token is a correction drawn from the residual, p."""
    result = run("correct.sample", p=[0.5, 0.5, 0.0], q=[0.0, 0.0, 1.0], n=2000, seed=3)
    assert result["metrics"]["correction-share"] == 1.0
    assert result["counts"][2] == 0


# Bonus ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("gamma", [1, 4, 8])
def test_bonus_full_agreement_always_takes_the_bonus(gamma: int) -> None:
    m = run("bonus.simulate", alpha=1.0, gamma=gamma, rounds=200, seed=0)["metrics"]
    assert m["bonus-share"] == 1.0
    assert m["tokens-per-pass"] == gamma + 1 == m["tokens-per-pass-theory"]


def test_bonus_no_agreement_emits_one_token_per_pass() -> None:
    result = run("bonus.simulate", alpha=0.0, gamma=4, rounds=200, seed=0)
    assert result["counts"] == [200, 0, 0, 0, 0]
    assert result["metrics"]["tokens-per-pass"] == 1.0


@pytest.mark.parametrize(("alpha", "gamma"), [(0.8, 4), (0.5, 2), (0.9, 8)])
def test_bonus_simulation_agrees_with_theory(alpha: float, gamma: int) -> None:
    """Mean tokens per pass within 4 standard errors (from the capped geometric variance) of Eq. 1.

    The bonus share is a binomial mean with p = alpha^gamma; Hoeffding: within sqrt(ln(2 / 1e-9) / (2 n)).
    """
    rounds = 4000
    result = run("bonus.simulate", alpha=alpha, gamma=gamma, rounds=rounds, seed=11)
    m = result["metrics"]
    assert sum(result["counts"]) == rounds
    assert m["tokens-per-pass-theory"] == pytest.approx(theory.expected_tokens(alpha, gamma), abs=1e-12)
    assert abs(m["tokens-per-pass"] - m["tokens-per-pass-theory"]) <= 4 * m["tokens-per-pass-se"]
    assert m["bonus-share-theory"] == pytest.approx(alpha**gamma, abs=1e-12)
    assert abs(m["bonus-share"] - alpha**gamma) <= math.sqrt(math.log(2 / 1e-9) / (2 * rounds))
    # The chart's theory bars are accepted_count_distribution; the markers are the simulated shares.
    bars = result["figures"]["counts"]["data"]
    assert bars[0]["y"] + bars[1]["y"] == pytest.approx(theory.accepted_count_distribution(alpha, gamma), abs=1e-12)
    assert bars[2]["y"] == [c / rounds for c in result["counts"]]


def test_bonus_is_deterministic_with_a_seed() -> None:
    args = {"alpha": 0.7, "gamma": 3, "rounds": 300}
    assert run("bonus.simulate", **args, seed=5) == run("bonus.simulate", **args, seed=5)
    assert run("bonus.simulate", **args, seed=5)["counts"] != run("bonus.simulate", **args, seed=6)["counts"]


def test_bonus_rejects_gamma_out_of_range() -> None:
    with pytest.raises(ValueError, match="gamma must be between 1 and 8"):
        run("bonus.simulate", alpha=0.5, gamma=9)


# Why it is exact: Fraction checks ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("p", "q"),
    [
        ([8, 7, 5], [1, 1, 3]),
        ([1, 1, 0], [0, 0, 1]),
        ([3, 2, 1], [3, 2, 1]),
        ([5, 3, 2], [0, 1, 0]),
        ([0, 0, 4], [9, 1, 0]),
    ],
)
@pytest.mark.parametrize("gamma", [1, 3])
def test_exactness_check_equals_the_target_exactly(p: list[int], q: list[int], gamma: int) -> None:
    """Every enumerated probability equals the target's as a Fraction; the ✓ flags are those comparisons."""
    result = run("exactness.check", p=p, q=q, gamma=gamma)
    total = sum(p)
    for x, row in enumerate(result["position"]):
        assert as_fraction(row["emitted"]) == Fraction(p[x], total) == as_fraction(row["p"])
        assert as_fraction(row["accepted"]) + as_fraction(row["correction"]) == as_fraction(row["p"])
        assert row["equal"] is True
    prefix = result["prefix"]
    assert sum(as_fraction(r["speculative"]) for r in prefix) == 1
    assert all(r["speculative"] == r["target"] and r["equal"] for r in prefix)
    assert result["metrics"]["exact"] == 1
    assert result["metrics"]["cells-checked"] == len(prefix) + len(p)


def test_exactness_check_worked_example_fractions() -> None:
    """p = [8, 7, 5] / 20 = [.4, .35, .25], q = [1, 1, 3] / 5: beta = 13/20, corrections [1/5, 3/20, 0]."""
    result = run("exactness.check", p=[8, 7, 5], q=[1, 1, 3], gamma=2)
    assert result["beta"] == "13/20"
    assert [r["correction"] for r in result["position"]] == ["1/5", "3/20", "0"]
    assert [r["accepted"] for r in result["position"]] == ["1/5", "1/5", "1/4"]


def test_exactness_check_flags_are_computed_not_constant() -> None:
    """The prefix table compares against target_prefix_distribution: a different reference would show ✗."""
    result = run("exactness.check", p=[2, 1, 1], q=[1, 2, 1], gamma=2)
    assert len({r["target"] for r in result["prefix"]}) > 1  # the pair is context-dependent, not uniform


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"p": [0, 0, 0], "q": [1, 1, 1]}, "p must have at least one positive weight"),
        ({"p": [1, 2], "q": [1, 1, 1]}, "same length"),
        ({"p": [1, 2, 3], "q": [1, 1, 1], "gamma": 5}, "gamma must be between 1 and 4"),
        ({"p": [1, -2, 3], "q": [1, 1, 1]}, r"p\[1\] must be between 0 and 99"),
    ],
)
def test_exactness_check_rejects_bad_weights(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        run("exactness.check", **args)


# Why it is exact: broken variants ------------------------------------------------------------------------------

#: Exact output distributions of the broken variants on the paper's pair, worked by hand:
#: - correct-from-p: min(p, q) + .35 p = [.2 + .14, .2 + .1225, .25 + .0875];
#: - q-over-p: accept min(1, q/p) = [1/2, 4/7, 1] -> [.1, .8/7, .6]; the rest is corrected by [4/7, 3/7, 0];
#: - unnormalized: inverse CDF on [.2, .15, 0] sends u >= .35 to token 1: corrections [.2, .8, 0] -> [.27, .48, .25];
#: - draft-temperature: drafts from q^2 / .44 = [1/11, 1/11, 9/11], accepted [1/11, 1/11, 15/44], rest corrected.
BROKEN_EXACT = {
    "correct-from-p": [Fraction(34, 100), Fraction(3225, 10000), Fraction(3375, 10000)],
    "unnormalized": [Fraction(27, 100), Fraction(48, 100), Fraction(25, 100)],
}


@pytest.mark.parametrize("variant", ["exact", "unclipped"])
def test_harmless_variants_are_exact(variant: str) -> None:
    """The real steps, and p/q without the min: exactly p in fractions, and a 10,000-round sample within tv_bound."""
    n = 10_000
    m = run("exactness.broken", variant=variant, p=P, q=Q, n=n, seed=2)["metrics"]
    assert m["exact-tv"] == 0.0 and m["exact-equal"] == 1
    assert m["tv-distance"] <= tv_bound(n, 3)


@pytest.mark.parametrize("variant", ["correct-from-p", "q-over-p", "unnormalized", "draft-temperature"])
def test_broken_variants_are_detectably_wrong(variant: str) -> None:
    """Each broken variant is off p by an exact TV above 2 * tv_bound(10_000, 3) ~ 0.082, so its 10,000-round sample
    lies beyond tv_bound(10_000, 3) ~ 0.041 (the sample is within tv_bound of the variant's own law, and that law
    is at least 2 tv_bound from p), and the chi-square test rejects at p < 1e-6."""
    n = 10_000
    result = run("exactness.broken", variant=variant, p=P, q=Q, n=n, seed=2)
    m = result["metrics"]
    assert m["exact-equal"] == 0
    assert m["exact-tv"] > 2 * tv_bound(n, 3)
    assert m["tv-distance"] > tv_bound(n, 3)
    assert m["p-value"] < 1e-6 and m["exact"] == 0
    # The sampler and the exact formula describe the same (wrong) law.
    own = result["figure"]["data"][1]["y"]
    freq = [c / n for c in result["counts"]]
    assert 0.5 * sum(abs(a - b) for a, b in zip(own, freq, strict=True)) <= tv_bound(n, 3)


@pytest.mark.parametrize(("variant", "expected"), sorted(BROKEN_EXACT.items()))
def test_broken_variant_exact_distribution_matches_hand_arithmetic(variant: str, expected: list[Fraction]) -> None:
    got = run("exactness.broken", variant=variant, p=P, q=Q)["figure"]["data"][1]["y"]
    assert got == pytest.approx([float(x) for x in expected], abs=1e-12)


def test_broken_variant_exact_tv_values() -> None:
    """TV from p: correct-from-p .0875, q-over-p .35, unnormalized .13, draft-temperature 1/11."""
    tv = {v: run("exactness.broken", variant=v, p=P, q=Q)["metrics"]["exact-tv"] for v in web.BROKEN_VARIANTS}
    assert tv["correct-from-p"] == pytest.approx(0.0875, abs=1e-12)
    assert tv["q-over-p"] == pytest.approx(0.35, abs=1e-12)
    assert tv["unnormalized"] == pytest.approx(0.13, abs=1e-12)
    assert tv["draft-temperature"] == pytest.approx(1 / 11, abs=1e-12)


def test_exact_variant_uses_the_real_round() -> None:
    """The "exact" choice samples through steps.draft + steps.speculative_round, the same stream as correct.sample."""
    broken = run("exactness.broken", variant="exact", p=P, q=Q, n=3000, seed=4)
    real = run("correct.sample", p=P, q=Q, n=3000, seed=4)
    assert broken["counts"] == real["counts"]


def test_exact_variant_emits_p_exactly() -> None:
    """theory.exact_output_distribution on the paper's pair: [.4, .35, .25], its correction mass .35 * residual."""
    result = run("exactness.broken", variant="exact", p=P, q=Q)
    assert result["figure"]["data"][1]["y"] == pytest.approx(P, abs=1e-12)
    assert [0.35 * r for r in residual(P, Q)] == pytest.approx([0.2, 0.15, 0.0], abs=1e-12)


def test_broken_rejects_unknown_variant() -> None:
    with pytest.raises(ValueError, match="variant must be one of"):
        run("exactness.broken", variant="made-up", p=P, q=Q)
