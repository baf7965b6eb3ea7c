"""The Correct page (docs/correct.md): where the correction comes from, and the real round sampled.

``correct.split`` shows one position of a preset pair whose draft the reader bends: p, q, min(p, q), the residual,
and min(p, q)(x) + (1 - beta) residual(x) = p(x) stacked per token. ``correct.sample`` plays one-token rounds on
the engine and compares the emitted tokens with p. Non-goals: the proof (docs/exactness.md); the step itself.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, TypeVar

from .. import engine, models, policies, stats, steps
from ..distributions import acceptance_rate, apply_temperature, normalize, residual, total_variation
from . import handler
from .args import check_choice, check_int, check_number, check_pair, check_seed
from .plot import Figure, bar, figure, layout, line, pair_figure, probability_bars, rounded, with_pattern

#: Named (labels, p, q) starting points of the widget; our worked example first.
PRESETS: dict[str, tuple[list[str], list[float], list[float]]] = {
    "worked": (["cat", "dog", "fox"], [0.4, 0.35, 0.25], [0.2, 0.2, 0.6]),
    "disjoint": (["cat", "dog", "fox", "owl", "bee"], [0.5, 0.3, 0.2, 0.0, 0.0], [0.0, 0.0, 0.0, 0.6, 0.4]),
    "equal": (["cat", "dog", "fox", "owl", "bee"], [0.35, 0.25, 0.2, 0.12, 0.08], [0.35, 0.25, 0.2, 0.12, 0.08]),
    "one-hot": (["cat", "dog", "fox", "owl", "bee"], [0.35, 0.25, 0.2, 0.12, 0.08], [1.0, 0.0, 0.0, 0.0, 0.0]),
}

#: Largest Monte Carlo a single call may run: the browser stays responsive (about a second in Pyodide).
MAX_SAMPLES = 20_000

_Y = "%{y:.4f}<extra></extra>"
_T = TypeVar("_T")


def rotated(row: list[_T], k: int) -> list[_T]:
    """``row`` rotated right by ``k`` places: every token's probability moves to the token ``k`` ids later.

    >>> rotated([0.5, 0.3, 0.2], 1)
    [0.2, 0.5, 0.3]
    """
    return row[-k % len(row) :] + row[: -k % len(row)]


@handler("correct.split", example={"preset": "worked", "temperature": 1.0, "shift": 0, "blend": 0.0})
def split(
    preset: str = "worked",
    temperature: float = 1.0,  # draft sharpness: < 1 sharpens q, > 1 flattens it
    shift: int = 0,  # rotate q by this many tokens (its favourite moves)
    blend: float = 0.0,  # 0 keeps the draft; 1 moves it onto the target
) -> dict[str, Any]:
    """One position: p, q, min(p, q), the residual, and the identity min(p, q) + (1 - beta) residual = p per token.

    Our worked example (p = [.4, .35, .25], q = [.2, .2, .6]) gives beta = .65 and residual [4/7, 3/7, 0].
    """
    labels, p, base_q = PRESETS[check_choice(preset, "preset", list(PRESETS))]
    # The widget's draft: q sharpened or flattened, rotated by ``shift`` tokens, blended toward p.
    sharp = apply_temperature(base_q, check_number(temperature, "temperature", 0.25, 4.0))
    shifted, w = rotated(sharp, check_int(shift, "shift", -8, 8)), check_number(blend, "blend", 0, 1)
    q = normalize([(1.0 - w) * qi + w * pi for qi, pi in zip(shifted, p, strict=True)], "q")
    beta = acceptance_rate(p, q)
    overlap = [min(pi, qi) for pi, qi in zip(p, q, strict=True)]
    fallback = residual(p, q)
    corrected = [(1.0 - beta) * r for r in fallback]
    # The picture's claim, checked in floats: the two parts of each stack add up to p(x).
    gap = max(abs(a + b - pi) for a, b, pi in zip(overlap, corrected, p, strict=True))
    return {
        "figures": {
            "dists": pair_figure(labels, p, rounded(q), rounded(overlap), rounded(fallback)),
            "proof": _split_figure(labels, p, rounded(overlap), rounded(corrected)),
        },
        "metrics": {
            "beta": round(beta, 12),
            "reject-rate": round(1.0 - beta, 12),
            "draft-tv": round(total_variation(p, q), 12),
            "identity-gap": round(gap, 15),
        },
        "labels": labels,
        "p": p,
        "q": rounded(q),
        "residual": rounded(fallback),
        "temperature_note": _temperature_note(base_q),
    }


def _temperature_note(q: list[float]) -> str:
    """Why the temperature slider leaves this draft as it is, or "" when it does not.

    Temperature raises each probability to the power 1/T and renormalises, so a draft that is uniform over its
    support (a one-hot draft is the extreme case) comes back unchanged at every T.
    """
    support = [x for x in q if x > 0]
    if max(support) - min(support) > 1e-12:
        return ""
    if len(support) == 1:
        return (
            "Temperature does nothing here: a one-hot draft stays one-hot at any temperature "
            "(q(x)^(1/T), renormalised, keeps all of q on one token)."
        )
    return "Temperature does nothing here: a draft uniform over its tokens stays so at any temperature."


def play_rounds(pair: models.Pair, gamma: int, n: int, rng: random.Random) -> list[steps.Round]:
    """``n`` rounds from the same start, each an engine run of one round (``advance(1)`` runs whole rounds until a
    token is out; a budget of gamma + 1 leaves the draft uncapped). For pages that need rounds, not a text."""
    policy, rounds = policies.FixedPolicy(gamma), []
    for _ in range(n):
        run = engine.SpeculativeRun(pair, policy, max_tokens=gamma + 1, rng=rng)
        run.advance(1)
        rounds += run.trace.rounds
    return rounds


# --8<-- [start:correct_sample]
def sample_rounds(p: list[float], q: list[float], labels: list[str], n: int, rng: random.Random) -> list[steps.Round]:
    """``n`` one-token rounds at one position: the draft proposes a token from q, the target checks it with p."""
    # The same rows at every position: each round's first emitted token (accepted draft or correction) is a
    # draw at this one position.
    return play_rounds(models.Pair(models.FixedModel(p), models.FixedModel(q), labels), 1, n, rng)


@handler("correct.sample", example={"p": [0.4, 0.35, 0.25], "q": [0.2, 0.2, 0.6], "n": 2000, "seed": 1})
def sample(
    p: list[float],  # [vocab] target at this position
    q: list[float],  # [vocab] draft at this position
    n: int = 10_000,
    seed: int = 0,
    labels: list[str] | None = None,
) -> dict[str, Any]:
    """Run ``n`` real one-token rounds and compare the emitted tokens with p."""
    p_row, q_row, names = check_pair(p, q, labels)
    runs = sample_rounds(p_row, q_row, names, check_int(n, "n", 1, MAX_SAMPLES), random.Random(check_seed(seed)))
    tokens = [r.tokens[0] for r in runs]
    counts = [tokens.count(x) for x in range(len(p_row))]
    return {
        "figure": _sample_figure(names, p_row, counts, q_row),
        "metrics": {
            **fit_metrics(counts, p_row),
            "correction-share": sum(r.ended_with == "correction" for r in runs) / len(runs),
            "correction-share-theory": round(1.0 - acceptance_rate(p_row, q_row), 12),
        },
        "counts": counts,
    }


# --8<-- [end:correct_sample]


def fit_metrics(counts: list[int], p: list[float]) -> dict[str, float]:
    """The sample's goodness of fit to p (``stats.goodness_of_fit``, the statistics it could compute) and its size."""
    fit = stats.goodness_of_fit(counts, p)
    return {name: value for name, value in fit.items() if value is not None} | {"samples": sum(counts)}


