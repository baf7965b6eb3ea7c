"""Handlers not yet moved to their page's module (temporary during the split into web/<page>.py)."""

from __future__ import annotations

import heapq
import math
import random
from fractions import Fraction
from functools import lru_cache
from typing import Any

from .. import figures, models, stats, steps, theory
from ..distributions import (
    acceptance_rate,
    apply_temperature,
    check_alpha,
    normalize,
    residual,
    sample,
    total_variation,
    validate_probs,
)
from . import handler


def _rounded(values: list[float]) -> list[float]:
    # 12 decimals hide float noise (0.6499999999999999) without hiding anything a chart or a test can see.
    return [round(v, 12) for v in values]


# --- distributions ------------------------------------------------------------------------------------------


# --8<-- [start:pair]
@handler("distributions.pair", example={"p": [0.4, 0.35, 0.25], "q": [0.2, 0.2, 0.6], "blend": 0.5})
def _pair(
    p: list[float],  # [vocab] target distribution
    q: list[float],  # [vocab] draft distribution
    blend: float = 0.0,  # 0 keeps q; 1 moves the draft all the way onto the target
    labels: list[str] | None = None,  # [vocab] token names for the x axis
) -> dict[str, Any]:
    """One position of verification: p, q, the accepted mass min(p, q) and the residual.

    The draft is (1 - blend) * q + blend * p, so one slider walks it from q to the target. The paper's worked
    example (p = [.4, .35, .25], q = [.2, .2, .6], blend 0) gives beta = .65 and residual [4/7, 3/7, 0].
    """
    p_row = validate_probs(p, "p")
    q_row = validate_probs(q, "q")
    if len(p_row) != len(q_row):
        raise ValueError(f"p and q must have the same length (got {len(p_row)} and {len(q_row)})")
    if isinstance(blend, bool) or not isinstance(blend, int | float) or not 0.0 <= blend <= 1.0:
        raise ValueError(f"blend must be a number between 0 and 1, got {blend!r}")
    names = labels if labels is not None else [f"x{i + 1}" for i in range(len(p_row))]
    if len(names) != len(p_row):
        raise ValueError(f"labels must name every token (got {len(names)} for {len(p_row)})")

    draft = [(1.0 - blend) * qi + blend * pi for qi, pi in zip(q_row, p_row, strict=True)]
    beta = acceptance_rate(p_row, draft)
    overlap = [min(pi, di) for pi, di in zip(p_row, draft, strict=True)]
    fallback = residual(p_row, draft)
    return {
        "figure": figures.pair_figure(names, p_row, _rounded(draft), _rounded(overlap), _rounded(fallback)),
        "metrics": {
            "accept-rate": round(beta, 12),
            "reject-rate": round(1.0 - beta, 12),
            "tv-distance": round(total_variation(p_row, draft), 12),
        },
        "q": _rounded(draft),
        "residual": _rounded(fallback),
    }


# --8<-- [end:pair]


# --- Draft and Verify pages: the n-gram pair, one round at a time -------------------------------------------

#: Longest prompt the pages accept, in characters (a text box, not a document).
_MAX_PROMPT = 400
#: Draft lengths the pages offer; the steps themselves allow up to 64.
_MAX_PAGE_GAMMA = 8


@lru_cache(maxsize=8)
def _ngram(temperature: float, top_k: int, top_p: float) -> models.Pair:
    # One pair per sampling setting, kept: the models' row caches then serve the next Step on the same prompt.
    return models.ngram_pair(temperature=temperature, top_k=top_k, top_p=top_p)


def _page_int(value: object, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high} (got {value})")
    return value


def _top(row: list[float], n: int) -> list[int]:
    """Token ids of the ``n`` largest entries, most likely first (lowest id on ties)."""
    # nlargest equals sorted(..., reverse=True)[:n], which is stable: ties keep id order.
    return heapq.nlargest(n, range(len(row)), key=row.__getitem__)


