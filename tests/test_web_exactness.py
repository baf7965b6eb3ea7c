"""The Why-it-is-exact page's handlers (web/exactness.py): exact where they claim to be, and broken rounds caught.

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

from specdec_core import residual, web
from specdec_core.web import exactness
from specdec_core.web.exactness import BROKEN_VARIANTS

P = [0.4, 0.35, 0.25]
Q = [0.2, 0.2, 0.6]


def run(name: str, **args: Any) -> dict[str, Any]:
    # As the browser reads it: JSON.parse has no NaN or Infinity, so neither may appear.
    text = web.call(name, json.dumps(args))
    result: dict[str, Any] = json.loads(text, parse_constant=lambda token: pytest.fail(f"{name} emitted {token}"))
    return result


@pytest.mark.parametrize(
    ("name", "args"),
    [("exactness.check", {"p": [0, 1, 0], "q": [1, 0, 0], "gamma": 3})]
    + [
        ("exactness.broken", {"variant": v, "p": [1.0, 0.0, 0.0], "q": [0.0, 0.5, 0.5], "n": 50})
        for v in BROKEN_VARIANTS
    ]
    + [("correct.sample", {"p": [1.0, 0.0], "q": [0.0, 1.0], "n": 50, "seed": 1})]
    + [("bonus.simulate", {"alpha": a, "gamma": 8, "rounds": 50}) for a in (0.0, 1.0)],
)
def test_handlers_stay_json_safe_at_the_edges(name: str, args: dict[str, Any]) -> None:
    """Degenerate pairs (one-hot, disjoint, alpha 0 or 1) are where a division or a log could produce inf or NaN."""
    result = run(name, **args)
    assert all(isinstance(v, int | float) and math.isfinite(v) for v in result["metrics"].values())


# Exact arithmetic -----------------------------------------------------------------------------------------------


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
def test_check_equals_the_target_exactly(p: list[int], q: list[int], gamma: int) -> None:
    """Every enumerated probability equals the target's as a Fraction; the ✓ flags are those comparisons."""
    result = run("exactness.check", p=p, q=q, gamma=gamma)
    total = sum(p)
    for x, row in enumerate(result["position"]):
        assert Fraction(row["emitted"]) == Fraction(p[x], total) == Fraction(row["p"])
        assert Fraction(row["accepted"]) + Fraction(row["correction"]) == Fraction(row["p"])
        assert row["equal"] is True
    prefix = result["prefix"]
    assert sum(Fraction(r["speculative"]) for r in prefix) == 1
    assert all(r["speculative"] == r["target"] and r["equal"] for r in prefix)
    assert result["metrics"]["exact"] == 1
    assert result["metrics"]["cells-checked"] == len(prefix) + len(p)
    assert result["round"]["length"] == gamma + 1 and result["round"]["equal"] is True


def test_check_gamma_sets_how_far_the_whole_round_check_reaches() -> None:
    """The two-token table is the same for every gamma (it is the target's law); the check of the first gamma + 1
    tokens grows with it: 3^(gamma + 1) prefixes when every token has positive probability under the target."""
    tables = []
    for gamma in (1, 2, 3):
        result = run("exactness.check", p=[8, 7, 5], q=[1, 1, 3], gamma=gamma)
        assert result["round"] == {"length": gamma + 1, "prefixes": 3 ** (gamma + 1), "equal": True}
        assert result["metrics"]["round-prefixes"] == 3 ** (gamma + 1)
        tables.append(result["prefix"])
    assert tables[0] == tables[1] == tables[2]


def test_whole_round_check_is_a_comparison_not_a_constant(monkeypatch: pytest.MonkeyPatch) -> None:
    """Against a reference that is not the target's law, the gamma + 1 check says so and the verdict follows."""
    real = exactness.theory.target_prefix_distribution

    def skewed(target: Any, length: int) -> dict[tuple[int, ...], Fraction]:
        law = real(target, length)
        if length > 2:  # move some mass between two prefixes: still a distribution, no longer the target's
            first, second = sorted(law)[:2]
            shift = min(law[first], law[second]) / 2
            law[first] -= shift
            law[second] += shift
        return law

    monkeypatch.setattr(exactness.theory, "target_prefix_distribution", skewed)
    result = exactness.check([8, 7, 5], [1, 1, 3], gamma=2)
    assert result["round"]["equal"] is False
    assert result["metrics"]["exact"] == 0
    assert result["verdict"].startswith("Some probabilities differ") and result["verdict"].endswith("(not equal).")
    assert all(row["equal"] for row in result["prefix"])  # the two-token table still used the real law


