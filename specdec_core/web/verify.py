"""The Verify page (docs/verify.md): one position's test, a real round on text, and the rates a server reports.

``verify.pair``: p, q, min(p, q) and the residual as the draft is blended toward p. ``verify.ngram``: one round
of the n-gram pair, drafting what the Draft page drafts for the same arguments. ``verify.rates``: the per-token
acceptance rate alpha against the draft acceptance rate (accepted / drafted) and alpha^gamma. Non-goals: the rules.
"""

from __future__ import annotations

import math
from typing import Any

from .. import steps, theory
from ..distributions import acceptance_rate, residual, total_variation
from . import handler
from .args import check_int, check_number, check_pair
from .draft import MAX_PAGE_GAMMA, NGRAM_EXAMPLE, draft_ngram, prompt_view, top_tokens
from .plot import (
    ALPHA,
    COLORS,
    GAMMA,
    PATTERNS,
    PIECE_AXIS,
    SPACE_MARK,
    Figure,
    PlotTrace,
    bar,
    figure,
    layout,
    line,
    pair_figure,
    rounded,
)


@handler("verify.pair", example={"p": [0.4, 0.35, 0.25], "q": [0.2, 0.2, 0.6], "blend": 0.5})
def pair(
    p: list[float],  # [vocab] target distribution
    q: list[float],  # [vocab] draft distribution
    blend: float = 0.0,  # 0 keeps q; 1 moves the draft all the way onto the target
    labels: list[str] | None = None,  # [vocab] token names for the x axis
) -> dict[str, Any]:
    """One position of verification: p, q, the accepted mass min(p, q), beta = its sum, and the residual.

    The draft is (1 - blend) * q + blend * p, so one slider walks it from q to the target. Our worked example
    (p = [.4, .35, .25], q = [.2, .2, .6], blend 0) gives beta = .65 and residual [4/7, 3/7, 0].
    """
    p_row, q_row, names = check_pair(p, q, labels)
    w = check_number(blend, "blend", 0, 1)
    draft = [(1.0 - w) * qi + w * pi for qi, pi in zip(q_row, p_row, strict=True)]
    beta = acceptance_rate(p_row, draft)
    overlap = [min(pi, di) for pi, di in zip(p_row, draft, strict=True)]
    fallback = residual(p_row, draft)
    return {
        "figure": pair_figure(names, p_row, rounded(draft), rounded(overlap), rounded(fallback)),
        "metrics": {
            "beta": round(beta, 12),
            "reject-rate": round(1.0 - beta, 12),
            "tv-distance": round(total_variation(p_row, draft), 12),
        },
        "q": rounded(draft),
        "residual": rounded(fallback),
    }