def _prompt_words(pair: models.Pair, prompt: str) -> list[dict[str, Any]]:
    # The reader sees which words the 1,000-word vocabulary lacks (they reach the models as <unk>).
    vocab = set(pair.vocab)
    return [{"word": w, "known": w in vocab} for w in models.tokenize(prompt)]


# --8<-- [start:draft_ngram]
def _draft_ngram(
    prompt: str, gamma: int, temperature: float, top_k: int, top_p: float, seed: int
) -> tuple[models.Pair, list[int], list[int], list[list[float]], random.Random]:
    """Encode the prompt and run Step 1 on the bigram draft; the rng carries on into Verify."""
    if not isinstance(prompt, str):
        raise TypeError(f"prompt must be a string, got {type(prompt).__name__}")
    if len(prompt) > _MAX_PROMPT:
        raise ValueError(f"prompt must be at most {_MAX_PROMPT} characters (got {len(prompt)})")
    gamma = _page_int(gamma, "gamma", 1, _MAX_PAGE_GAMMA)
    seed = _page_int(seed, "seed", 0, 2**31 - 1)
    pair = _ngram(float(temperature), top_k, float(top_p))
    context = pair.encode(prompt)  # [n] token ids; unknown words become <unk>
    rng = random.Random(seed)
    tokens, q_rows = steps.draft(pair.draft.probs, context, gamma, rng)  # [gamma], [gamma][V]
    return pair, context, tokens, q_rows, rng


# --8<-- [end:draft_ngram]

_NGRAM_EXAMPLE = {"prompt": "It is a truth universally acknowledged", "gamma": 4, "temperature": 1.0, "seed": 7}


@handler("steps.draft_ngram", example=_NGRAM_EXAMPLE)
def _draft_page(
    prompt: str = "",
    gamma: int = 4,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
    seed: int = 0,
    alternatives: int = 5,
) -> dict[str, Any]:
    """Step 1 on real text: gamma drafted words, each with q(x), the draft's top candidates, and the target's p(x).

    p is computed here only as a preview of Verify; drafting itself never looks at the target.
    """
    n_alt = _page_int(alternatives, "alternatives", 1, 10)
    pair, context, tokens, q_rows, _ = _draft_ngram(prompt, gamma, temperature, top_k, top_p, seed)
    p_rows = [pair.target.probs(context + tokens[:i]) for i in range(len(tokens))]  # [gamma][V]
    positions: list[dict[str, Any]] = []
    for i, (token, q_row, p_row) in enumerate(zip(tokens, q_rows, p_rows, strict=True)):
        ids = _top(q_row, n_alt)
        if token not in ids:
            ids.append(token)  # a draw from q's tail is still shown beside the favourites
        positions.append(
            {
                "index": i,
                "token": token,
                "word": pair.vocab[token],
                "q": q_row[token],
                "p": p_row[token],
                "accept": min(1.0, p_row[token] / q_row[token]),
                "beta": round(acceptance_rate(p_row, q_row), 12),
                "alternatives": [{"word": pair.vocab[t], "q": q_row[t], "p": p_row[t]} for t in ids],
            }
        )
    keep_all = math.prod(pos["accept"] for pos in positions)
    alpha = math.fsum(pos["beta"] for pos in positions) / len(positions)
    return {
        "figure": figures.draft_positions_figure(positions),
        "metrics": {
            "draft-steps": len(tokens),
            "accept-rate": round(alpha, 12),
            "all-accepted-prob": round(keep_all, 12),
            "alpha-to-gamma": round(alpha ** len(tokens), 12),
        },
        "prompt_words": _prompt_words(pair, prompt),
        "context_text": pair.decode(context[-24:]),
        "draft_text": pair.decode(tokens),
        "positions": positions,
    }


