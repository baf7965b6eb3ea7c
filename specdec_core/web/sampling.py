"""The Sampling settings page (docs/sampling.md): what temperature, top-k and top-p do to alpha, and the declared-q
pitfall, on the n-gram pair of ``models.ngram_pair`` and a prompt.

``sampling.explore`` answers the page's one widget with three results:

- **alpha against temperature**, top-k and top-p applied to both models as a serving system applies one request's
  settings. The prompt's contexts are the prefixes ending at each of its last ``MAX_CONTEXTS`` (16) tokens.
  ``alpha-exact`` is the mean over them of beta = sum_x min(p(x), q(x)) (Leviathan et al. 2023, Definition 3.1),
  enumerated over the whole vocabulary; ``alpha`` is measured from engine rounds at the same contexts (accepted /
  checked drafts), and ``alpha-se`` is its standard error, from the exact betas. Temperature 0 is the argmax as a
  one-hot (``distributions.apply_temperature``), so beta there is 1 where the two argmaxes agree and 0 elsewhere:
  ``argmax-agree`` is the share of contexts where they agree, which alpha then equals.
- **different settings on the two models**: the same curve with the draft greedy (its argmax, declared as the
  one-hot it is) or at its own temperature 1 without top-k or top-p, while the target follows the request. alpha
  changes; the output does not, as long as the draft declares the distribution it sampled from.
- **the declared-q pitfall** at the prompt's last context: the draft proposes its argmax but declares its shaped
  softmax as q (``exactness``'s teaching variant "greedy-soft", the mistake of transformers issue #32867), against
  the fix, where q is the distribution actually sampled from, the one-hot, run through the engine. Each gets its
  exact output law, a seeded sample, the sample's TV from the target with the TV an exact sampler shows at that size
  (``stats.tv_noise``), and a pooled chi-square verdict (``exact``).

Non-goals: other logits processors (repetition penalties, min-p), multi-token texts (the pitfall is shown at one
position, where its bias is exact and plain), and any sampling code of its own: rounds run on ``engine`` and the
broken round on ``exactness``'s teaching functions.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Any

from .. import engine, models, policies, stats, theory
from ..distributions import acceptance_rate, apply_temperature, shape
from . import handler
from .args import check_choice, check_int, check_number, check_seed, check_text
from .draft import MAX_PROMPT, ngram_pair, top_tokens
from .exactness import teaching_broken_counts, teaching_broken_law
from .plot import ALPHA, BETA, PIECE_AXIS, Figure, bar, figure, layout, line, rounded, with_pattern

#: The page's prompt: the novel's first sentence, stopped before its last word.
DEFAULT_PROMPT = (
    "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a"
)
#: Contexts per prompt: the prefixes ending at its last 16 tokens (a bound on the work of one call).
MAX_CONTEXTS = 16
#: The temperatures the curves are enumerated at (the current one is added to them).
TEMPERATURES = tuple(i / 4 for i in range(9))  # 0, 0.25, ..., 2
#: Most engine rounds (alpha) and one-token rounds (pitfall) a call may run: about a second in Pyodide.
MAX_ROUNDS = 4000
MAX_SAMPLES = 20_000
#: Tokens the pitfall's chart shows one by one; the rest are summed into one bar.
SHOWN = 8
#: What the draft declares as q in the pitfall demo; it always proposes its argmax.
DECLARED = {
    "softmax": "its softmax after the request's settings (the pitfall: nothing was drawn from it)",
    "sampled": "the one-hot on its argmax, the distribution it actually sampled from (the fix)",
}
#: Settings as (temperature, top-k, top-p); the draft's own in the comparison: temperature 1, all tokens.
Settings = tuple[float, int, float]
OWN: Settings = (1.0, 0, 1.0)
EXAMPLE: dict[str, Any] = {
    "prompt": DEFAULT_PROMPT,
    "temperature": 1.0,
    "top_k": 50,
    "top_p": 1.0,
    "seed": 0,
    "rounds": 240,
    "samples": 2000,
    "declared": "softmax",
}


def _shaped(row: list[float], settings: Settings) -> list[float]:
    temperature, top_k, top_p = settings
    return shape(row, temperature=temperature, top_k=top_k, top_p=top_p)


def prompt_contexts(pair: models.Pair, prompt: str) -> list[list[int]]:
    """The prefixes of the prompt's tokens that end at each of its last ``MAX_CONTEXTS`` tokens ([[]]: no prompt).

    A trailing space is dropped first, as on the Draft page: spaces belong to the word after them.
    """
    ids = pair.encode(prompt.rstrip(" \t"))
    return [ids[:i] for i in range(max(1, len(ids) - MAX_CONTEXTS + 1), len(ids) + 1)] if ids else [[]]


@lru_cache(maxsize=4)
def _rows(contexts: tuple[tuple[int, ...], ...]) -> tuple[tuple[list[float], list[float]], ...]:
    """The unshaped (target, draft) rows at each context: every setting is applied to these."""
    pair = ngram_pair(1.0, 0, 1.0)
    return tuple((pair.target.probs(c), pair.draft.probs(c)) for c in contexts)


def _argmax(row: Sequence[float]) -> int:
    # The lowest id on ties, as temperature 0 picks: index() finds the first entry equal to the largest.
    return row.index(max(row))


# --8<-- [start:betas]
def betas(contexts: tuple[tuple[int, ...], ...], settings: Settings) -> dict[str, list[float]]:
    """beta at each context, the target shaped by the request's ``settings`` and the draft three ways: ``same``
    (the request's settings too), ``greedy`` (its argmax, declared as the one-hot it samples from, so beta is
    p(argmax q)) and ``own`` (the draft's own settings ``OWN``)."""
    out: dict[str, list[float]] = {"same": [], "greedy": [], "own": []}
    for p_row, q_row in _rows(contexts):
        p = _shaped(p_row, settings)  # shaped once: it is the costly part, and all three share it
        out["same"].append(acceptance_rate(p, _shaped(q_row, settings)))
        out["greedy"].append(p[_argmax(q_row)])
        out["own"].append(acceptance_rate(p, _shaped(q_row, OWN)))
    return out


# --8<-- [end:betas]


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


@lru_cache(maxsize=16)
def curves(contexts: tuple[tuple[int, ...], ...], top_k: int, top_p: float) -> dict[str, list[float]]:
    """alpha, the mean of beta over the contexts, at each of ``TEMPERATURES`` for the three drafts of ``betas``."""
    out: dict[str, list[float]] = {"same": [], "greedy": [], "own": []}
    for t in TEMPERATURES:
        for key, row in betas(contexts, (t, top_k, top_p)).items():
            out[key].append(_mean(row))
    return out


def one_round(pair: models.Pair, context: Sequence[int], rng: random.Random) -> engine.Trace:
    """One engine round with one draft from ``context``: the draft is checked, then one token comes out."""
    run = engine.SpeculativeRun(pair, policies.FixedPolicy(1), max_tokens=2, rng=rng, context=context)
    run.advance(1)
    return run.trace


def measure_alpha(pair: models.Pair, contexts: Sequence[Sequence[int]], per_context: int, rng: random.Random) -> int:
    """Accepted drafts over ``per_context`` engine rounds at each context (each round checks exactly one draft)."""
    accepted = 0
    for _ in range(per_context):
        for context in contexts:
            accepted += one_round(pair, context, rng).counters.accepted
    return accepted


def _exact(row: Sequence[float]) -> list[Fraction]:
    """A float row as exact fractions (a float is a dyadic rational), rescaled by its exact sum."""
    # Summed as integers over the largest denominator (a power of two, so every other one divides it) instead of
    # 1,024 Fraction additions, each with its own gcd; a Fraction is kept in lowest terms, so the result is the same.
    ratios = [x.as_integer_ratio() for x in row]
    common = max(d for _, d in ratios)
    numerators = [n * (common // d) for n, d in ratios]
    total = sum(numerators)
    return [Fraction(n, total) for n in numerators]


# --8<-- [start:pitfall]
def pitfall(
    pair: models.Pair, context: Sequence[int], declared: str, n: int, rng: random.Random
) -> tuple[list[Fraction], list[int]]:
    """The exact law of the token one round emits at ``context`` when the draft proposes its argmax and declares
    ``declared`` (a key of ``DECLARED``) as q, and the counts of ``n`` seeded rounds."""
    p_row, q_row = pair.target.probs(context), pair.draft.probs(context)
    p, q = _exact(p_row), _exact(q_row)
    if declared == "softmax":
        return teaching_broken_law("greedy-soft", p, q), teaching_broken_counts("greedy-soft", p, q, n, rng)
    # The fix: the greedy draft is a model whose row is the one-hot it samples from, and the engine runs it.
    greedy = apply_temperature(q_row, 0.0)
    honest = models.Pair(pair.target, models.FixedModel(greedy), pair.vocab, pair.end_token)
    counts = [0] * len(p_row)
    for _ in range(n):
        counts[one_round(honest, context, rng).tokens[0]] += 1
    return theory.exact_output_distribution(p, _exact(greedy)), counts


# --8<-- [end:pitfall]


def fit(counts: list[int], p: list[float]) -> dict[str, float]:
    """The sample against p: TV, the TV an exact sampler shows at this size, and a chi-square test whose small cells
    are pooled (``stats.grouped_chi_square``): most of the vocabulary expects far fewer than 5 draws."""
    n = sum(counts)
    stat, df = stats.grouped_chi_square([counts], [p])
    p_value = stats.chi_square_sf(stat, df) if df else 1.0
    return {
        "tv-distance": round(0.5 * math.fsum(abs(c / n - x) for c, x in zip(counts, p, strict=True)), 12),
        "tv-noise": round(stats.tv_noise([n], [p]), 12),
        "p-value": p_value,
        "exact": 1 if p_value >= stats.SIGNIFICANCE else 0,
        "samples": n,
    }


def _check(
    prompt: object, temperature: object, top_k: object, top_p: object, declared: object
) -> tuple[str, Settings, str]:
    text = check_text(prompt, "prompt", MAX_PROMPT)
    t = check_number(temperature, "temperature", 0, 2)
    settings: Settings = (t, check_int(top_k, "top_k", 0, 1024), check_number(top_p, "top_p", 0.05, 1))
    return text, settings, check_choice(declared, "declared", list(DECLARED))


@handler("sampling.explore", example=EXAMPLE)
def explore(
    prompt: str = DEFAULT_PROMPT,
    temperature: float = 1.0,
    top_k: int = 50,  # 0 keeps every token
    top_p: float = 1.0,
    seed: int = 0,
    rounds: int = 480,  # engine rounds for the measured alpha, spread evenly over the contexts
    samples: int = 2000,  # one-token rounds for the pitfall demo
    declared: str = "softmax",  # what the pitfall's greedy draft declares as q: a key of DECLARED
) -> dict[str, Any]:
    """alpha measured and exact against temperature, and the declared-q pitfall or its fix (see the module)."""
    text, settings, kind = _check(prompt, temperature, top_k, top_p, declared)
    total, n = check_int(rounds, "rounds", 1, MAX_ROUNDS), check_int(samples, "samples", 1, MAX_SAMPLES)
    rng = random.Random(check_seed(seed))
    pair = ngram_pair(*settings)
    contexts = prompt_contexts(pair, text)
    key = tuple(tuple(c) for c in contexts)
    beta = betas(key, settings)
    per_context = max(1, total // len(contexts))
    accepted = measure_alpha(pair, contexts, per_context, rng)
    checked = per_context * len(contexts)
    # The accepted count is a sum of independent Bernoulli(beta_c) draws, per_context of them at each context c.
    se = math.sqrt(per_context * math.fsum(b * (1.0 - b) for b in beta["same"])) / checked
    law, counts = pitfall(pair, contexts[-1], kind, n, rng)
    p_row, proposed = pair.target.probs(contexts[-1]), _argmax(pair.draft.probs(contexts[-1]))
    p_exact = _exact(p_row)
    metrics = _alpha_metrics(key, beta, accepted / checked, se, checked)
    metrics |= fit(counts, p_row)
    metrics["exact-tv"] = float(sum((abs(a - b) for a, b in zip(law, p_exact, strict=True)), Fraction(0)) / 2)
    return {
        "figures": {
            "alpha": _alpha_figure(curves(key, settings[1], settings[2]), settings[0], metrics),
            "contexts": _contexts_figure(pair, contexts, beta["same"], key),
            "pitfall": _pitfall_figure(pair, p_row, [float(x) for x in law], counts, kind, proposed),
        },
        "metrics": metrics,
        "declared": kind,
        "description": DECLARED[kind],
        "context_text": pair.decode(contexts[-1][-12:], show_bytes=True),
        "proposed": pair.vocab[proposed],
    }


def _alpha_metrics(
    key: tuple[tuple[int, ...], ...], beta: dict[str, list[float]], measured: float, se: float, checked: int
) -> dict[str, float]:
    agree = [_argmax(p) == _argmax(q) for p, q in _rows(key)]
    return {
        "alpha": measured,
        "alpha-exact": round(_mean(beta["same"]), 12),
        "alpha-se": round(se, 12),
        "alpha-greedy": round(_mean(beta["greedy"]), 12),
        "alpha-own": round(_mean(beta["own"]), 12),
        "argmax-agree": sum(agree) / len(agree),
        "contexts": len(agree),
        "rounds": checked,
    }


# Figures --------------------------------------------------------------------------------------------------------


def _alpha_figure(curve: dict[str, list[float]], temperature: float, metrics: dict[str, float]) -> Figure:
    """alpha against temperature: the three draft settings enumerated, and this temperature's measurement."""
    xs = list(TEMPERATURES)
    hover = f"T = %{{x}}: {ALPHA} = %{{y:.3f}}<extra></extra>"
    dot = {"symbol": "diamond", "size": 9}
    measured = line([temperature], [metrics["alpha"]], name="measured", role="accepted", mode="markers", marker=dot)
    measured["error_y"] = {"type": "data", "array": [round(2 * metrics["alpha-se"], 12)]}
    # The measured alpha estimates the exact one, so the two sit together: the ring shows the diamond and its error bar.
    ring = {"size": 26, "symbol": "circle-open", "line": {"width": 2}}
    data = [
        line(xs, rounded(curve["same"]), name="both at the request's settings", role="target", hover=hover),
        line(xs, rounded(curve["greedy"]), name="draft greedy, q one-hot", role="draft", dash="dash", hover=hover),
        line(xs, rounded(curve["own"]), name="draft at temperature 1", role="residual", dash="dot", hover=hover),
        line([temperature], [metrics["alpha-exact"]], name="exact here", role="target", mode="markers", marker=ring),
        measured,
    ]
    x_title, y_title = "temperature", f"{ALPHA}: mean of {BETA} over the contexts"
    return figure(data, layout(x_title=x_title, y_title=y_title, y_range=[0, 1.05], height=360, margin={"t": 64}))


def _contexts_figure(
    pair: models.Pair, contexts: list[list[int]], betas: list[float], key: tuple[tuple[int, ...], ...]
) -> Figure:
    """beta at each context of the prompt, and whether the two models' argmaxes agree there."""
    positions = [len(c) for c in contexts]
    pieces = [pair.vocab[c[-1]] if c else "(start)" for c in contexts]
    agree = [1.0 if _argmax(p) == _argmax(q) else 0.0 for p, q in _rows(key)]
    beta = bar(positions, rounded(betas), name=f"{BETA} at this context", role="overlap")
    beta |= {"customdata": pieces, "hovertemplate": f"after “%{{customdata}}”: {BETA} = %{{y:.3f}}<extra></extra>"}
    marks = line(positions, agree, name="argmaxes agree (1) or not (0)", role="rejected", mode="markers")
    marks |= {"marker": marks["marker"] | {"symbol": "diamond-open", "size": 9}, "customdata": pieces}
    marks["hovertemplate"] = "after “%{customdata}”: agree = %{y}<extra></extra>"
    # Below 0 and above 1 a little: the diamonds at 0 and 1 stay clear of the axis lines.
    axes = layout(x_title="prompt token the context ends at", y_title=BETA, y_range=[-0.06, 1.06], height=300)
    return figure([beta, marks], axes)


def _pitfall_figure(
    pair: models.Pair, p: list[float], law: list[float], counts: list[int], declared: str, proposed: int
) -> Figure:
    """Target p against this draft's exact output law and its sample, on the target's likeliest tokens and the
    token the greedy draft proposes (where the pitfall piles up its mass)."""
    # A greedy or top-k target has fewer than SHOWN tokens: the zeros after them are no "likeliest tokens".
    shown = [t for t in top_tokens(p, SHOWN) if p[t] > 0]
    shown += [] if proposed in shown else [proposed]
    labels = [pair.vocab[t] for t in shown] + ["others"]
    n = sum(counts)

    def grouped(row: Sequence[float]) -> list[float]:
        picked = [row[t] for t in shown]
        return rounded([*picked, max(0.0, 1.0 - math.fsum(picked))])

    name = "declared q = softmax (pitfall)" if declared == "softmax" else "declared q = one-hot (fix)"
    sampled = bar(labels, grouped([c / n for c in counts]), name=f"sampled, {n:,} rounds", role="accepted")
    data = [
        bar(labels, grouped(p), name="target p", role="target"),
        with_pattern(bar(labels, grouped(law), name=f"{name}, exactly", role="rejected"), "x"),
        with_pattern(sampled, "."),
    ]
    return figure(
        data, layout(x_title=PIECE_AXIS, y_title="P(emit token)", y_range=[0, 1], barmode="group", height=320)
    )