def test_check_worked_example_fractions() -> None:
    """p = [8, 7, 5] / 20 = [.4, .35, .25], q = [1, 1, 3] / 5: beta = 13/20, corrections [1/5, 3/20, 0]."""
    result = run("exactness.check", p=[8, 7, 5], q=[1, 1, 3], gamma=2)
    assert result["verdict"] == (
        "All 12 table rows equal the target's exactly, as fractions (β = 13/20), and so do all 27 prefixes of 3 "
        "tokens, as many as one round with \N{GREEK SMALL LETTER GAMMA} = 2 emits when it accepts every draft and "
        "takes its bonus."
    )
    assert result["beta"] == "13/20" and result["metrics"]["beta"] == 0.65
    assert [r["correction"] for r in result["position"]] == ["1/5", "3/20", "0"]
    assert [r["accepted"] for r in result["position"]] == ["1/5", "1/5", "1/4"]


def test_check_flags_are_computed_not_constant() -> None:
    """The prefix table compares against target_prefix_distribution: a different reference would show ✗."""
    result = run("exactness.check", p=[2, 1, 1], q=[1, 2, 1], gamma=2)
    assert len({r["target"] for r in result["prefix"]}) > 1  # the pair is context-dependent, not uniform


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ({"p": [0, 0, 0], "q": [1, 1, 1]}, ValueError, "p must have at least one positive weight"),
        ({"p": [1, 2], "q": [1, 1, 1]}, ValueError, "same length"),
        ({"p": [1, 2, 3], "q": [1, 1, 1], "gamma": 4}, ValueError, "gamma must be between 1 and 3"),
        ({"p": [1, -2, 3], "q": [1, 1, 1]}, ValueError, r"p\[1\] must be between 0 and 99"),
        ({"p": [1, 2.5, 3], "q": [1, 1, 1]}, TypeError, r"p\[1\] must be an int"),
        ({"p": [1] * 1000, "q": [1, 1, 1]}, ValueError, "p must have 2 to 4 items"),
        ({"p": "123", "q": [1, 1, 1]}, TypeError, "p must be a list"),
    ],
)
def test_check_rejects_bad_weights(args: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        run("exactness.check", **args)


# Broken rounds --------------------------------------------------------------------------------------------------

#: Exact output laws on our worked pair, by hand:
#: - correct-from-p: min(p, q) + .35 p = [.2 + .14, .2 + .1225, .25 + .0875];
#: - unnormalized: inverse CDF on [.2, .15, 0] sends u >= .35 to token 1: corrections [.2, .8, 0] -> [.27, .48, .25];
#: - greedy-soft: fox always proposed, kept with p/q = .25/.6 = 5/12; the other 7/12 corrected by [4/7, 3/7, 0]:
#:   [1/3, 1/4, 5/12];
#: - zero-naive: declared q' = [1/4, 0, 3/4]; dog (drawn w.p. .2) is accepted by p/0, cat always, fox w.p. 1/3; the
#:   remaining .4 is corrected by residual(p, q') = [.3, .7, 0]: [.2 + .12, .2 + .28, .2] = [8/25, 12/25, 1/5].
BROKEN_EXACT = {
    "correct-from-p": ["17/50", "129/400", "27/80"],
    "unnormalized": ["27/100", "12/25", "1/4"],
    "greedy-soft": ["1/3", "1/4", "5/12"],
    "zero-naive": ["8/25", "12/25", "1/5"],
}


@pytest.mark.parametrize(("variant", "expected"), sorted(BROKEN_EXACT.items()))
def test_broken_variant_exact_law_matches_hand_arithmetic(variant: str, expected: list[str]) -> None:
    result = run("exactness.broken", variant=variant, p=P, q=Q)
    assert result["law"] == expected and result["target"] == ["2/5", "7/20", "1/4"]
    assert result["figure"]["data"][1]["y"] == pytest.approx([float(Fraction(x)) for x in expected], abs=1e-12)


def test_broken_variant_exact_tv_values() -> None:
    """TV from p: correct-from-p .0875, q-over-p .35, unnormalized .13, draft-temperature 1/11, greedy-soft 1/6
    (|2/5 - 1/3| + |7/20 - 1/4| + |1/4 - 5/12| = 1/15 + 1/10 + 1/6 = 1/3, halved), zero-naive .13."""
    tv = {v: run("exactness.broken", variant=v, p=P, q=Q)["metrics"]["exact-tv"] for v in BROKEN_VARIANTS}
    expected = {"correct-from-p": 0.0875, "q-over-p": 0.35, "unnormalized": 0.13, "draft-temperature": 1 / 11}
    expected |= {"greedy-soft": 1 / 6, "zero-naive": 0.13, "exact": 0.0, "unclipped": 0.0, "zero-draft": 0.0}
    assert tv == pytest.approx(expected, abs=1e-12)


def test_broken_verdict_says_what_the_law_and_the_sample_show() -> None:
    """Before a sample the sentence reports the exact law's TV; after one, the test's numbers and its reading."""
    exact = run("exactness.broken", variant="exact", p=P, q=Q)["verdict"]
    assert exact.endswith("emits p exactly. Sample it to see the statistics agree.")
    assert "is off by TV 0.0875." in run("exactness.broken", variant="correct-from-p", p=P, q=Q)["verdict"]
    good = run("exactness.broken", variant="exact", p=P, q=Q, n=10_000, seed=2)
    assert good["verdict"].startswith(f"10,000 rounds: TV {good['metrics']['tv-distance']:.4f}, about the ")
    assert good["verdict"].endswith("No evidence against exactness.")
    bad = run("exactness.broken", variant="q-over-p", p=P, q=Q, n=10_000, seed=2)
    assert bad["verdict"].endswith("The output is not p.") and "e-0" not in bad["verdict"]


@pytest.mark.parametrize("variant", ["exact", "unclipped", "zero-draft"])
def test_harmless_variants_are_exact(variant: str) -> None:
    """The real steps, p/q without the min, and an honest draft with a zero: exactly p in fractions, and a
    10,000-round sample within tv_bound(10_000, 3) ~ 0.041."""
    n = 10_000
    result = run("exactness.broken", variant=variant, p=P, q=Q, n=n, seed=2)
    m = result["metrics"]
    assert m["exact-tv"] == 0.0 and m["exact-equal"] == 1 and result["law"] == result["target"]
    assert m["tv-distance"] <= tv_bound(n, 3)


@pytest.mark.parametrize(
    "variant", ["correct-from-p", "q-over-p", "unnormalized", "draft-temperature", "greedy-soft", "zero-naive"]
)
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


def test_honest_zero_draft_token_comes_only_from_the_residual() -> None:
    """q' = [1/4, 0, 3/4] never proposes dog (p = 7/20), yet the real round emits dog exactly 7/20 of the time: as a
    correction, (1 - beta') r(dog) = (1/2)(7/10), where beta' = 1/4 + 0 + 1/4 and r = [3/10, 7/10, 0]."""
    dog = run("exactness.check", p=[8, 7, 5], q=[1, 0, 3], gamma=1)["position"][1]  # q = [1, 0, 3] / 4 = q'
    assert (dog["accepted"], dog["correction"], dog["emitted"], dog["equal"]) == ("0", "7/20", "7/20", True)
    result = run("exactness.broken", variant="zero-draft", p=P, q=Q)
    assert result["law"] == ["2/5", "7/20", "1/4"] and result["metrics"]["exact-equal"] == 1


def test_exact_variant_uses_the_real_round() -> None:
    """The "exact" choice samples through the engine's round, the same stream as correct.sample."""
    broken = run("exactness.broken", variant="exact", p=P, q=Q, n=3000, seed=4)
    real = run("correct.sample", p=P, q=Q, n=3000, seed=4)
    assert broken["counts"] == real["counts"]


def test_exact_variant_emits_p_exactly() -> None:
    """theory.exact_output_distribution on our worked pair: [.4, .35, .25], its correction mass .35 * residual."""
    result = run("exactness.broken", variant="exact", p=P, q=Q)
    assert result["figure"]["data"][1]["y"] == pytest.approx(P, abs=1e-12)
    assert [0.35 * r for r in residual(P, Q)] == pytest.approx([0.2, 0.15, 0.0], abs=1e-12)


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ({"variant": "made-up"}, ValueError, "variant must be one of"),
        ({"variant": None}, TypeError, "variant must be a string"),
        ({"n": 10**6}, ValueError, "n must be between"),
        ({"seed": 2.5}, TypeError, "seed must be an int"),
        ({"p": [0.4, math.nan, 0.6]}, ValueError, r"p\[1\]"),
    ],
)
def test_broken_refuses_bad_input_by_name(args: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        run("exactness.broken", **{"variant": "exact", "p": P, "q": Q, **args})
