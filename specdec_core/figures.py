"""Plotly figure dicts for the site, as plain JSON: ``{"data": [...], "layout": {...}}``.

The same dicts are drawn twice: once at build time (embedded in the page, so it paints before Python boots) and
again live in the browser. Either way the page hands them to ``Plotly.react`` unchanged apart from the theme.

Figures here are *theme-neutral*: they set series colours (the semantic palette below, readable on light and dark
backgrounds) but never a background, font or grid colour. The page (``site_assets/js/lab.js``) adds those from the
current Material palette and re-renders when the reader toggles light/dark.

Non-goals: no ``plotly`` import (the package stays standard-library only and runs in Pyodide), no templates and no
styling beyond what a figure needs to be read. ``plotly.graph_objects.Figure`` validates these dicts in the tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "COLORS",
    "PATTERNS",
    "POLICY_STYLES",
    "bar",
    "figure",
    "layout",
    "line",
    "optimal_gamma_map_figure",
    "pair_figure",
    "policy_bars_figure",
    "speedup_curve_figure",
]

Figure = dict[str, Any]
Trace = dict[str, Any]

#: Semantic colours (Okabe & Ito's colour-blind-safe set). ``site_assets/css/lab.css`` defines the same values as
#: ``--sd-<name>`` custom properties, and a test keeps the two in step.
COLORS: dict[str, str] = {
    "target": "#0072B2",  # p: blue
    "draft": "#E69F00",  # q: orange
    "overlap": "#009E73",  # min(p, q): bluish green, the accepted mass
    "residual": "#CC79A7",  # normalize(max(0, p - q)): reddish purple, where corrections come from
    "accepted": "#009E73",
    "rejected": "#D55E00",  # vermillion
    "discarded": "#8C8C8C",  # grey: drafted, never verified
    "bonus": "#56B4E9",  # sky blue
    "correction": "#CC79A7",
}

#: A second cue besides colour (bar fill patterns), so series stay distinct in grey scale.
PATTERNS: dict[str, str] = {
    "target": "",
    "draft": "/",
    "overlap": ".",
    "residual": "x",
    "discarded": "-",
}


def figure(data: Sequence[Trace], layout_: dict[str, Any] | None = None) -> Figure:
    """Join traces and a layout into a figure dict.

    >>> figure([bar(["a"], [1.0], name="p")])["data"][0]["type"]
    'bar'
    """
    return {"data": list(data), "layout": dict(layout_ or {})}


def layout(
    *,
    title: str | None = None,
    x_title: str | None = None,
    y_title: str | None = None,
    y_range: Sequence[float] | None = None,
    barmode: str | None = None,
    height: int = 320,
) -> dict[str, Any]:
    """A theme-neutral layout: titles, axes and a horizontal legend above the plot.

    >>> layout(y_title="probability", y_range=[0, 1])["yaxis"]
    {'fixedrange': True, 'title': {'text': 'probability'}, 'range': [0, 1]}
    """
    # Charts are read, not explored: fixed axes keep a page scroll from zooming a chart by accident.
    xaxis: dict[str, Any] = {"fixedrange": True}
    yaxis: dict[str, Any] = {"fixedrange": True}
    if x_title:
        xaxis["title"] = {"text": x_title}
    if y_title:
        yaxis["title"] = {"text": y_title}
    if y_range is not None:
        yaxis["range"] = [y_range[0], y_range[1]]
    out: dict[str, Any] = {
        "height": height,
        "margin": {"l": 56, "r": 16, "t": 48 if title else 24, "b": 48},
        "legend": {"orientation": "h", "x": 0, "y": 1.02, "xanchor": "left", "yanchor": "bottom"},
        "xaxis": xaxis,
        "yaxis": yaxis,
    }
    if title:
        out["title"] = {"text": title, "x": 0, "xanchor": "left"}
    if barmode:
        out["barmode"] = barmode
    return out


def bar(
    x: Sequence[str] | Sequence[float],
    y: Sequence[float],
    *,
    name: str,
    role: str | None = None,
    hover: str | None = None,
) -> Trace:
    """A bar trace coloured (and patterned) by its semantic ``role``, a key of ``COLORS``.

    >>> bar(["a", "b"], [0.5, 0.5], name="q", role="draft")["marker"]
    {'color': '#E69F00', 'pattern': {'shape': '/'}}
    """
    trace: Trace = {"type": "bar", "name": name, "x": list(x), "y": list(y)}
    if role is not None:
        marker: dict[str, Any] = {"color": COLORS[role]}
        if PATTERNS.get(role):
            marker["pattern"] = {"shape": PATTERNS[role]}
        trace["marker"] = marker
    if hover is not None:
        trace["hovertemplate"] = hover
    return trace


def line(
    x: Sequence[float],
    y: Sequence[float],
    *,
    name: str,
    role: str | None = None,
    dash: str | None = None,
    mode: str = "lines",
) -> Trace:
    """A line (or ``mode="markers"``) trace coloured by its semantic ``role``.

    >>> line([0, 1], [1, 2], name="E[tokens]", dash="dot")["line"]
    {'dash': 'dot'}
    """
    trace: Trace = {"type": "scatter", "mode": mode, "name": name, "x": list(x), "y": list(y)}
    style: dict[str, Any] = {}
    if role is not None:
        style["color"] = COLORS[role]
    if dash is not None:
        style["dash"] = dash
    if style:
        trace["line" if "lines" in mode else "marker"] = style
    return trace


# --8<-- [start:pair_figure]
def pair_figure(
    labels: Sequence[str],
    p: Sequence[float],  # [vocab] target
    q: Sequence[float],  # [vocab] draft
    overlap: Sequence[float],  # [vocab] min(p, q)
    residual: Sequence[float],  # [vocab] normalize(max(0, p - q))
) -> Figure:
    """Grouped bars for one position: target p, draft q, the accepted mass min(p, q) and the residual."""
    pct = "%{y:.3f}"
    return figure(
        [
            bar(labels, p, name="target p", role="target", hover=f"p(%{{x}}) = {pct}<extra></extra>"),
            bar(labels, q, name="draft q", role="draft", hover=f"q(%{{x}}) = {pct}<extra></extra>"),
            bar(
                labels,
                overlap,
                name="min(p, q): accepted",
                role="overlap",
                hover=f"min(p, q) = {pct}<extra></extra>",
            ),
            bar(
                labels,
                residual,
                name="residual: corrections",
                role="residual",
                hover=f"residual(%{{x}}) = {pct}<extra>drawn only after a rejection</extra>",
            ),
        ],
        layout(x_title="token", y_title="probability", y_range=[0, 1], barmode="group"),
    )


# --8<-- [end:pair_figure]


# --- Tuning ---------------------------------------------------------------------------------------------------
# Figures of the Tuning page (docs/tuning.md): the speedup curve over gamma, the map of the best gamma over
# (cost, alpha), and the adaptive-policy comparison.

#: One colour (and bar pattern) per draft-length policy, taken from the same colour-blind-safe set.
POLICY_STYLES: dict[str, tuple[str, str]] = {
    "fixed": (COLORS["target"], ""),
    "confidence": (COLORS["draft"], "/"),
    "dynamic": (COLORS["overlap"], "."),
    "oracle": (COLORS["residual"], "x"),
}

# Spelled out: ruff flags literal Greek letters as confusable with Latin ones.
_G, _A, _X = "\N{GREEK SMALL LETTER GAMMA}", "\N{GREEK SMALL LETTER ALPHA}", "\N{MULTIPLICATION SIGN}"


def speedup_curve_figure(
    gammas: Sequence[int],
    speedups: Sequence[float],  # [len(gammas)] Thm 3.8 at each gamma
    *,
    gamma: int,
    best_gamma: int,
) -> Figure:
    """Speedup against gamma for one (alpha, c), with the break-even line, the chosen gamma and the optimum.

    ``best_gamma`` 0 means no gamma pays; the optimum marker then sits on the break-even line at gamma 0.
    """
    by_gamma = dict(zip(gammas, speedups, strict=True))
    best_value = by_gamma.get(best_gamma, 1.0)
    chosen = line(
        [gamma],
        [by_gamma[gamma]],
        name=f"your {_G} = {gamma}",
        role="target",
        mode="markers",
    )
    chosen["marker"] = {"color": COLORS["target"], "size": 11, "symbol": "circle"}
    optimum = line(
        [best_gamma],
        [best_value],
        name=f"optimal {_G} = {best_gamma}",
        role="rejected",
        mode="markers",
    )
    optimum["marker"] = {"color": COLORS["rejected"], "size": 15, "symbol": "star"}
    curve = line(gammas, speedups, name="speedup (Thm 3.8)", role="target", mode="lines+markers")
    curve["hovertemplate"] = _G + " = %{x}: speedup %{y:.3f}" + _X + "<extra></extra>"
    even = line([0, max(gammas)], [1.0, 1.0], name=f"break-even (1{_X})", role="discarded", dash="dash")
    even["hoverinfo"] = "skip"
    top = max([*speedups, 1.0])
    out = figure(
        [curve, even, chosen, optimum],
        layout(x_title=f"speculation length {_G}", y_title="speedup over plain decoding", y_range=[0, top * 1.12]),
    )
    out["layout"]["xaxis"]["dtick"] = 2 if max(gammas) > 16 else 1
    return out


def optimal_gamma_map_figure(
    costs: Sequence[float],  # [C] x axis
    alphas: Sequence[float],  # [A] y axis
    best: Sequence[Sequence[int]],  # [A][C] optimal gamma (0: do not speculate)
    *,
    alpha: float,
    cost: float,
) -> Figure:
    """Heatmap of the optimal gamma over draft cost (x) and agreement rate (y), with the reader's point marked."""
    heat: Trace = {
        "type": "heatmap",
        "x": list(costs),
        "y": list(alphas),
        "z": [list(row) for row in best],
        "colorscale": "Viridis",
        "zmin": 0,
        "colorbar": {"title": {"text": f"optimal {_G}"}, "thickness": 12},
        "hovertemplate": f"c = %{{x:.2f}}, {_A} = %{{y:.2f}}: optimal {_G} = %{{z}}<extra></extra>",
        "name": f"optimal {_G}",
    }
    here = line([cost], [alpha], name=f"your (c, {_A})", mode="markers")
    here["marker"] = {"color": "#FFFFFF", "size": 12, "symbol": "x", "line": {"color": "#000000", "width": 2}}
    here["hovertemplate"] = f"your setting: c = %{{x:.2f}}, {_A} = %{{y:.2f}}<extra></extra>"
    out = figure([heat, here], layout(x_title="draft cost c", y_title=f"agreement rate {_A}", height=360))
    out["layout"]["showlegend"] = False
    return out


