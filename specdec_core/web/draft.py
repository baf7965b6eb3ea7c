"""The Draft page (docs/draft.md): Step 1 on real text, and why longer drafts are riskier.

``draft.ngram``: the n-gram pair's bigram draft proposes gamma words after a prompt, with q and (a preview of
Verify) the target's p; ``draft_ngram`` is also the first half of Verify's round, so both pages draft the same
words. ``draft.risk``: alpha^gamma against the speedup of Leviathan et al. (2023, Theorem 3.8). Non-goals: the models.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from .. import models, steps, theory
from ..distributions import acceptance_rate
from . import handler
from .args import check_int, check_number, check_seed, check_text
from .plot import ALPHA, COLORS, GAMMA, TIMES, Figure, PlotTrace, bar, figure, layout, line

#: Longest prompt the pages accept, in characters (a text box, not a document).
MAX_PROMPT = 400
#: Speculation lengths the Draft and Verify pages offer; the steps themselves allow up to 64.
MAX_PAGE_GAMMA = 8
#: The n-gram examples: the Verify page's handler takes the same arguments.
NGRAM_EXAMPLE = {"prompt": "It is a truth universally acknowledged", "gamma": 4, "temperature": 1.0, "seed": 7}


@lru_cache(maxsize=8)
def ngram_pair(temperature: float, top_k: int, top_p: float) -> models.Pair:
    # One pair per sampling setting (Draft, Verify and Tuning share them), kept: the models' row caches then serve
    # the next Step on the same prompt, or the next chunk of a Tuning run.
    return models.ngram_pair(temperature=temperature, top_k=top_k, top_p=top_p)


def prompt_view(pair: models.Pair, context: Sequence[int]) -> dict[str, Any]:
    """The prompt as the models read it: its last 32 byte-level BPE pieces ("▁" marks a leading space), its length
    in tokens and its last 24 tokens as text. Every text encodes, so nothing is unknown; a rare word simply takes
    several pieces."""
    pieces = [pair.vocab[t] for t in context[-32:]]
    return {
        "prompt_pieces": pieces,
        "prompt_tokens": len(context),
        "context_text": pair.decode(context[-24:], show_bytes=True),
    }


def top_tokens(row: Sequence[float], n: int) -> list[int]:
    """Token ids of the ``n`` largest entries, most likely first (lowest id on ties, as ``heapq.nlargest`` keeps)."""
    return heapq.nlargest(n, range(len(row)), key=row.__getitem__)


# --8<-- [start:draft_ngram]
def draft_ngram(
    prompt: object, gamma: object, temperature: object, top_k: object, top_p: object, seed: object
) -> tuple[models.Pair, list[int], list[int], list[list[float]], random.Random]:
    """Encode the prompt and run Step 1 on the bigram draft; the rng carries on into Verify."""
    text = check_text(prompt, "prompt", MAX_PROMPT)
    g = check_int(gamma, "gamma", 1, MAX_PAGE_GAMMA)
    shaping = (check_number(temperature, "temperature", 0, 2), check_int(top_k, "top_k", 0, 1000))
    pair = ngram_pair(*shaping, check_number(top_p, "top_p", 0, 1))
    # A trailing space would end the prompt on a lone space piece, which the models never saw: spaces belong to the
    # word after them.
    context = pair.encode(text.rstrip(" \t"))  # [n] token ids
    rng = random.Random(check_seed(seed))
    tokens, q_rows = steps.draft(pair.draft.probs, context, g, rng)  # [gamma], [gamma][V]
    return pair, context, tokens, q_rows, rng


# --8<-- [end:draft_ngram]


@handler("draft.ngram", example=NGRAM_EXAMPLE)
def ngram(
    prompt: str = "",
    gamma: int = 4,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
    seed: int = 0,
    alternatives: int = 5,  # the draft's top candidates shown per position
) -> dict[str, Any]:
    """Step 1 on real text: gamma drafted words, each with q(x), the draft's top candidates and the target's p(x).

    p is computed only as a preview of Verify: drafting never looks at the target. ``beta`` is the mean over the
    drafted positions of beta_i = sum_x min(p_i(x), q_i(x)), the chance that a word drafted there is accepted.
    """
    n_alt = check_int(alternatives, "alternatives", 1, 10)
    pair, context, tokens, q_rows, _ = draft_ngram(prompt, gamma, temperature, top_k, top_p, seed)
    positions: list[dict[str, Any]] = []
    for i, (token, q_row) in enumerate(zip(tokens, q_rows, strict=True)):
        p_row = pair.target.probs(context + tokens[:i])  # [V]
        # The draft's favourites it can draw (q > 0): at temperature 0 or top-k 1 the rest of a top five were
        # words of q = 0 (byte tokens such as <0x00>), shown as if they were candidates.
        ids = [t for t in top_tokens(q_row, n_alt) if q_row[t] > 0.0]
        ids += [] if token in ids else [token]  # a draw from q's tail is shown beside the favourites
        positions.append(
            {"index": i, "token": token, "word": pair.vocab[token], "q": q_row[token], "p": p_row[token]}
            | {"accept": min(1.0, p_row[token] / q_row[token]), "beta": round(acceptance_rate(p_row, q_row), 12)}
            | {"alternatives": [{"word": pair.vocab[t], "q": q_row[t], "p": p_row[t]} for t in ids]}
        )
    beta = math.fsum(pos["beta"] for pos in positions) / len(positions)
    return {
        "figure": _positions_figure(positions),
        "metrics": {
            "draft-steps": len(tokens),
            "beta": round(beta, 12),
            "all-accepted-prob": round(math.prod(pos["accept"] for pos in positions), 12),
            "alpha-to-gamma": round(beta ** len(tokens), 12),
        },
        **prompt_view(pair, context),
        "draft_text": pair.decode(tokens, show_bytes=True),
        "positions": positions,
    }


@handler("draft.risk", example={"alpha": 0.8, "cost": 0.05})
def risk(alpha: float = 0.8, cost: float = 0.05) -> dict[str, Any]:
    """Why longer drafts are riskier: P(all gamma accepted) = alpha^gamma, against the speedup of Thm 3.8."""
    a, c = check_number(alpha, "alpha", 0, 1), check_number(cost, "cost", 0, 1)
    gammas = list(range(1, MAX_PAGE_GAMMA + 1))
    survive = [round(a**g, 12) for g in gammas]
    speed = [round(theory.speedup(a, g, c), 12) for g in gammas]
    best = theory.optimal_gamma(a, c, max_gamma=MAX_PAGE_GAMMA)
    return {
        "figure": _risk_figure(gammas, survive, speed, best),
        "metrics": {
            "optimal-gamma": best,
            "speedup": round(theory.speedup(a, best, c), 12),
            # Best gamma 0 drafts nothing: no draft to be accepted, so no probability to show.
            "all-accepted-prob": survive[best - 1] if best else None,
        },
    }


# Figures --------------------------------------------------------------------------------------------------------


def _prob_text(x: float) -> str:
    """Three decimals, or a short exponent for a tiny probability (a rare word's q can be 1e-5), written as the
    page's word chips write it: 9.4e-4, not 9.4e-04.

    >>> _prob_text(0.25), _prob_text(0.00094), _prob_text(0.0)
    ('0.250', '9.4e-4', '0.000')
    """
    return f"{x:.3f}" if x >= 0.001 or x == 0.0 else f"{x:.1e}".replace("e-0", "e-")


def _panel(i: int, pos: dict[str, Any], x_dom: list[float], y_dom: list[float]) -> tuple[list[PlotTrace], Figure]:
    """Draft position ``i``'s traces, and its axes and title as layout entries."""
    n = "" if i == 0 else str(i + 1)
    alts = pos["alternatives"][::-1]  # horizontal bars list categories bottom-up: the favourite goes on top
    words = [a["word"] for a in alts]
    drafted = [a["q"] if a["word"] == pos["word"] else 0.0 for a in alts]
    others = [a["q"] - d for a, d in zip(alts, drafted, strict=True)]
    hover, grey = "q(%{y}) = %{x:.4f}<extra></extra>", {"color": COLORS["discarded"], "opacity": 0.6}
    diamond, name = {"symbol": "diamond", "size": 9}, "target p (checked in Verify)"
    traces = [
        bar(drafted, words, name="drafted word: q(x)", role="draft", hover=hover) | {"legendgroup": "drafted"},
        bar(others, words, name="other candidates: q", hover=hover) | {"legendgroup": "others", "marker": grey},
    ]
    traces = [trace | {"orientation": "h"} for trace in traces]
    traces.append(
        line([a["p"] for a in alts], words, name=name, role="target", mode="markers", marker=diamond)
        | {"legendgroup": "target", "hovertemplate": "p(%{y}) = %{x:.4f}<extra></extra>"}
        | {"cliponaxis": False}  # a p of 1 sits on the axis's end: drawn whole, not cut in half
    )
    # Each panel on its own scale: a drafted word's q is often a few percent, invisible on a 0..1 axis.
    top = min(1.0, 1.15 * max(a[key] for a in alts for key in ("q", "p"))) or 1.0
    # Two lines: side by side on a phone, one-line titles ran into each other.
    title = f"<b>{i + 1}. {pos['word']}</b><br>q = {_prob_text(pos['q'])}, p = {_prob_text(pos['p'])}"
    note = {"text": title, "xref": "paper", "yref": "paper", "x": x_dom[0], "y": y_dom[1], "showarrow": False}
    return [trace | {"xaxis": f"x{n}", "yaxis": f"y{n}", "showlegend": i == 0} for trace in traces], {
        f"xaxis{n}": {"domain": x_dom, "anchor": f"y{n}", "range": [0, top], "fixedrange": True, "nticks": 5},
        f"yaxis{n}": {"domain": y_dom, "anchor": f"x{n}", "fixedrange": True, "automargin": True},
        "annotation": note | {"xanchor": "left", "yanchor": "bottom"},
    }


def _positions_figure(positions: Sequence[dict[str, Any]]) -> Figure:
    """One small panel per draft position, two to a row: the draft's top candidates by q, the drafted word
    highlighted, and the target's p for the same words as markers (what Verify will compare them with)."""
    columns = 1 if len(positions) == 1 else 2
    rows = -(-len(positions) // columns)
    panel, gap = 150, 64  # pixels: a panel's height and the space for the next panel's two-line title
    plot_height = rows * panel + (rows - 1) * gap
    width, height, h_gap, v_gap = (1.0 - 0.16 * (columns - 1)) / columns, panel / plot_height, 0.16, gap / plot_height
    lay = layout(height=plot_height + 124, barmode="overlay", margin={"l": 72, "t": 94, "b": 30})
    # The panels' sizes in pixels, for a page that stacks them one to a row on a narrow screen (js/widgets/draft.js).
    lay.update(showlegend=True, annotations=[], meta={"panel_px": panel, "gap_px": gap})
    lay["legend"]["y"] = 1.0 + 44 / plot_height  # above the first row's panel titles, not on top of them
    data: list[PlotTrace] = []
    for i, pos in enumerate(positions):
        r, c = divmod(i, columns)
        x0, y1 = c * (width + h_gap), 1.0 - r * (height + v_gap)
        traces, entries = _panel(i, pos, [round(x0, 6), round(x0 + width, 6)], [round(y1 - height, 6), round(y1, 6)])
        data += traces
        lay["annotations"].append(entries.pop("annotation"))
        lay.update(entries)
    return figure(data, lay)


def _risk_figure(gammas: list[int], all_accepted: list[float], speedups: list[float], best: int) -> Figure:
    """Longer drafts: the whole draft survives less often (bars) while speedup rises, peaks and falls (line)."""
    hover = f"{GAMMA} = %{{x}}: P(all accepted) = %{{y:.3f}}<extra></extra>"
    name = f"P(all {GAMMA} accepted) = {ALPHA}<sup>{GAMMA}</sup>"
    data = [bar(gammas, all_accepted, name=name, role="accepted", hover=hover)]
    hover = f"{GAMMA} = %{{x}}: speedup %{{y:.2f}}{TIMES}<extra></extra>"
    data.append(line(gammas, speedups, name="speedup (Thm 3.8)", role="target", mode="lines+markers", hover=hover))
    if best in gammas:
        star, hover = {"symbol": "star", "size": 16}, f"best {GAMMA} = %{{x}}: %{{y:.2f}}{TIMES}<extra></extra>"
        name = f"best {GAMMA} = {best}"
        data.append(
            line([best], [speedups[best - 1]], name=name, role="draft", mode="markers", marker=star, hover=hover)
        )
    for trace in data[1:]:
        trace["yaxis"] = "y2"
    lay = layout(x_title=f"speculation length {GAMMA}", y_title="probability", y_range=[0, 1.02], height=340)
    lay["xaxis"]["dtick"], lay["margin"]["r"] = 1, 56
    lay["yaxis2"] = {"title": {"text": f"speedup {TIMES}"}, "tickformat": ".1f", "overlaying": "y", "side": "right"}
    # plotly.js 4.1.1 syncs an overlaying axis's ticks to the first axis's by default: 0.0, 0.7, 1.3, ... here.
    lay["yaxis2"].update(fixedrange=True, rangemode="tozero", showgrid=False, tickmode="auto")
    return figure(data, lay)