@handler("steps.verify_ngram", example=_NGRAM_EXAMPLE)
def _verify_page(
    prompt: str = "",
    gamma: int = 4,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
    seed: int = 0,
) -> dict[str, Any]:
    """One whole round on real text: draft (same seed, same words as the Draft page), then ONE target pass
    scoring all gamma + 1 prefixes, then ``steps.speculative_round`` (verify, then correct or bonus)."""
    pair, context, tokens, q_rows, rng = _draft_ngram(prompt, gamma, temperature, top_k, top_p, seed)
    gamma = len(tokens)
    # The one target pass: row j scores draft j; row gamma is the bonus distribution.
    p_rows = [pair.target.probs(context + tokens[:j]) for j in range(gamma + 1)]  # [gamma + 1][V]
    round_ = steps.speculative_round(p_rows, q_rows, tokens, rng)
    positions: list[dict[str, Any]] = []
    # Per-token values go out unrounded: a tiny q would lose its digits, and the test compares u with p/q exactly.
    for pos in round_.positions:
        positions.append(
            {
                "index": pos.index,
                "label": f"{pos.index + 1}. {pair.vocab[pos.token]}",
                "word": pair.vocab[pos.token],
                "p": pos.p,
                "q": pos.q,
                "ratio": pos.ratio,
                "threshold": min(1.0, pos.ratio),
                "u": None if pos.u is None else pos.u,
                "outcome": pos.outcome,
                "beta": round(acceptance_rate(p_rows[pos.index], q_rows[pos.index]), 12),
            }
        )
    if round_.ended_with == "correction":
        at = round_.accepted
        source = residual(p_rows[at], q_rows[at])
    else:
        source = p_rows[gamma]
    rows = [
        {
            "scores": f"{j + 1}. {pair.vocab[tokens[j]]}" if j < gamma else "bonus",
            "top": [{"word": pair.vocab[t], "p": p_rows[j][t]} for t in _top(p_rows[j], 3)],
        }
        for j in range(gamma + 1)
    ]
    keep_all = math.prod(pos["threshold"] for pos in positions)
    return {
        "figure": figures.verify_figure(positions),
        "metrics": {
            "accepted": round_.accepted,
            "tokens-emitted": len(round_.tokens),
            "all-accepted-prob": round(keep_all, 12),
            "accept-rate": round(math.fsum(pos["beta"] for pos in positions) / gamma, 12),
        },
        "prompt_words": _prompt_words(pair, prompt),
        "context_text": pair.decode(context[-24:]),
        "positions": positions,
        "rows": rows,
        "final": {
            "word": pair.vocab[round_.final_token],
            "kind": round_.ended_with,
            "prob": source[round_.final_token],
            "top": [{"word": pair.vocab[t], "p": source[t]} for t in _top(source, 3)],
        },
        "emitted_text": pair.decode(round_.tokens),
    }


@handler("theory.draft_risk", example={"alpha": 0.8, "cost": 0.05})
def _draft_risk(alpha: float = 0.8, cost: float = 0.05) -> dict[str, Any]:
    """Why longer drafts are riskier: P(all gamma accepted) = alpha^gamma, against the speedup of Thm 3.8."""
    gammas = list(range(1, _MAX_PAGE_GAMMA + 1))
    survive = [round(alpha**g, 12) for g in gammas]
    speed = [round(theory.speedup(alpha, g, cost), 12) for g in gammas]
    best = theory.optimal_gamma(alpha, cost, max_gamma=_MAX_PAGE_GAMMA)
    return {
        "figure": figures.draft_risk_figure(gammas, survive, speed, best),
        "metrics": {
            "optimal-gamma": best,
            "speedup": round(theory.speedup(alpha, best, cost), 12),
            "all-accepted-prob": survive[best - 1] if best else 1.0,
        },
    }


