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
