"""Probability vectors: validation messages, sampling, residual, acceptance rate and the sampling knobs."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core.distributions import (
    acceptance_rate,
    apply_temperature,
    apply_top_k,
    apply_top_p,
    check_alpha,
    check_cost,
    check_gamma,
    normalize,
    residual,
    sample,
    shape,
    total_variation,
    validate_probs,
    validate_rows,
)

P = [0.4, 0.35, 0.25]
Q = [0.2, 0.2, 0.6]


def test_paper_worked_example_beta_and_residual() -> None:
    """p = [.4, .35, .25], q = [.2, .2, .6]: min(p, q) = [.2, .2, .25] so beta = .65;
    max(0, p - q) = [.2, .15, 0] sums to .35 = 1 - beta, so the residual is [.2/.35, .15/.35, 0] = [4/7, 3/7, 0].
    """
    assert acceptance_rate(P, Q) == pytest.approx(0.65, abs=1e-15)
    assert residual(P, Q) == pytest.approx([4 / 7, 3 / 7, 0.0], abs=1e-15)


def test_acceptance_rate_is_one_minus_total_variation() -> None:
    rng = random.Random(7)
    for _ in range(200):
        p = normalize([rng.random() for _ in range(6)])
        q = normalize([rng.random() for _ in range(6)])
        assert acceptance_rate(p, q) == pytest.approx(1.0 - total_variation(p, q), abs=1e-12)


def test_residual_of_equal_distributions_is_the_target() -> None:
    assert residual(P, P) == P


def test_residual_has_no_mass_where_draft_overshoots() -> None:
    r = residual(P, Q)
    assert r[2] == 0.0 and math.fsum(r) == pytest.approx(1.0, abs=1e-15)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ([0.5, -0.1, 0.6], r"q\[1\] must be non-negative"),
        ([0.5, float("nan"), 0.5], r"q\[1\] must be finite"),
        ([float("inf"), 0.0], r"q\[0\] must be finite"),
        ([0.5, 0.6], r"q must sum to 1"),
        ([], r"q must not be empty"),
    ],
)
def test_bad_probabilities_name_the_argument(bad: list[float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        validate_probs(bad, "q")


@pytest.mark.parametrize("bad", ["abc", 3, [0.5, "0.5"], [True, False]])
def test_wrong_types_raise_type_error(bad: object) -> None:
    with pytest.raises(TypeError, match="p must"):
        validate_probs(bad, "p")  # type: ignore[arg-type]


def test_rows_check_count_and_vocabulary() -> None:
    with pytest.raises(ValueError, match=r"target_probs must have 3 rows \(got 2\)"):
        validate_rows([P, P], "target_probs", n_rows=3)
    with pytest.raises(ValueError, match=r"draft_probs\[1\] must have 3 entries"):
        validate_rows([P, [0.5, 0.5]], "draft_probs")
    with pytest.raises(ValueError, match=r"draft_probs\[0\] must sum to 1"):
        validate_rows([[0.5, 0.4, 0.0]], "draft_probs")


@pytest.mark.parametrize("gamma", [-1, 65, 1000])
def test_gamma_out_of_range(gamma: int) -> None:
    with pytest.raises(ValueError, match="gamma must be between 0 and 64"):
        check_gamma(gamma)


def test_gamma_must_be_an_int() -> None:
    with pytest.raises(TypeError, match="gamma must be an int"):
        check_gamma(2.0)
    assert check_gamma(0) == 0 and check_gamma(64) == 64


@pytest.mark.parametrize("alpha", [-0.01, 1.01, float("nan")])
def test_alpha_out_of_range(alpha: float) -> None:
    with pytest.raises(ValueError, match="alpha must be between 0 and 1"):
        check_alpha(alpha)


@pytest.mark.parametrize("cost", [-0.5, float("inf"), float("nan")])
def test_cost_must_be_finite_and_non_negative(cost: float) -> None:
    with pytest.raises(ValueError, match="cost must be a finite number >= 0"):
        check_cost(cost)


def test_sample_inverse_cdf_boundaries() -> None:
    p = [0.25, 0.0, 0.75]
    assert [sample(p, u) for u in (0.0, 0.2499, 0.25, 0.9999)] == [0, 0, 2, 2]


def test_sample_never_returns_zero_probability_token_near_one() -> None:
    # 0.1 * 10 in floats sums to 0.9999999999999999: a u above that must still land on a real token.
    p = [0.1] * 10 + [0.0]
    assert sample(p, 1.0 - 2**-53) == 9


def test_sample_rejects_bad_uniform() -> None:
    with pytest.raises(ValueError, match=r"u must be in \[0, 1\)"):
        sample(P, 1.0)


def test_sample_is_exact_on_a_grid_of_uniforms() -> None:
    """The inverse CDF maps a uniform grid of 2**12 points to exactly p's dyadic masses."""
    p = [0.125, 0.5, 0.0, 0.375]
    n = 2**12
    counts = [0] * 4
    for k in range(n):
        counts[sample(p, (k + 0.5) / n)] += 1
    assert [Fraction(c, n) for c in counts] == [Fraction(x) for x in p]