def policy_bars_figure(
    policies: Sequence[str],  # keys of POLICY_STYLES, in display order
    labels: Sequence[str],  # [P] legend names
    measures: Sequence[str],  # [M] x-axis categories
    values: Sequence[Sequence[float]],  # [P][M]
) -> Figure:
    """Grouped bars: one group per measure, one bar per policy (colour and pattern per policy)."""
    traces: list[Trace] = []
    for key, label, row in zip(policies, labels, values, strict=True):
        colour, pattern = POLICY_STYLES[key]
        trace = bar(measures, row, name=label, hover=f"{label}<br>%{{x}}: %{{y:.3f}}<extra></extra>")
        trace["marker"] = {"color": colour, **({"pattern": {"shape": pattern}} if pattern else {})}
        traces.append(trace)
    return figure(traces, layout(y_title="value", barmode="group", height=340))


# --- Correct, Bonus, Why it is exact ----------------------------------------------------------------------------


def _with_pattern(trace: Trace, shape: str) -> Trace:
    # A second cue besides colour for series whose role has no pattern of its own.
    trace.setdefault("marker", {})["pattern"] = {"shape": shape}
    return trace


def correct_split_figure(
    labels: Sequence[str],
    p: Sequence[float],  # [vocab] target
    overlap: Sequence[float],  # [vocab] min(p, q): emitted as an accepted draft
    rejected_part: Sequence[float],  # [vocab] (1 - beta) * residual: emitted as a correction
) -> Figure:
    """The proof in one picture: per token, accepted mass stacked on correction mass reaches exactly p(x)."""
    fig = figure(
        [
            bar(
                labels,
                overlap,
                name="accepted draft: min(p, q)(x)",
                role="overlap",
                hover="via an accepted draft: %{y:.4f}<extra></extra>",
            ),
            bar(
                labels,
                rejected_part,
                name="correction: (1 &#8722; &#946;) · residual(x)",
                role="residual",
                hover="via a correction: %{y:.4f}<extra></extra>",
            ),
            line(labels, p, name="target p(x)", role="target", mode="markers"),  # type: ignore[arg-type]
        ],
        layout(x_title="token", y_title="P(emit token)", y_range=[0, 1], barmode="stack"),
    )
    fig["data"][2]["marker"].update({"symbol": "line-ew-open", "size": 34, "line": {"width": 3}})
    fig["data"][2]["hovertemplate"] = "p(%{x}) = %{y:.4f}<extra></extra>"
    return fig