@handler("verify.ngram", example=NGRAM_EXAMPLE)
def ngram(
    prompt: str = "",
    gamma: int = 4,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
    seed: int = 0,
) -> dict[str, Any]:
    """One whole round on real text: draft (same seed, same words as the Draft page), then ONE target pass
    scoring all gamma + 1 prefixes, then ``steps.speculative_round`` (verify, then correct or bonus).

    ``beta`` is the mean over the drafted positions of beta_i = sum_x min(p_i(x), q_i(x)).
    """
    pair_, context, tokens, q_rows, rng = draft_ngram(prompt, gamma, temperature, top_k, top_p, seed)
    g, words = len(tokens), pair_.vocab
    # The one target pass: row j scores draft j; row gamma is the bonus distribution.
    p_rows = [pair_.target.probs(context + tokens[:j]) for j in range(g + 1)]  # [gamma + 1][V]
    round_ = steps.speculative_round(p_rows, q_rows, tokens, rng)
    # Per-token values go out unrounded: a tiny q would lose its digits, and the tests compare u with p/q exactly.
    positions = [
        pos.to_dict()
        | {"word": words[pos.token], "label": f"{pos.index + 1}. {words[pos.token]}", "threshold": min(1.0, pos.ratio)}
        | {"beta": round(acceptance_rate(p_rows[pos.index], q_rows[pos.index]), 12)}
        for pos in round_.positions
    ]
    at = round_.accepted
    source = residual(p_rows[at], q_rows[at]) if round_.ended_with == "correction" else p_rows[g]

    def top(row: list[float]) -> list[dict[str, Any]]:
        # Greedy or top-k rows hold fewer than three tokens: the zeros after them are not "top words".
        return [{"word": words[t], "p": row[t]} for t in top_tokens(row, 3) if row[t] > 0]

    return {
        "figure": _round_figure(positions),
        "metrics": {
            "accepted": at,
            "tokens-emitted": len(round_.tokens),
            "all-accepted-prob": round(math.prod(pos["threshold"] for pos in positions), 12),
            "beta": round(math.fsum(pos["beta"] for pos in positions) / g, 12),
        },
        **prompt_view(pair_, context),
        "positions": positions,
        "rows": [{"scores": positions[j]["label"] if j < g else "bonus", "top": top(p_rows[j])} for j in range(g + 1)],
        "final": {"word": words[round_.final_token], "kind": round_.ended_with, "prob": source[round_.final_token]}
        | {"top": top(source)},
        "emitted_text": pair_.decode(round_.tokens, show_bytes=True),
        "summary": _summary(positions, words[round_.final_token], len(round_.tokens)),
    }


def _summary(positions: list[dict[str, Any]], final: str, emitted: int) -> str:
    """One sentence on what the round did: accepted, the rejection (u against its threshold) and what it cost,
    then where the last token came from (the residual, or the target's last row as a bonus)."""
    accepted = sum(pos["outcome"] == "accepted" for pos in positions)
    discarded = sum(pos["outcome"] == "discarded" for pos in positions)
    rejected = next((pos for pos in positions if pos["outcome"] == "rejected"), None)
    parts = [f"Drafted {len(positions)}, accepted {accepted}."]
    if rejected is None:
        bonus = f"the bonus “{final}” came from the target's last row, computed in the same pass."
        passed = "It passed" if len(positions) == 1 else f"All {len(positions)} passed"
        parts.append(f"{passed}, so {bonus}")
    else:
        were = f"the {discarded} draft after it was" if discarded == 1 else f"the {discarded} drafts after it were"
        parts.append(
            f"Rejected “{rejected['word']}” at position {rejected['index'] + 1} "
            f"(u = {rejected['u']:.3f} ≥ min(1, p/q) = {rejected['threshold']:.3f})"
            + (f", so {were} discarded unchecked." if discarded else ".")
        )
        parts.append(f"The correction “{final}” was drawn from norm(max(0, p \N{MINUS SIGN} q)) at that position.")
    parts.append(f"{emitted} token{'' if emitted == 1 else 's'} for one target pass.")
    return " ".join(parts)


@handler("verify.rates", example={"alpha": 0.8, "gamma": 4})
def rates(alpha: float = 0.8, gamma: int = 4) -> dict[str, Any]:
    """The per-token acceptance rate alpha against the draft acceptance rate (accepted / drafted) and alpha^gamma.

    The draft acceptance rate is below alpha because drafts after a rejection are discarded, never checked, yet
    count as drafted: it is (1 / gamma) alpha (1 - alpha^gamma) / (1 - alpha) (``theory.draft_acceptance_rate``).
    """
    a, g = check_number(alpha, "alpha", 0, 1), check_int(gamma, "gamma", 1, MAX_PAGE_GAMMA)
    return {
        "figure": _rates_figure(a, g),
        "metrics": {
            "alpha": a,
            "accept-rate": round(theory.draft_acceptance_rate(a, g), 12),
            "all-accepted-prob": round(a**g, 12),
            "tokens-per-pass": round(theory.expected_tokens(a, g), 12),
        },
    }


# Figures --------------------------------------------------------------------------------------------------------


