"""The Why-it-is-exact page (docs/exactness.md): exactness checked in fractions, and broken rounds caught.

``exactness.check`` enumerates with ``fractions.Fraction`` the law of the emitted token at one position, route by
route, and of the first two tokens and the first gamma + 1 tokens across rounds of a context-dependent pair,
against the target.
``exactness.broken`` gives the exact output law of the real round or of one broken on purpose, and with n > 0 a
seeded sample: the real round through the engine, a broken one through the teaching-only functions below. Other
pages' demonstrations of a broken round (the Sampling page's declared-q pitfall) use them only through
``teaching_broken_law`` and ``teaching_broken_counts``; nothing outside ``web/`` may call them. Non-goals: the proof
itself (docs/exactness.md).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from .. import theory
from ..distributions import sampler
from . import handler
from .args import check_choice, check_int, check_labels, check_list, check_pair, check_seed
from .correct import MAX_SAMPLES, fit_metrics, rotated, sample_rounds
from .plot import GAMMA, Figure, bar, probability_bars, rounded, with_pattern

_ZERO, _ONE = Fraction(0), Fraction(1)
_ROUTES = ("p", "q", "accepted", "correction", "emitted")  # the columns of the one-position table
#: The enumeration of gamma + 1 tokens grows about 3x per gamma: 0.1 s at gamma = 3 natively, 1.5 s at 4.
MAX_CHECK_GAMMA = 3


def _weights(values: object, name: str) -> list[Fraction]:
    """Small integer weights -> an exact distribution (the widget's number inputs)."""
    ints = [check_int(v, f"{name}[{i}]", 0, 99) for i, v in enumerate(check_list(values, name, 2, 4))]
    if not any(ints):
        raise ValueError(f"{name} must have at least one positive weight")
    return [Fraction(v, sum(ints)) for v in ints]


def _position_rows(p: list[Fraction], q: list[Fraction], names: list[str]) -> tuple[list[dict[str, Any]], Fraction]:
    """Per token: its two routes, min(p, q)(x) and (1 - beta) r(x), and the enumerated total against p; and beta."""
    emitted = theory.exact_output_distribution(p, q)  # branch by branch, so the equality is checked, not assumed
    beta = sum(map(min, p, q), _ZERO)
    excess = [max(_ZERO, a - b) for a, b in zip(p, q, strict=True)]
    shortfall = sum(excess, _ZERO)  # = 1 - beta
    rows = []
    for x, name in enumerate(names):
        cells = (p[x], q[x], min(p[x], q[x]), (1 - beta) * excess[x] / shortfall if shortfall else _ZERO, emitted[x])
        rows.append({"token": name, "equal": emitted[x] == p[x]} | dict(zip(_ROUTES, map(str, cells), strict=True)))
    return rows, beta


def _prefix_laws(
    p: list[Fraction], q: list[Fraction], gamma: int, length: int
) -> tuple[dict[tuple[int, ...], Fraction], dict[tuple[int, ...], Fraction]]:
    """The first ``length`` emitted tokens of a context-dependent pair, enumerated: (speculative, target alone).

    After token t the target is p rotated by t + 1 places and the draft q rotated by t places, so every context has
    its own beta and each token depends on the one before.
    """

    def target(context: tuple[int, ...]) -> list[Fraction]:
        return rotated(p, context[-1] + 1) if context else p

    def draft(context: tuple[int, ...]) -> list[Fraction]:
        return rotated(q, context[-1]) if context else q

    return theory.exact_prefix_distribution(target, draft, gamma, length), theory.target_prefix_distribution(
        target, length
    )


def _prefix_rows(p: list[Fraction], q: list[Fraction], gamma: int, names: list[str]) -> list[dict[str, Any]]:
    """The first two emitted tokens across rounds, enumerated, against the target's: one table row per prefix."""
    speculative, reference = _prefix_laws(p, q, gamma, 2)
    rows: list[dict[str, Any]] = []
    for prefix in sorted(set(speculative) | set(reference)):
        got, want = speculative.get(prefix, _ZERO), reference.get(prefix, _ZERO)
        rows.append({"prefix": " ".join(names[t] for t in prefix), "speculative": str(got), "target": str(want)})
        rows[-1]["equal"] = got == want
    return rows


def _round_check(p: list[Fraction], q: list[Fraction], gamma: int) -> dict[str, Any]:
    """The first gamma + 1 tokens: as long as a round that accepts every draft and takes its bonus.

    This is where gamma shows: a longer round reaches further before the next one starts, and the bonus token
    (drawn from the target's row gamma + 1) must still leave the prefix law equal to the target's.
    """
    speculative, reference = _prefix_laws(p, q, gamma, gamma + 1)
    keys = set(speculative) | set(reference)
    equal = all(speculative.get(k, _ZERO) == reference.get(k, _ZERO) for k in keys)
    return {"length": gamma + 1, "prefixes": len(keys), "equal": equal}


@handler("exactness.check", example={"p": [8, 7, 5], "q": [1, 1, 3], "gamma": 2})
def check(p: list[int], q: list[int], gamma: int = 2, labels: list[str] | None = None) -> dict[str, Any]:
    """Exact arithmetic: the emitted token's law, a two-token prefix and a (gamma + 1)-token prefix across rounds,
    against the target.

    ``p`` and ``q`` are integer weights, normalised exactly; ``beta`` = sum_x min(p(x), q(x)).
    """
    p_exact, q_exact = _weights(p, "p"), _weights(q, "q")
    if len(p_exact) != len(q_exact):
        raise ValueError(f"p and q must have the same length (got {len(p_exact)} and {len(q_exact)})")
    g = check_int(gamma, "gamma", 1, MAX_CHECK_GAMMA)
    names = ["A", "B", "C", "D"][: len(p_exact)] if labels is None else check_labels(labels, "labels", len(p_exact))
    position, beta = _position_rows(p_exact, q_exact, names)
    prefix = _prefix_rows(p_exact, q_exact, g, names)
    whole = _round_check(p_exact, q_exact, g)
    checks = [row["equal"] for row in position + prefix]
    metrics = {"exact": 1 if all(checks) and whole["equal"] else 0, "cells-checked": len(checks), "beta": float(beta)}
    return {
        "position": position,
        "prefix": prefix,
        "round": whole,
        "beta": str(beta),
        "metrics": metrics | {"round-prefixes": whole["prefixes"]},
        "verdict": _check_verdict(metrics, whole, g, str(beta)),
    }


def _check_verdict(metrics: dict[str, Any], whole: dict[str, Any], gamma: int, beta: str) -> str:
    """The sentence under the tables: every comparison Python made, and how many."""
    rows = metrics["cells-checked"]
    round_ = (
        f"all {whole['prefixes']} prefixes of {whole['length']} tokens, as many as one round with {GAMMA} = {gamma} "
        "emits when it accepts every draft and takes its bonus"
    )
    if metrics["exact"]:
        exactly = f"exactly, as fractions (\N{GREEK SMALL LETTER BETA} = {beta})"
        return f"All {rows} table rows equal the target's {exactly}, and so do {round_}."
    equal = "equal" if whole["equal"] else "not equal"
    return f"Some probabilities differ from the target's: {rows} table rows and {round_} compared ({equal})."


# Teaching only: broken rounds -----------------------------------------------------------------------------------
# Each variant changes ONE thing about the real round, the way implementations have gone wrong. "exact" and
# "zero-draft" are the real steps; every other variant is computed below and never in steps.py.

#: variant -> what it does, as the page shows it.
BROKEN_VARIANTS: dict[str, str] = {
    "exact": "The real steps: accept with min(1, p/q), correct from normalize(max(0, p - q)).",
    "unclipped": "Accept when u < p/q without the min(1, .). Harmless: a ratio above 1 accepts either way.",
    "correct-from-p": "After a rejection, draw the correction from p instead of the residual.",
    "q-over-p": "Accept with min(1, q/p), the ratio upside down.",
    "unnormalized": "Draw the correction from max(0, p - q) without normalising it (inverse CDF on weights).",
    "draft-temperature": "Draft at temperature 0.5, but verify against the draft's temperature-1 probabilities.",
    "greedy-soft": "The draft always proposes its argmax but declares its softmax q, as transformers' assisted "
    "generation did until PR #33534 (issue #32867, reported on 4.44.0): p/q divides by a q nothing was drawn from.",
    "zero-draft": "An honest draft that gives 0 to a token the target wants (top-k cuts q's least likely token, "
    "drawn and declared alike). Still exact: that token comes only as a correction, from the residual.",
    "zero-naive": "The draft draws from all of q but declares q after that top-k: a naive verifier computes p/0 = "
    "infinity and accepts. steps.verify rejects such a token outright, as vLLM's rejection sampler does (0.11.0).",
}
_REAL = ("exact", "zero-draft")


def _normalized(weights: Sequence[Fraction]) -> list[Fraction]:
    total = sum(weights, _ZERO)
    return [w / total for w in weights]


def _cut_least_likely(q: list[Fraction]) -> list[Fraction]:
    """q after top-k with k one below its support: the least likely proposed token (highest id on ties) gets 0."""
    support = [i for i, x in enumerate(q) if x > 0]
    if len(support) < 2:
        return list(q)
    cut = min(support, key=lambda i: (q[i], -i))
    return _normalized([_ZERO if i == cut else x for i, x in enumerate(q)])


# --8<-- [start:broken_variants]
def _teaching_broken_parts(
    variant: str, p: list[Fraction], q: list[Fraction]
) -> tuple[list[Fraction], list[Fraction], list[Fraction]]:
    """(the law drafts are drawn from, P(the test passes) per token before clipping at 1, the correction's law)."""
    declared = _cut_least_likely(q) if variant == "zero-naive" else q  # the q the verifier is told
    draw = q
    if variant == "draft-temperature":
        draw = _normalized([x * x for x in q])  # temperature 0.5 is q**2 renormalised
    elif variant == "greedy-soft":
        best = max(range(len(q)), key=lambda i: (q[i], -i))  # greedy: the argmax, the lowest id on ties
        draw = [_ONE if i == best else _ZERO for i in range(len(q))]
    accept = []
    for a, b in zip(p, declared, strict=True):
        if variant == "q-over-p":
            accept.append(b / a if a > 0 else _ONE)
        elif b == 0:  # p/0 is infinite and passes any u (0/0 is NaN and fails); the real rule rejects
            accept.append(_ONE if variant == "zero-naive" and a > 0 else _ZERO)
        else:
            accept.append(a / b)  # "unclipped" tests u < p/q as it is: a ratio above 1 passes every u anyway
    excess = [max(_ZERO, a - b) for a, b in zip(p, declared, strict=True)]
    if variant == "correct-from-p":
        fix = list(p)
    elif variant == "unnormalized":
        # Inverse CDF on weights summing to 1 - beta < 1: a uniform beyond the total falls to the last positive token.
        fix = list(excess)
        last = max((i for i, e in enumerate(excess) if e > 0), default=len(p) - 1)
        fix[last] += 1 - sum(excess, _ZERO)
    else:
        fix = _normalized(excess) if any(excess) else list(p)
    return draw, accept, fix


def _teaching_broken_law(variant: str, p: list[Fraction], q: list[Fraction]) -> list[Fraction]:
    """The exact law of the token a broken one-token round emits: drawn and passed, or rejected and corrected."""
    draw, accept, fix = _teaching_broken_parts(variant, p, q)
    passed = [d * min(_ONE, a) for d, a in zip(draw, accept, strict=True)]
    rejected = 1 - sum(passed, _ZERO)
    return [x + rejected * f for x, f in zip(passed, fix, strict=True)]


def _teaching_broken_token(
    draw: Callable[[float], int], accept: list[float], fix: Callable[[float], int], rng: random.Random
) -> int:
    """One broken round's emitted token, from the variant's float parts (the two laws as samplers), three uniforms."""
    x = draw(rng.random())
    return x if rng.random() < accept[x] else fix(rng.random())


# --8<-- [end:broken_variants]


def teaching_broken_law(variant: str, p: list[Fraction], q: list[Fraction]) -> list[Fraction]:
    """The exact law of the token one round of a broken ``variant`` emits (never a real variant: see theory.py)."""
    kind = check_choice(variant, "variant", [v for v in BROKEN_VARIANTS if v not in _REAL])
    return _teaching_broken_law(kind, p, q)


def teaching_broken_counts(variant: str, p: list[Fraction], q: list[Fraction], n: int, rng: random.Random) -> list[int]:
    """How often each token is emitted by ``n`` one-token rounds of a broken ``variant``, drawn with ``rng``."""
    kind = check_choice(variant, "variant", [v for v in BROKEN_VARIANTS if v not in _REAL])
    draw, accept, fix = ([float(x) for x in row] for row in _teaching_broken_parts(kind, p, q))
    # Every round draws from the same two laws: their running sums are made once, not once per draw.
    draw_token, fix_token = sampler(draw), sampler(fix)
    counts = [0] * len(p)
    for _ in range(n):
        counts[_teaching_broken_token(draw_token, accept, fix_token, rng)] += 1
    return counts


def _sample(variant: str, p: list[Fraction], q: list[Fraction], names: list[str], n: int, seed: int) -> list[int]:
    """The tokens ``n`` one-token rounds of the variant emit, counted per token (q: the draft the steps see)."""
    rng = random.Random(seed)
    if variant not in _REAL:
        return teaching_broken_counts(variant, p, q, n, rng)
    tokens = [r.tokens[0] for r in sample_rounds([float(x) for x in p], [float(x) for x in q], names, n, rng)]
    return [tokens.count(x) for x in range(len(p))]


@handler("exactness.broken", example={"variant": "greedy-soft", "p": [0.4, 0.35, 0.25], "q": [0.2, 0.2, 0.6]})
def broken(
    variant: str,
    p: list[float],  # [vocab] target
    q: list[float],  # [vocab] draft
    n: int = 0,  # rounds to sample; 0 shows the exact law only
    seed: int = 0,
    labels: list[str] | None = None,
) -> dict[str, Any]:
    """The real round or a broken one: its exact output law (``law``, fractions beside the target's) and with
    n > 0 a seeded sample. p and q are read as the nearest fractions with denominators up to 10^6 (0.35 is 7/20,
    not the float nearest it), so the law is exact for that rational pair; ``exact-tv`` is its distance from p."""
    kind = check_choice(variant, "variant", list(BROKEN_VARIANTS))
    p_row, q_row, names = check_pair(p, q, labels)
    count, s = check_int(n, "n", 0, MAX_SAMPLES), check_seed(seed)
    p_exact, q_exact = (_normalized([Fraction(x).limit_denominator(10**6) for x in row]) for row in (p_row, q_row))
    if kind in _REAL:
        q_exact = _cut_least_likely(q_exact) if kind == "zero-draft" else q_exact
        law = theory.exact_output_distribution(p_exact, q_exact)
    else:
        law = _teaching_broken_law(kind, p_exact, q_exact)
    off = sum((abs(e - x) for e, x in zip(law, p_exact, strict=True)), _ZERO) / 2
    metrics: dict[str, float] = {"exact-tv": float(off), "exact-equal": 1 if off == 0 else 0}
    counts = _sample(kind, p_exact, q_exact, names, count, s) if count else []
    metrics |= fit_metrics(counts, p_row) if counts else {}
    return {
        "figure": _broken_figure(names, p_row, rounded([float(x) for x in law]), counts),
        "metrics": metrics,
        "verdict": _broken_verdict(metrics),
        "variant": kind,
        "description": BROKEN_VARIANTS[kind],
        "variants": BROKEN_VARIANTS,
        "labels": names,
        "law": [str(x) for x in law],
        "target": [str(x) for x in p_exact],
        "counts": counts,
    }


def _exponent(x: float) -> str:
    """A small p-value as the page's tiles write it (ui/controls.js pValue): 1.2e-5, or "below 1e-12" for one the
    chi-squared tail gives as 0, which "0.0e+0" would claim exactly.

    >>> _exponent(1.23e-5), _exponent(0.0)
    ('1.2e-5', 'below 1e-12')
    """
    return "below 1e-12" if x < 1e-12 else f"{x:.1e}".replace("e-0", "e-").replace("e+0", "e+")


def _broken_verdict(m: dict[str, float]) -> str:
    """What the exact law says before a sample, and what the sample's test says after one."""
    if not m.get("samples"):
        if m["exact-equal"]:
            return "In exact arithmetic this implementation emits p exactly. Sample it to see the statistics agree."
        off = f"is off by TV {m['exact-tv']:.4f}"
        return f"In exact arithmetic this implementation {off}. Sample it to watch the test catch it."
    head = f"{int(m['samples']):,} rounds: TV {m['tv-distance']:.4f}"
    if m["exact"]:
        noise = f"about the {m['tv-noise']:.4f} that noise alone gives"
        return f"{head}, {noise}; p-value {m['p-value']:.3f}. No evidence against exactness."
    return (
        f"{head}, far above the {m['tv-noise']:.4f} of noise; p-value {_exponent(m['p-value'])}. The output is not p."
    )


def _broken_figure(labels: list[str], p: list[float], law: list[float], counts: list[int]) -> Figure:
    """Target p against what one (maybe broken) implementation emits: exactly, and in a sample."""
    hover = "P(emit %{x}) = %{y:.4f}<extra></extra>"
    data = [
        bar(labels, p, name="target p", role="target", hover="p(%{x}) = %{y:.4f}<extra></extra>"),
        with_pattern(bar(labels, law, name="this implementation, exactly", role="rejected", hover=hover), "x"),
    ]
    if counts:
        shares = [c / sum(counts) for c in counts]
        data.append(with_pattern(bar(labels, shares, name=f"sampled, {sum(counts):,} rounds", role="accepted"), "."))
    return probability_bars(data)