def empirical_figure(
    labels: Sequence[str],
    p: Sequence[float],  # [vocab] target
    counts: Sequence[int],  # [vocab] emitted tokens
    *,
    q: Sequence[float] | None = None,  # [vocab] draft, for contrast
) -> Figure:
    """Target p (with a band of two standard errors at this sample size) against the emitted frequencies."""
    n = max(sum(counts), 1)
    target = bar(labels, p, name="target p", role="target", hover="p(%{x}) = %{y:.4f}<extra></extra>")
    # Where an exact sampler's frequency lands about 95% of the time: p +- 2 sqrt(p (1 - p) / n).
    target["error_y"] = {"type": "data", "array": [round(2.0 * (x * (1.0 - x) / n) ** 0.5, 12) for x in p]}
    emitted = _with_pattern(
        bar(
            labels,
            [c / n for c in counts],
            name=f"emitted, {n:,} rounds",
            role="accepted",
            hover="emitted %{x}: %{y:.4f}<extra></extra>",
        ),
        ".",
    )
    data = [target, emitted]
    if q is not None:
        data.append(bar(labels, q, name="draft q", role="draft", hover="q(%{x}) = %{y:.4f}<extra></extra>"))
    return figure(data, layout(x_title="token", y_title="probability", y_range=[0, 1], barmode="group"))