@handler("theory.acceptance_rates", example={"alpha": 0.8, "gamma": 4})
def _acceptance_rates(alpha: float = 0.8, gamma: int = 4) -> dict[str, Any]:
    """Per-token alpha against what serving logs report (accepted / drafted) and alpha^gamma, across alpha."""
    gamma = _page_int(gamma, "gamma", 1, _MAX_PAGE_GAMMA)
    alphas = [i / 100 for i in range(101)]
    per_draft = [round(theory.draft_acceptance_rate(a, gamma), 12) for a in alphas]
    all_accepted = [round(a**gamma, 12) for a in alphas]
    a = round(theory.expected_tokens(alpha, gamma), 12)  # validates alpha too
    return {
        "figure": figures.acceptance_rates_figure(alphas, per_draft, all_accepted, alpha, gamma),
        "metrics": {
            "alpha": alpha,
            "draft-accept-rate": round(theory.draft_acceptance_rate(alpha, gamma), 12),
            "all-accepted-prob": round(alpha**gamma, 12),
            "tokens-per-pass": a,
        },
    }


# --- Correct, Bonus, Why it is exact ----------------------------------------------------------------------------
# Handlers of the pages correct.md, bonus.md and exactness.md. The algorithm runs in steps/theory/models; these
# only shape inputs and results. The one exception is clearly fenced below: deliberately *broken* variants of a
# round, written here (never in steps.py) so that the exactness page can show how each mistake fails the test.

#: Named (labels, p, q) starting points of the Correct page's widget. The paper's worked example first.
_CORRECT_PRESETS: dict[str, tuple[list[str], list[float], list[float]]] = {
    "paper": (["cat", "dog", "fox"], [0.4, 0.35, 0.25], [0.2, 0.2, 0.6]),
    "disjoint": (["cat", "dog", "fox", "owl", "bee"], [0.5, 0.3, 0.2, 0.0, 0.0], [0.0, 0.0, 0.0, 0.6, 0.4]),
    "equal": (["cat", "dog", "fox", "owl", "bee"], [0.35, 0.25, 0.2, 0.12, 0.08], [0.35, 0.25, 0.2, 0.12, 0.08]),
    "one-hot": (["cat", "dog", "fox", "owl", "bee"], [0.35, 0.25, 0.2, 0.12, 0.08], [1.0, 0.0, 0.0, 0.0, 0.0]),
}

#: Largest Monte Carlo a single call may run: the browser stays responsive (about 0.5 s in Pyodide).
_MAX_SAMPLES = 50_000


def _check_int(value: object, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high} (got {value})")
    return value