def test_greedy_temperature_breaks_ties_by_lowest_id() -> None:
    assert apply_temperature([0.4, 0.4, 0.2], 0.0) == [1.0, 0.0, 0.0]


def test_temperature_one_is_identity_and_high_temperature_flattens() -> None:
    assert apply_temperature(P, 1.0) == P
    hot = apply_temperature(P, 100.0)
    assert max(hot) - min(hot) < 0.01


def test_temperature_matches_softmax_of_scaled_logits() -> None:
    logits = [math.log(x) for x in P]
    t = 0.7
    z = [math.exp(v / t) for v in logits]
    assert apply_temperature(P, t) == pytest.approx([v / sum(z) for v in z], abs=1e-12)


def test_top_k_and_top_p_keep_the_head() -> None:
    assert apply_top_k(P, 1) == [1.0, 0.0, 0.0]
    assert apply_top_k(P, 0) == P
    assert apply_top_p(P, 0.4) == [1.0, 0.0, 0.0]
    assert apply_top_p(P, 0.75) == pytest.approx([0.4 / 0.75, 0.35 / 0.75, 0.0])
    with pytest.raises(ValueError, match="top_p must be in"):
        apply_top_p(P, 0.0)
    with pytest.raises(ValueError, match="top_k must be >= 0"):
        apply_top_k(P, -1)


def test_shape_applies_all_knobs_in_order() -> None:
    shaped = shape([0.1, 0.2, 0.3, 0.4], temperature=0.5, top_k=3, top_p=0.9)
    assert shaped[0] == 0.0 and math.fsum(shaped) == pytest.approx(1.0)


def _plain_shape(p: list[float], t: float, k: int, top_p: float) -> list[float]:
    """``shape`` written the plain way, one knob at a time, each renormalising with ``normalize``: the reference
    for its faster helpers (one row check, one pass in logs, the kept entries placed rather than all V tested)."""
    row = list(p)
    if t == 0.0:
        best = max(range(len(row)), key=lambda i: (row[i], -i))
        row = [1.0 if i == best else 0.0 for i in range(len(row))]
    elif t != 1.0:
        logs = [math.log(x) / t if x > 0.0 else -math.inf for x in row]
        top = max(logs)
        row = normalize([math.exp(v - top) if v > -math.inf else 0.0 for v in logs])
    order = sorted(range(len(row)), key=lambda i: (-row[i], i))
    if 0 < k < len(row):
        keep = set(order[:k])
        row = normalize([x if i in keep else 0.0 for i, x in enumerate(row)])
        order = sorted(range(len(row)), key=lambda i: (-row[i], i))
    if top_p < 1.0:
        kept: set[int] = set()
        mass = 0.0
        for i in order:
            kept.add(i)
            mass += row[i]
            if mass >= top_p - 1e-12:
                break
        row = normalize([x if i in kept else 0.0 for i, x in enumerate(row)])
    return row


# Rows with zeros and ties (weights drawn from a few values), temperatures from greedy to flat.
_weights = st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0, 0.001, 7.5, 1e-9]), min_size=1, max_size=40).filter(any)


@settings(max_examples=400, deadline=None)
@given(
    _weights,
    st.sampled_from([0.0, 0.25, 0.5, 0.7, 1.0, 1.3, 2.0]),
    st.integers(0, 45),
    st.sampled_from([0.05, 0.3, 0.5, 0.9, 0.999, 1.0]),
)
def test_shape_equals_the_plain_definition_bit_for_bit(weights: list[float], t: float, k: int, top_p: float) -> None:
    p = normalize(weights)
    expected = _plain_shape(p, t, k, top_p)
    assert shape(p, temperature=t, top_k=k, top_p=top_p) == expected
    # Each knob alone, through its public function.
    assert apply_temperature(p, t) == _plain_shape(p, t, 0, 1.0)
    assert apply_top_k(p, k) == _plain_shape(p, 1.0, k, 1.0)
    assert apply_top_p(p, top_p) == _plain_shape(p, 1.0, 0, top_p)


def test_normalize_errors() -> None:
    with pytest.raises(ValueError, match="weights must have a positive sum"):
        normalize([0.0, 0.0])
    with pytest.raises(ValueError, match="weights must be finite and non-negative"):
        normalize([1.0, -1.0])