def broken_figure(
    labels: Sequence[str],
    p: Sequence[float],  # [vocab] target
    exact: Sequence[float],  # [vocab] the implementation's exact output distribution
    counts: Sequence[int] | None = None,  # [vocab] a sample of its output, if one was drawn
) -> Figure:
    """Target p against what one (maybe broken) implementation emits: exactly, and in a sample."""
    data = [
        bar(labels, p, name="target p", role="target", hover="p(%{x}) = %{y:.4f}<extra></extra>"),
        _with_pattern(
            bar(
                labels,
                exact,
                name="this implementation, exactly",
                role="rejected",
                hover="P(emit %{x}) = %{y:.4f}<extra></extra>",
            ),
            "x",
        ),
    ]
    if counts:
        n = sum(counts)
        sampled = bar(labels, [c / n for c in counts], name=f"sampled, {n:,} rounds", role="accepted")
        data.append(_with_pattern(sampled, "."))
    return figure(data, layout(x_title="token", y_title="probability", y_range=[0, 1], barmode="group"))


def accepted_counts_figure(
    gamma: int,
    theory: Sequence[float],  # [gamma + 1] P(accepted = k)
    simulated: Sequence[float],  # [gamma + 1] share of simulated rounds
) -> Figure:
    """Accepted drafts per round: the capped geometric law, its last bar the rounds that end with a bonus."""
    names = [f"{k}" for k in range(gamma + 1)]
    fig = figure(
        [
            bar(
                names[:-1],
                theory[:-1],
                name="theory: ends with a correction",
                role="correction",
                hover="P(%{x} accepted) = %{y:.4f}<extra></extra>",
            ),
            _with_pattern(
                bar(
                    names[-1:],
                    theory[-1:],
                    name="theory: all accepted, ends with a bonus",
                    role="bonus",
                    hover="P(all %{x} accepted) = %{y:.4f}<extra></extra>",
                ),
                "+",
            ),
            line(names, simulated, name="simulated rounds", role="target", mode="markers"),  # type: ignore[arg-type]
        ],
        layout(x_title="drafts accepted in the round", y_title="share of rounds", y_range=[0, 1], barmode="overlay"),
    )
    fig["data"][2]["marker"].update({"symbol": "diamond", "size": 11})
    fig["data"][2]["hovertemplate"] = "simulated: %{y:.4f}<extra></extra>"
    fig["layout"]["xaxis"]["type"] = "category"
    return fig


def tokens_per_pass_figure(
    alpha: float,
    gamma: int,
    expected: Sequence[float],  # [8] expected tokens per pass for gamma = 1..8
    simulated: float | None = None,
) -> Figure:
    """Expected tokens per target pass against gamma at this alpha, under the ceiling gamma + 1."""
    gammas = list(range(1, len(expected) + 1))
    data = [
        line(gammas, [g + 1 for g in gammas], name="ceiling &#947; + 1", role="discarded", dash="dot"),
        line(gammas, expected, name=f"expected at &#945; = {alpha:.2f}", role="target", mode="lines+markers"),
        line([gamma], [expected[gamma - 1]], name=f"&#947; = {gamma}", role="bonus", mode="markers"),
    ]
    data[2]["marker"].update({"size": 14, "symbol": "circle-open", "line": {"width": 3}})
    if simulated is not None:
        sim = line([gamma], [simulated], name="simulated", role="accepted", mode="markers")
        sim["marker"].update({"symbol": "diamond", "size": 10})
        data.append(sim)
    fig = figure(data, layout(x_title="speculation length &#947;", y_title="tokens per target pass", y_range=[0, 9.5]))
    fig["layout"]["xaxis"]["dtick"] = 1
    return fig