def _check_number(value: object, name: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise ValueError(f"{name} must be a number between {low:g} and {high:g}, got {value!r}")
    return float(value)


def _same_vocab(p: list[float], q: list[float], labels: list[str] | None) -> list[str]:
    if len(p) != len(q):
        raise ValueError(f"p and q must have the same length (got {len(p)} and {len(q)})")
    names = labels if labels is not None else [f"x{i + 1}" for i in range(len(p))]
    if len(names) != len(p):
        raise ValueError(f"labels must name every token (got {len(names)} for {len(p)})")
    return names


def _shaped_draft(p: list[float], q: list[float], temperature: float, shift: int, blend: float) -> list[float]:
    """The Correct widget's draft: q sharpened or flattened, rotated by ``shift`` tokens, blended toward p."""
    sharp = apply_temperature(q, temperature)
    k = shift % len(sharp)
    rotated = sharp[-k:] + sharp[:-k] if k else sharp
    mixed = [(1.0 - blend) * qi + blend * pi for qi, pi in zip(rotated, p, strict=True)]
    return normalize(mixed, "q")


@handler("correct.split", example={"preset": "paper", "temperature": 1.0, "shift": 0, "blend": 0.0})
def _correct_split(
    preset: str = "paper",
    temperature: float = 1.0,  # draft sharpness: < 1 sharpens q, > 1 flattens it
    shift: int = 0,  # rotate q by this many tokens (its favourite moves)
    blend: float = 0.0,  # 0 keeps the draft; 1 moves it onto the target
) -> dict[str, Any]:
    """One position: p, q, min(p, q), the residual, and the identity min(p, q) + (1 - beta) residual = p per token."""
    if preset not in _CORRECT_PRESETS:
        raise ValueError(f"preset must be one of {', '.join(_CORRECT_PRESETS)} (got {preset!r})")
    labels, p, base_q = _CORRECT_PRESETS[preset]
    temperature = _check_number(temperature, "temperature", 0.25, 4.0)
    shift = _check_int(shift, "shift", -8, 8)
    blend = _check_number(blend, "blend", 0.0, 1.0)
    q = _shaped_draft(p, base_q, temperature, shift, blend)
    beta = acceptance_rate(p, q)
    overlap = [min(pi, qi) for pi, qi in zip(p, q, strict=True)]
    fallback = residual(p, q)
    rejected_part = [(1.0 - beta) * r for r in fallback]
    # The picture's claim, checked in floats: the two parts of each stack add up to p(x).
    gap = max(abs(a + b - pi) for a, b, pi in zip(overlap, rejected_part, p, strict=True))
    return {
        "figures": {
            "dists": figures.pair_figure(labels, p, _rounded(q), _rounded(overlap), _rounded(fallback)),
            "proof": figures.correct_split_figure(labels, p, _rounded(overlap), _rounded(rejected_part)),
        },
        "metrics": {
            "accept-rate": round(beta, 12),
            "reject-rate": round(1.0 - beta, 12),
            "draft-tv": round(total_variation(p, q), 12),
            "identity-gap": round(gap, 15),
        },
        "labels": labels,
        "p": p,
        "q": _rounded(q),
        "residual": _rounded(fallback),
    }


# --8<-- [start:correct_sample]
@handler("correct.sample", example={"p": [0.4, 0.35, 0.25], "q": [0.2, 0.2, 0.6], "n": 2000, "seed": 1})
def _correct_sample(
    p: list[float],  # [vocab] target at this position
    q: list[float],  # [vocab] draft at this position
    n: int = 10_000,
    seed: int = 0,
    labels: list[str] | None = None,
) -> dict[str, Any]:
    """Run ``n`` real one-token rounds (draft, then ``speculative_round``) and compare the emitted token with p."""
    p_row, q_row = validate_probs(p, "p"), validate_probs(q, "q")
    names = _same_vocab(p_row, q_row, labels)
    n = _check_int(n, "n", 1, _MAX_SAMPLES)
    rng = random.Random(_check_int(seed, "seed", 0, 2**31 - 1))
    counts = [0] * len(p_row)
    corrections = 0
    for _ in range(n):
        tokens, q_rows = steps.draft(lambda _context: q_row, [], 1, rng)  # Step 1: one draft token from q
        # Steps 2-4. Row 2 of target_probs is the bonus distribution; only the first emitted token is counted.
        round_ = steps.speculative_round([p_row, p_row], q_rows, tokens, rng)
        counts[round_.tokens[0]] += 1
        corrections += round_.ended_with == "correction"
    fit = stats.goodness_of_fit(counts, p_row)
    return {
        "figure": figures.empirical_figure(names, p_row, counts, q=q_row),
        "metrics": {
            **fit,
            "samples": n,
            "correction-share": corrections / n,
            "correction-share-theory": round(1.0 - acceptance_rate(p_row, q_row), 12),
        },
        "counts": counts,
    }


# --8<-- [end:correct_sample]


# --8<-- [start:bonus_simulate]
@handler("bonus.simulate", example={"alpha": 0.8, "gamma": 4, "rounds": 500, "seed": 0})
def _bonus_simulate(alpha: float = 0.8, gamma: int = 4, rounds: int = 3000, seed: int = 0) -> dict[str, Any]:
    """Theory against ``rounds`` real rounds of the agreement pair: accepted counts, bonus share, tokens per pass."""
    a = check_alpha(alpha)
    g = _check_int(gamma, "gamma", 1, 8)
    n = _check_int(rounds, "rounds", 1, 20_000)
    rng = random.Random(_check_int(seed, "seed", 0, 2**31 - 1))
    pair = models.agreement_pair(a)
    counts = [0] * (g + 1)  # rounds by accepted count 0..gamma
    for _ in range(n):
        tokens, q_rows = steps.draft(pair.draft.probs, [], g, rng)
        # One target pass: the rows after each accepted prefix, gamma + 1 of them; the last one is the bonus row.
        p_rows = [pair.target.probs(tokens[:j]) for j in range(g + 1)]
        counts[steps.speculative_round(p_rows, q_rows, tokens, rng).accepted] += 1
    theory_counts = theory.accepted_count_distribution(a, g)
    mean_tokens = sum((k + 1) * c for k, c in enumerate(counts)) / n
    # Standard error of the simulated mean, from the theoretical variance of (accepted + 1).
    mean_theory = theory.expected_tokens(a, g)
    var = sum(pk * (k + 1 - mean_theory) ** 2 for k, pk in enumerate(theory_counts))
    accepted = sum(k * c for k, c in enumerate(counts))
    verified = accepted + (n - counts[g])  # every round that did not end in a bonus verified one rejected draft
    return {
        "figures": {
            "counts": figures.accepted_counts_figure(g, _rounded(theory_counts), [c / n for c in counts]),
            "curve": figures.tokens_per_pass_figure(
                a, g, _rounded([theory.expected_tokens(a, k) for k in range(1, 9)]), simulated=mean_tokens
            ),
        },
        "metrics": {
            "tokens-per-pass": mean_tokens,
            "tokens-per-pass-theory": round(mean_theory, 12),
            "tokens-per-pass-se": round(math.sqrt(var / n), 12),
            "bonus-share": counts[g] / n,
            "bonus-share-theory": round(theory_counts[g], 12),
            "accept-rate": accepted / verified if verified else 1.0,
            "accept-rate-theory": a,
            "rounds": n,
        },
        "counts": counts,
    }


# --8<-- [end:bonus_simulate]


def _fraction_text(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def _weights(values: list[int], name: str) -> list[Fraction]:
    """Small integer weights -> an exact distribution (the widget's number inputs)."""
    if not isinstance(values, list) or not 2 <= len(values) <= 4:
        raise ValueError(f"{name} must be a list of 2 to 4 integer weights")
    ints = [_check_int(v, f"{name}[{i}]", 0, 99) for i, v in enumerate(values)]
    total = sum(ints)
    if total == 0:
        raise ValueError(f"{name} must have at least one positive weight")
    return [Fraction(v, total) for v in ints]


def _rolled(row: list[Fraction], k: int) -> list[Fraction]:
    k %= len(row)
    return row[-k:] + row[:-k] if k else list(row)


@handler("exactness.check", example={"p": [8, 7, 5], "q": [1, 1, 3], "gamma": 2})
def _exactness_check(p: list[int], q: list[int], gamma: int = 2, labels: list[str] | None = None) -> dict[str, Any]:
    """Exact arithmetic: the emitted token's distribution, and a two-token prefix across rounds, against the target.

    ``p`` and ``q`` are integer weights (normalised exactly). The second table uses a context-dependent pair built
    from them: after token t the target is p rotated by t + 1 places and the draft q rotated by t places, so every
    context has its own acceptance rate and the second token depends on the first.
    """
    p_exact, q_exact = _weights(p, "p"), _weights(q, "q")
    if len(p_exact) != len(q_exact):
        raise ValueError(f"p and q must have the same length (got {len(p_exact)} and {len(q_exact)})")
    g = _check_int(gamma, "gamma", 1, 4)
    names = labels if labels is not None else ["A", "B", "C", "D"][: len(p_exact)]
    if len(names) != len(p_exact):
        raise ValueError(f"labels must name every token (got {len(names)} for {len(p_exact)})")

    # One position: the two routes to token x, and the algorithm's total computed branch by branch in theory.py.
    emitted = theory.exact_output_distribution(p_exact, q_exact)
    beta = sum((min(a, b) for a, b in zip(p_exact, q_exact, strict=True)), Fraction(0))
    excess_total = sum((max(Fraction(0), a - b) for a, b in zip(p_exact, q_exact, strict=True)), Fraction(0))
    position_rows = []
    for x, name in enumerate(names):
        via_draft = min(p_exact[x], q_exact[x])
        via_correction = (1 - beta) * max(Fraction(0), p_exact[x] - q_exact[x]) / excess_total if excess_total else 0
        position_rows.append(
            {
                "token": name,
                "p": _fraction_text(p_exact[x]),
                "q": _fraction_text(q_exact[x]),
                "accepted": _fraction_text(via_draft),
                "correction": _fraction_text(Fraction(via_correction)),
                "emitted": _fraction_text(emitted[x]),
                "equal": emitted[x] == p_exact[x],
            }
        )

    def target(context: tuple[int, ...]) -> list[Fraction]:
        return _rolled(p_exact, context[-1] + 1) if context else p_exact

    def draft(context: tuple[int, ...]) -> list[Fraction]:
        return _rolled(q_exact, context[-1]) if context else q_exact

    speculative = theory.exact_prefix_distribution(target, draft, g, 2)
    reference = theory.target_prefix_distribution(target, 2)
    prefix_rows = []
    for prefix in sorted(set(speculative) | set(reference)):
        got, want = speculative.get(prefix, Fraction(0)), reference.get(prefix, Fraction(0))
        prefix_rows.append(
            {
                "prefix": " ".join(names[t] for t in prefix),
                "speculative": _fraction_text(got),
                "target": _fraction_text(want),
                "equal": got == want,
            }
        )
    checks = [row["equal"] for row in position_rows] + [row["equal"] for row in prefix_rows]
    return {
        "position": position_rows,
        "prefix": prefix_rows,
        "beta": _fraction_text(beta),
        "metrics": {
            "exact": 1 if all(checks) else 0,
            "cells-checked": len(checks),
            "accept-rate": float(beta),
        },
    }


# Teaching only: broken rounds ----------------------------------------------------------------------------------
# Each variant changes ONE thing about the real round, the way implementations have gone wrong. They exist so the
# page can show the statistics catching them; nothing else in the package may call them.

#: variant -> what it gets wrong, as the page shows it.
BROKEN_VARIANTS: dict[str, str] = {
    "exact": "The real steps: accept with min(1, p/q), correct from normalize(max(0, p - q)).",
    "unclipped": "Accept when u < p/q without the min(1, .). Harmless: a ratio above 1 accepts either way.",
    "correct-from-p": "After a rejection, draw the correction from p instead of the residual.",
    "q-over-p": "Accept with min(1, q/p), the ratio upside down.",
    "unnormalized": "Draw the correction from max(0, p - q) without normalising it (inverse CDF on weights).",
    "draft-temperature": "Draft at temperature 0.5, but verify against the draft's temperature-1 probabilities.",
}


# --8<-- [start:broken_variants]
def _teaching_broken_parts(variant: str, p: list[Fraction], q: list[Fraction]) -> tuple[list[Fraction], Any, Any]:
    """(distribution drafts are drawn from, acceptance probability of token x, correction distribution)."""
    zero = Fraction(0)
    draw = q
    if variant == "draft-temperature":
        squares = [x * x for x in q]  # temperature 0.5 is q**2 renormalised
        draw = [x / sum(squares, zero) for x in squares]

    def accept(x: int) -> Fraction:
        # The probability that the variant's test passes for token x (a uniform below it), before clipping at 1.
        if variant == "unclipped":
            return p[x] / q[x] if q[x] > 0 else zero
        if variant == "q-over-p":
            return min(Fraction(1), q[x] / p[x]) if p[x] > 0 else Fraction(1)
        return min(Fraction(1), p[x] / q[x]) if q[x] > 0 else zero

    excess = [max(zero, a - b) for a, b in zip(p, q, strict=True)]
    if variant == "correct-from-p":
        fix = list(p)
    elif variant == "unnormalized":
        # Inverse CDF on weights summing to 1 - beta < 1: a uniform beyond the total falls to the last positive token.
        fix = list(excess)
        last = max((i for i, e in enumerate(excess) if e > 0), default=len(p) - 1)
        fix[last] += 1 - sum(excess, zero)
    else:
        total = sum(excess, zero)
        fix = [e / total for e in excess] if total else list(p)
    return draw, accept, fix


def _teaching_broken_exact(variant: str, p: list[Fraction], q: list[Fraction]) -> list[Fraction]:
    """The exact distribution of the token a (possibly broken) one-token round emits."""
    draw, accept, fix = _teaching_broken_parts(variant, p, q)
    out = [draw[x] * min(Fraction(1), accept(x)) for x in range(len(p))]
    rejected = 1 - sum(out, Fraction(0))
    return [o + rejected * f for o, f in zip(out, fix, strict=True)]


def _teaching_broken_token(parts: tuple[list[float], list[float], list[float]], rng: random.Random) -> int:
    """One broken round's emitted token, from the variant's float parts and three uniforms."""
    draw, accept, fix = parts
    x = sample(draw, rng.random())
    if rng.random() < accept[x]:
        return x
    return sample(fix, rng.random())


# --8<-- [end:broken_variants]


@handler("exactness.broken", example={"variant": "correct-from-p", "p": [0.4, 0.35, 0.25], "q": [0.2, 0.2, 0.6]})
def _exactness_broken(
    variant: str,
    p: list[float],
    q: list[float],
    n: int = 0,  # rounds to simulate; 0 shows the exact distributions only
    seed: int = 0,
    labels: list[str] | None = None,
) -> dict[str, Any]:
    """A correct or deliberately broken round: its exact output distribution and, with n > 0, a seeded sample."""
    if variant not in BROKEN_VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(BROKEN_VARIANTS)} (got {variant!r})")
    p_row, q_row = validate_probs(p, "p"), validate_probs(q, "q")
    names = _same_vocab(p_row, q_row, labels)
    n = _check_int(n, "n", 0, _MAX_SAMPLES)
    # Fraction(float) is exact, but float rows sum to 1 only within 1e-9: rescale so the comparison is exact.
    p_exact = [Fraction(x) for x in p_row]
    q_exact = [Fraction(x) for x in q_row]
    p_exact = [x / sum(p_exact, Fraction(0)) for x in p_exact]
    q_exact = [x / sum(q_exact, Fraction(0)) for x in q_exact]
    if variant == "exact":
        exact = theory.exact_output_distribution(p_exact, q_exact)
    else:
        exact = _teaching_broken_exact(variant, p_exact, q_exact)
    off = sum((abs(e - x) for e, x in zip(exact, p_exact, strict=True)), Fraction(0)) / 2
    metrics: dict[str, float | None] = {"exact-tv": float(off), "exact-equal": 1 if off == 0 else 0}
    counts: list[int] = []
    if n:
        rng = random.Random(_check_int(seed, "seed", 0, 2**31 - 1))
        counts = [0] * len(p_row)
        if variant == "exact":
            for _ in range(n):
                tokens, q_rows = steps.draft(lambda _context: q_row, [], 1, rng)
                counts[steps.speculative_round([p_row, p_row], q_rows, tokens, rng).tokens[0]] += 1
        else:
            draw, accept, fix = _teaching_broken_parts(variant, p_exact, q_exact)
            parts = ([float(x) for x in draw], [float(accept(x)) for x in range(len(p_row))], [float(x) for x in fix])
            for _ in range(n):
                counts[_teaching_broken_token(parts, rng)] += 1
        metrics.update(stats.goodness_of_fit(counts, p_row))
        metrics["samples"] = n
    return {
        "figure": figures.broken_figure(names, p_row, [float(x) for x in exact], counts or None),
        "metrics": metrics,
        "variant": variant,
        "description": BROKEN_VARIANTS[variant],
        "variants": BROKEN_VARIANTS,
        "counts": counts,
    }