# Figures --------------------------------------------------------------------------------------------------------


def _split_figure(labels: list[str], p: list[float], overlap: list[float], corrected: list[float]) -> Figure:
    """The proof in one picture: per token, accepted mass min(p, q) stacked on correction mass reaches p(x)."""
    mark = {"symbol": "line-ew-open", "size": 34, "line": {"width": 3}}
    hover = f"via an accepted draft: {_Y}"
    via_draft = bar(labels, overlap, name="accepted draft: min(p, q)(x)", role="overlap", hover=hover)
    name = "correction: (1 &#8722; &#946;) · residual(x)"
    via_fix = bar(labels, corrected, name=name, role="residual", hover=f"via a correction: {_Y}")
    target = line(labels, p, name="target p(x)", role="target", mode="markers", marker=mark, hover=f"p(%{{x}}) = {_Y}")
    return figure(
        [via_draft, via_fix, target], layout(x_title="token", y_title="P(emit token)", y_range=[0, 1], barmode="stack")
    )


def _sample_figure(labels: list[str], p: list[float], counts: Sequence[int], q: list[float]) -> Figure:
    """Target p (with a band of two standard errors at this sample size) against the emitted frequencies."""
    n = max(sum(counts), 1)
    target = bar(labels, p, name="target p", role="target", hover=f"p(%{{x}}) = {_Y}")
    # Where an exact sampler's frequency lands about 95% of the time: p +- 2 sqrt(p (1 - p) / n).
    target["error_y"] = {"type": "data", "array": [round(2.0 * (x * (1.0 - x) / n) ** 0.5, 12) for x in p]}
    shares = [c / n for c in counts]
    emitted = bar(labels, shares, name=f"emitted, {n:,} rounds", role="accepted", hover=f"emitted %{{x}}: {_Y}")
    draft = bar(labels, q, name="draft q", role="draft", hover=f"q(%{{x}}) = {_Y}")
    return probability_bars([target, with_pattern(emitted, "."), draft])