# --- Draft and Verify pages ---------------------------------------------------------------------------------

# Spelled out: ruff flags literal Greek letters and the multiplication sign as confusable with Latin ones.
_ALPHA, _GAMMA, _TIMES = "\N{GREEK SMALL LETTER ALPHA}", "\N{GREEK SMALL LETTER GAMMA}", "\N{MULTIPLICATION SIGN}"


def _grid(count: int, columns: int, h_gap: float, v_gap: float) -> list[tuple[list[float], list[float]]]:
    """Paper-coordinate (x, y) domains for ``count`` subplots, filled row by row from the top."""
    rows = -(-count // columns)
    width = (1.0 - h_gap * (columns - 1)) / columns
    height = (1.0 - v_gap * (rows - 1)) / rows
    out: list[tuple[list[float], list[float]]] = []
    for i in range(count):
        r, c = divmod(i, columns)
        x0 = c * (width + h_gap)
        y1 = 1.0 - r * (height + v_gap)
        out.append(([round(x0, 6), round(x0 + width, 6)], [round(y1 - height, 6), round(y1, 6)]))
    return out


def _prob_text(x: float) -> str:
    """Three decimals, or a short exponent for a tiny probability (a rare word's q can be 1e-5)."""
    return f"{x:.3f}" if x >= 0.001 or x == 0.0 else f"{x:.1e}"


def draft_positions_figure(
    positions: Sequence[dict[str, Any]],  # [gamma] {"word", "q", "p", "alternatives": [{"word", "q", "p"}]}
) -> Figure:
    """One small panel per draft position: the draft's top candidates by q, the drafted word highlighted, and
    the target's p for the same words as markers (what Verify will compare them with)."""
    count = max(len(positions), 1)
    columns = 1 if count == 1 else 2
    rows = -(-count // columns)
    panel, gap = 150, 56  # pixels: a panel's height and the space for the next panel's title
    plot_height = rows * panel + (rows - 1) * gap
    domains = _grid(count, columns, h_gap=0.16, v_gap=gap / plot_height)
    data: list[Trace] = []
    lay = layout(height=plot_height + 110)
    lay["barmode"] = "overlay"
    lay["margin"] = {"l": 72, "r": 16, "t": 80, "b": 30}
    lay["showlegend"] = True
    annotations: list[dict[str, Any]] = []
    for i, pos in enumerate(positions):
        suffix = "" if i == 0 else str(i + 1)
        xa, ya = f"x{suffix}", f"y{suffix}"
        # Most likely at the top: horizontal bars list categories bottom-up.
        alts = list(reversed(pos["alternatives"]))
        words = [a["word"] for a in alts]
        chosen = [a["q"] if a["word"] == pos["word"] else 0.0 for a in alts]
        others = [0.0 if a["word"] == pos["word"] else a["q"] for a in alts]
        first = i == 0
        hover_q = "q(%{y}) = %{x:.4f}<extra></extra>"
        drafted = bar(words, chosen, name="drafted word: q(x)", role="draft", hover=hover_q)
        rest = bar(words, others, name="other candidates: q", hover=hover_q)
        rest["marker"] = {"color": COLORS["discarded"], "opacity": 0.6}
        for trace, group in ((drafted, "drafted"), (rest, "others")):
            # Horizontal: the words go on the y axis.
            trace.update(x=trace["y"], y=words, orientation="h", xaxis=xa, yaxis=ya, legendgroup=group)
            trace["showlegend"] = first
            data.append(trace)
        target = line([a["p"] for a in alts], [], name="target p (checked in Verify)", role="target", mode="markers")
        target["marker"].update(symbol="diamond", size=9)
        target.update(
            y=words,
            xaxis=xa,
            yaxis=ya,
            legendgroup="target",
            showlegend=first,
            hovertemplate="p(%{y}) = %{x:.4f}<extra></extra>",
        )
        data.append(target)
        (x_dom, y_dom) = domains[i]
        # Each panel on its own scale: a drafted word's q is often a few percent, invisible on a 0..1 axis.
        local = max((a[key] for a in alts for key in ("q", "p")), default=1.0)
        lay[f"xaxis{suffix}"] = {
            "domain": x_dom,
            "anchor": ya,
            "range": [0, min(1.0, local * 1.15) or 1.0],
            "fixedrange": True,
            "nticks": 5,
        }
        lay[f"yaxis{suffix}"] = {"domain": y_dom, "anchor": xa, "fixedrange": True, "automargin": True}
        annotations.append(
            {
                "text": f"<b>{i + 1}. {pos['word']}</b>   q = {_prob_text(pos['q'])}, p = {_prob_text(pos['p'])}",
                "xref": "paper",
                "yref": "paper",
                "x": x_dom[0],
                "y": y_dom[1],
                "xanchor": "left",
                "yanchor": "bottom",
                "showarrow": False,
            }
        )
    lay["annotations"] = annotations
    # Above the first row's panel titles, not on top of them.
    lay["legend"] = {"orientation": "h", "x": 0, "y": 1.0 + 34 / plot_height, "xanchor": "left", "yanchor": "bottom"}
    return figure(data, lay)


def verify_figure(
    positions: Sequence[dict[str, Any]],  # [gamma] {"label", "p", "q", "ratio", "threshold", "u", "outcome"}
) -> Figure:
    """Each draft position's acceptance threshold min(1, p/q) as a bar and its uniform u as a marker:
    u below the top of the bar accepts, above it rejects; positions after the first rejection are greyed."""
    data: list[Trace] = []
    names = {
        "accepted": "accepted: u < min(1, p/q)",
        "rejected": "rejected: u ≥ min(1, p/q)",
        "discarded": "discarded: never checked",
    }
    hover = "%{x}<br>p(x) = %{customdata[0]:.3f}, q(x) = %{customdata[1]:.3f}<br>min(1, p/q) = %{y:.3f}<extra></extra>"
    for outcome in ("accepted", "rejected", "discarded"):
        picked = [pos for pos in positions if pos["outcome"] == outcome]
        if not picked:
            continue
        trace = bar([pos["label"] for pos in picked], [pos["threshold"] for pos in picked], name=names[outcome])
        trace["marker"] = {"color": COLORS[outcome], "opacity": 0.45}
        if outcome == "discarded":
            trace["marker"]["pattern"] = {"shape": PATTERNS["discarded"]}
        trace["customdata"] = [[pos["p"], pos["q"]] for pos in picked]
        trace["hovertemplate"] = hover
        data.append(trace)
    for outcome, symbol in (("accepted", "circle"), ("rejected", "x")):
        picked = [pos for pos in positions if pos["outcome"] == outcome]
        if not picked:
            continue
        marks = line([], [pos["u"] for pos in picked], name=f"u ({outcome})", role=outcome, mode="markers")
        marks["x"] = [pos["label"] for pos in picked]
        marks["marker"].update(symbol=symbol, size=14, line={"width": 2, "color": COLORS[outcome]})
        marks["hovertemplate"] = "%{x}<br>u = %{y:.3f}<extra></extra>"
        data.append(marks)
    lay = layout(x_title="draft position and word", y_title="probability", y_range=[0, 1.05], height=340)
    lay["barmode"] = "overlay"
    lay["xaxis"]["type"] = "category"
    lay["xaxis"]["categoryorder"] = "array"
    lay["xaxis"]["categoryarray"] = [pos["label"] for pos in positions]
    return figure(data, lay)


def acceptance_rates_figure(
    alphas: Sequence[float],  # [n] per-token acceptance rate alpha, the x axis
    per_draft: Sequence[float],  # [n] accepted / drafted at this gamma
    all_accepted: Sequence[float],  # [n] alpha ** gamma
    alpha: float,
    gamma: int,
) -> Figure:
    """Three ways to read one draft: per-token alpha, accepted / drafted, and the chance all gamma survive."""
    here = [alpha]
    data = [
        line(alphas, alphas, name=f"per-token {_ALPHA} (the paper's)", role="target", dash="dash"),
        line(alphas, per_draft, name=f"accepted / drafted at {_GAMMA} = {gamma}", role="draft"),
        line(alphas, all_accepted, name=f"all {gamma} accepted: {_ALPHA}^{_GAMMA}", role="accepted", dash="dot"),
    ]
    for values, role, name in (
        (alphas, "target", f"per-token {_ALPHA}"),
        (per_draft, "draft", "accepted / drafted"),
        (all_accepted, "accepted", "all accepted"),
    ):
        index = min(range(len(alphas)), key=lambda i: abs(alphas[i] - alpha))
        dot = line(here, [values[index]], name=name, role=role, mode="markers")
        dot["marker"].update(size=10)
        dot["showlegend"] = False
        dot["hovertemplate"] = f"{name} = %{{y:.3f}}<extra>{_ALPHA} = %{{x:.2f}}</extra>"
        data.append(dot)
    return figure(
        data,
        layout(x_title=f"per-token acceptance rate {_ALPHA}", y_title="rate", y_range=[0, 1.02], height=340),
    )


def draft_risk_figure(
    gammas: Sequence[int],  # [n] draft lengths
    all_accepted: Sequence[float],  # [n] alpha ** gamma
    speedups: Sequence[float],  # [n] Theorem 3.8 walltime factor at cost c
    best: int,  # the gamma with the largest speedup (0: do not speculate)
) -> Figure:
    """Longer drafts: the whole draft survives less often (bars) while speedup rises, peaks and falls (line)."""
    bars = bar(
        list(gammas),
        list(all_accepted),
        name=f"P(all {_GAMMA} accepted) = {_ALPHA}^{_GAMMA}",
        role="accepted",
        hover=f"{_GAMMA} = %{{x}}: P(all accepted) = %{{y:.3f}}<extra></extra>",
    )
    speed = line(list(gammas), list(speedups), name="speedup (Thm 3.8)", role="target", mode="lines+markers")
    speed["yaxis"] = "y2"
    speed["hovertemplate"] = f"{_GAMMA} = %{{x}}: speedup %{{y:.2f}}{_TIMES}<extra></extra>"
    data = [bars, speed]
    if best in gammas:
        mark = line(
            [best], [speedups[list(gammas).index(best)]], name=f"best {_GAMMA} = {best}", role="draft", mode="markers"
        )
        mark["marker"].update(symbol="star", size=16)
        mark["yaxis"] = "y2"
        mark["hovertemplate"] = f"best {_GAMMA} = %{{x}}: %{{y:.2f}}{_TIMES}<extra></extra>"
        data.append(mark)
    lay = layout(x_title=f"speculation length {_GAMMA}", y_title="probability", y_range=[0, 1.02], height=340)
    lay["xaxis"]["dtick"] = 1
    lay["yaxis2"] = {
        "title": {"text": f"speedup {_TIMES}"},
        "tickformat": ".1f",
        "overlaying": "y",
        "side": "right",
        "fixedrange": True,
        "rangemode": "tozero",
        "showgrid": False,
    }
    lay["margin"]["r"] = 56
    return figure(data, lay)


# --- Playground -------------------------------------------------------------------------------------------------
# Figures of the Playground (docs/playground.md): accepted drafts per round, the accept rate over a sliding window
# of rounds, the output distribution against the target's, and the takeaway curve of tokens per pass against alpha.

_PG_GAMMA, _PG_ALPHA = "\N{GREEK SMALL LETTER GAMMA}", "\N{GREEK SMALL LETTER ALPHA}"


def playground_accepted_figure(
    observed: Sequence[float],  # [gamma_max + 1] share of played rounds with k drafts accepted
    expected: Sequence[float],  # [gamma_max + 1] the same, in expectation given each round's context
    rounds: int,
) -> Figure:
    """Accepted drafts per round: the rounds played (bars) against the exact expectation (markers)."""
    ks = [str(k) for k in range(len(observed))]
    played = bar(
        ks, observed, name=f"played ({rounds} rounds)", role="accepted", hover="%{y:.3f} of rounds<extra></extra>"
    )
    theory = line(ks, expected, name="theory", role="target", mode="markers")  # type: ignore[arg-type]
    theory["marker"].update({"symbol": "diamond", "size": 10, "line": {"width": 1, "color": "#ffffff"}})
    theory["hovertemplate"] = "expected %{y:.3f}<extra></extra>"
    fig = figure([played, theory], layout(x_title="drafts accepted in a round", y_title="share of rounds", height=280))
    fig["layout"]["xaxis"]["type"] = "category"
    fig["layout"]["yaxis"]["rangemode"] = "tozero"
    return fig


def playground_window_figure(
    x: Sequence[int],  # [points] round number at the end of each window
    measured: Sequence[float],  # [points] accepted / drafted over the window
    theory: Sequence[float],  # [points] expected accepted / drafted over the same rounds
    *,
    window: int,
    changes: Sequence[tuple[int, str]] = (),  # (round, label) where the reader changed quality or gamma
) -> Figure:
    """The draft accept rate over the last ``window`` rounds as the run goes on, against its exact expectation."""
    played = line(x, measured, name=f"accept rate, last {window} rounds", role="accepted")
    played["hovertemplate"] = "round %{x}: %{y:.3f}<extra></extra>"
    expected = line(x, theory, name="theory", role="target", dash="dot")
    expected["hovertemplate"] = "round %{x}: expected %{y:.3f}<extra></extra>"
    fig = figure(
        [played, expected],
        layout(x_title="round", y_title="accepted / drafted", y_range=[0, 1.05], height=280),
    )
    fig["layout"]["shapes"] = [
        {
            "type": "line",
            "xref": "x",
            "yref": "paper",
            "x0": at,
            "x1": at,
            "y0": 0,
            "y1": 1,
            "line": {"dash": "dash", "width": 1, "color": COLORS["discarded"]},
        }
        for at, _ in changes
    ]
    fig["layout"]["annotations"] = [
        {
            "x": at,
            "y": 1.0,
            "xref": "x",
            "yref": "paper",
            "text": label,
            "showarrow": False,
            "xanchor": "left",
            "yanchor": "top",
            "font": {"size": 10},
        }
        for at, label in changes[-4:]
    ]
    if not x:
        fig["layout"]["xaxis"]["range"] = [0, window]
    return fig


def playground_distributions_figure(
    words: Sequence[str],
    target: Sequence[float],  # [V] the target's rows averaged over the emitted tokens' contexts
    output: Sequence[float] | None,  # [V] emitted tokens, shares (None before any token)
    draft: Sequence[float],  # [V] the draft's rows over the same contexts
) -> Figure:
    """Output against target over the same contexts, and the draft's distribution for contrast."""
    data = [bar(words, target, name="target p", role="target", hover="p(%{x}) = %{y:.4f}<extra></extra>")]
    if output is not None:
        emitted = bar(
            words, output, name="emitted output", role="overlap", hover="output %{x}: %{y:.4f}<extra></extra>"
        )
        data.append(emitted)
    data.append(bar(words, draft, name="draft q (contrast)", role="draft", hover="q(%{x}) = %{y:.4f}<extra></extra>"))
    fig = figure(data, layout(x_title="token", y_title="share of emitted tokens", barmode="group", height=300))
    fig["layout"]["xaxis"]["tickangle"] = -45
    fig["layout"]["margin"]["b"] = 72
    fig["layout"]["yaxis"]["rangemode"] = "tozero"
    return fig


def playground_takeaway_figure(
    alphas: Sequence[float],  # [A] x axis
    curves: Sequence[Sequence[float]],  # [8][A] expected tokens per pass for gamma = 1..8
    *,
    gamma: int,
    alpha: float,  # the current setting's mean per-position acceptance
    value: float,  # expected tokens per pass there
    measured: tuple[float, float] | None = None,  # (alpha implied by the run, tokens per pass played)
) -> Figure:
    """(1 - alpha^(gamma+1)) / (1 - alpha) against alpha, one line per gamma, with the current setting marked."""
    data: list[Trace] = []
    for g, ys in enumerate(curves, start=1):
        trace = line(alphas, ys, name=f"{_PG_GAMMA} = {g}", role="target" if g == gamma else "discarded")
        trace["line"]["width"] = 3.5 if g == gamma else 1
        trace["opacity"] = 1.0 if g == gamma else 0.55
        trace["hovertemplate"] = f"{_PG_GAMMA} = {g}, {_PG_ALPHA} = %{{x:.2f}}: %{{y:.2f}} tokens<extra></extra>"
        trace["showlegend"] = g == gamma
        data.append(trace)
    now = line([alpha], [value], name="your setting", role="rejected", mode="markers")
    now["marker"].update({"symbol": "star", "size": 20, "line": {"width": 1, "color": "#ffffff"}})
    now["hovertemplate"] = f"{_PG_ALPHA} = %{{x:.3f}}: expected %{{y:.2f}} tokens per pass<extra>your setting</extra>"
    data.append(now)
    if measured is not None:
        run = line([measured[0]], [measured[1]], name="your run", role="accepted", mode="markers")
        run["marker"].update({"symbol": "diamond", "size": 8})
        run["hovertemplate"] = "played: %{y:.2f} tokens per pass<extra>your run</extra>"
        data.append(run)
    fig = figure(
        data,
        layout(x_title=f"{_PG_ALPHA} (per-position acceptance)", y_title="expected tokens per pass", y_range=[0, 9.3]),
    )
    # One text trace labels the line ends: far cheaper for Plotly to lay out than eight annotations.
    ends = line([alphas[-1]] * len(curves), [ys[-1] for ys in curves], name="labels", mode="text")
    ends.update({"text": [f" {_PG_GAMMA}={g}" for g in range(1, len(curves) + 1)], "textposition": "middle right"})
    ends.update({"hoverinfo": "skip", "showlegend": False, "cliponaxis": False})
    fig["data"].insert(len(curves), ends)
    fig["layout"]["margin"]["r"] = 40
    return fig