def _round_figure(positions: list[dict[str, Any]]) -> Figure:
    """Each draft position's acceptance threshold min(1, p/q) as a bar and its uniform u as a marker:
    u below the top of the bar accepts, above it rejects; positions after the first rejection are greyed."""
    hover = "%{x}<br>p(x) = %{customdata[0]:.3f}, q(x) = %{customdata[1]:.3f}<br>min(1, p/q) = %{y:.3f}<extra></extra>"
    bars: list[PlotTrace] = []
    marks: list[PlotTrace] = []
    for outcome, name, symbol in (
        ("accepted", "accepted: u < min(1, p/q)", "circle"),
        ("rejected", "rejected: u \N{GREATER-THAN OR EQUAL TO} min(1, p/q)", "x"),
        ("discarded", "discarded: never checked", ""),  # no u: the verifier never looked at it
    ):
        picked = [pos for pos in positions if pos["outcome"] == outcome]
        if not picked:
            continue
        labels = [pos["label"] for pos in picked]
        trace = bar(labels, [pos["threshold"] for pos in picked], name=name, hover=hover)
        trace["marker"] = {"color": COLORS[outcome], "opacity": 0.45}
        trace["customdata"] = [[pos["p"], pos["q"]] for pos in picked]
        bars.append(trace)
        if not symbol:
            trace["marker"]["pattern"] = {"shape": PATTERNS["discarded"]}
            continue
        style = {"symbol": symbol, "size": 14, "line": {"width": 2, "color": COLORS[outcome]}}
        u, hover_u = [pos["u"] for pos in picked], "%{x}<br>u = %{y:.3f}<extra></extra>"
        mark = line(labels, u, name=f"u ({outcome})", role=outcome, mode="markers", marker=style, hover=hover_u)
        marks.append(mark | {"cliponaxis": False})  # a u near 0 or 1 sits on the axis's end: drawn whole
    order = {"type": "category", "categoryorder": "array", "categoryarray": [pos["label"] for pos in positions]}
    pieces = any(SPACE_MARK in pos["label"] for pos in positions)  # the n-gram pair's tokens, not the toy's words
    title = f"draft position and {PIECE_AXIS.replace(' (', '<br>(')}" if pieces else "draft position and word"
    lay = layout(x_title=title, y_title="probability", y_range=[0, 1.05], xaxis=order)
    return figure(bars + marks, lay | {"barmode": "overlay", "height": 340})


def _rates_figure(alpha: float, gamma: int) -> Figure:
    """Three ways to read one draft: per-token alpha, the draft acceptance rate, and the chance all gamma survive."""
    alphas = [i / 100 for i in range(101)]
    here = min(range(len(alphas)), key=lambda i: abs(alphas[i] - alpha))
    per_draft = [round(theory.draft_acceptance_rate(x, gamma), 12) for x in alphas]
    whole = "the one draft" if gamma == 1 else f"all {gamma}"
    curves = (
        (alphas, "target", f"per-token acceptance rate {ALPHA}", "dash"),
        (per_draft, "draft", f"draft acceptance rate (accepted / drafted) at {GAMMA} = {gamma}", None),
        ([round(x**gamma, 12) for x in alphas], "accepted", f"{whole} accepted: {ALPHA}<sup>{GAMMA}</sup>", "dot"),
    )
    data = [line(alphas, values, name=name, role=role, dash=dash) for values, role, name, dash in curves]
    hover = f"%{{y:.3f}}<extra>{ALPHA} = %{{x:.2f}}</extra>"
    for values, role, name, _ in curves:
        dot = line([alpha], [values[here]], name=name, role=role, mode="markers", marker={"size": 10}, hover=hover)
        data.append(dot | {"showlegend": False, "cliponaxis": False})  # at alpha 0 or 1, drawn whole
    axes = layout(x_title=f"per-token acceptance rate {ALPHA}", y_title="rate", y_range=[0, 1.02], height=340)
    return figure(data, axes)
