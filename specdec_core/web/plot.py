"""Shared figure primitives for every page: colours, patterns, Greek letters, layout, bar and line traces.

Figures are plain Plotly dicts, ``{"data": [...], "layout": {...}}``, drawn twice: at build time (embedded in the
page, so it paints before Python boots) and live in the browser, handed to ``Plotly.react`` unchanged apart from the
theme. They are *theme-neutral*: they set series colours (the semantic palette below, readable on light and dark
backgrounds) but never a background, font or grid colour. The page (``site_assets/js/lab.js``) adds those from the
current Material palette and re-renders when the reader toggles light/dark.

Non-goals: no ``plotly`` import (the package stays standard-library only and runs in Pyodide), no templates and no
styling beyond what a figure needs to be read. ``plotly.graph_objects.Figure`` validates these dicts in the tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "ALPHA",
    "BETA",
    "COLORS",
    "GAMMA",
    "PATTERNS",
    "TIMES",
    "Figure",
    "PlotTrace",
    "bar",
    "figure",
    "layout",
    "line",
    "pair_figure",
    "plural",
    "probability_bars",
    "role_marker",
    "rounded",
    "with_pattern",
]

Figure = dict[str, Any]
#: One Plotly trace dict (named apart from ``engine.Trace``, a generation's record).
PlotTrace = dict[str, Any]

#: Greek letters and the times sign, spelled out once: ruff flags a literal Greek letter in code as confusable.
GAMMA = "\N{GREEK SMALL LETTER GAMMA}"
ALPHA = "\N{GREEK SMALL LETTER ALPHA}"
BETA = "\N{GREEK SMALL LETTER BETA}"
TIMES = "\N{MULTIPLICATION SIGN}"
#: The axis title under byte-level BPE pieces, which show a leading space as SPACE_MARK.
SPACE_MARK = "\N{LOWER ONE EIGHTH BLOCK}"
PIECE_AXIS = f"token ({SPACE_MARK} = a space before it)"

#: Semantic colours (Okabe & Ito's colour-blind-safe set). ``site_assets/css/tokens.css`` defines the same values as
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


def figure(data: Sequence[PlotTrace], layout_: dict[str, Any] | None = None) -> Figure:
    """Join traces and a layout into a figure dict.

    >>> figure([bar(["a"], [1.0], name="p")])["data"][0]["type"]
    'bar'
    """
    return {"data": list(data), "layout": dict(layout_ or {})}


def layout(
    *,
    title: str | None = None,
    subtitle: str | None = None,  # a second line under the title (with a title only)
    x_title: str | None = None,
    y_title: str | None = None,
    y_range: Sequence[float] | None = None,
    barmode: str | None = None,
    height: int = 320,
    xaxis: dict[str, Any] | None = None,  # more x-axis settings (``{"type": "category"}``)
    yaxis: dict[str, Any] | None = None,
    margin: dict[str, int] | None = None,  # sides to change from the defaults
    **extra: Any,  # more top-level settings (``showlegend``, ``shapes``, ``annotations``), added last
) -> dict[str, Any]:
    """A theme-neutral layout: titles, axes and a horizontal legend above the plot.

    >>> layout(y_title="probability", y_range=[0, 1])["yaxis"]
    {'fixedrange': True, 'title': {'text': 'probability'}, 'range': [0, 1]}
    >>> layout(xaxis={"type": "category"}, margin={"b": 72})["margin"]["b"]
    72
    """
    # Charts are read, not explored: fixed axes keep a page scroll from zooming a chart by accident. On a narrow
    # screen Plotly turns crowded tick labels upright; automargin grows the bottom margin to hold them and the title.
    x: dict[str, Any] = {"fixedrange": True, "automargin": True}
    x |= ({"title": {"text": x_title}} if x_title else {}) | (xaxis or {})
    y: dict[str, Any] = {"fixedrange": True} | ({"title": {"text": y_title}} if y_title else {})
    y |= ({"range": [y_range[0], y_range[1]]} if y_range is not None else {}) | (yaxis or {})
    out: dict[str, Any] = {
        "height": height,
        "margin": {"l": 56, "r": 16, "t": 80 if title else 24, "b": 48} | (margin or {}),
        "legend": {"orientation": "h", "x": 0, "y": 1.02, "xanchor": "left", "yanchor": "bottom"},
        "xaxis": x,
        "yaxis": y,
    }
    if title:
        # At the top of the figure, above the legend (which Plotly sets above the plot, growing the top margin for
        # it): in the middle of the margin, as Plotly places a title by default, a long legend ran over it.
        top = {"y": 1, "yref": "container", "yanchor": "top", "pad": {"t": 8}}
        out["title"] = {"text": title, "x": 0, "xanchor": "left"} | top
        # A second line is a subtitle, never "<br>" in the title: plotly.js 4.1.1 placed a two-line title anchored
        # at the figure's top with its first line half above the figure's edge.
        if subtitle:
            out["title"]["subtitle"] = {"text": subtitle}
    if barmode:
        out["barmode"] = barmode
    return out | extra


def role_marker(role: str) -> dict[str, Any]:
    """The marker of a semantic ``role``, a key of ``COLORS``: its colour, and its fill pattern when it has one.

    >>> role_marker("draft")
    {'color': '#E69F00', 'pattern': {'shape': '/'}}
    """
    return {"color": COLORS[role]} | ({"pattern": {"shape": PATTERNS[role]}} if PATTERNS.get(role) else {})


def bar(
    x: Sequence[str] | Sequence[float],
    y: Sequence[float] | Sequence[str],  # words on y make horizontal bars (with ``"orientation": "h"``)
    *,
    name: str,
    role: str | None = None,
    hover: str | None = None,
) -> PlotTrace:
    """A bar trace coloured (and patterned) by its semantic ``role``."""
    trace: PlotTrace = {"type": "bar", "name": name, "x": list(x), "y": list(y)}
    if role is not None:
        trace["marker"] = role_marker(role)
    if hover is not None:
        trace["hovertemplate"] = hover
    return trace


def line(
    x: Sequence[float] | Sequence[str],
    y: Sequence[float] | Sequence[str],
    *,
    name: str,
    role: str | None = None,
    dash: str | None = None,
    mode: str = "lines",
    hover: str | None = None,
    marker: dict[str, Any] | None = None,  # extra marker style (symbol, size) for ``mode="markers"``
) -> PlotTrace:
    """A line (or ``mode="markers"``) trace coloured by its semantic ``role``.

    >>> line([0, 1], [1, 2], name="E[tokens]", dash="dot")["line"]
    {'dash': 'dot'}
    >>> line([0.5], [2], name="you", role="rejected", mode="markers", marker={"size": 9})["marker"]
    {'color': '#D55E00', 'size': 9}
    """
    trace: PlotTrace = {"type": "scatter", "mode": mode, "name": name, "x": list(x), "y": list(y)}
    style = ({"color": COLORS[role]} if role else {}) | ({"dash": dash} if dash else {}) | (marker or {})
    if style:
        trace["line" if "lines" in mode else "marker"] = style
    if hover is not None:
        trace["hovertemplate"] = hover
    return trace


def plural(n: int, word: str, many: str | None = None) -> str:
    """A count in words for a caption, its thousands grouped: ``1 round``, ``2,000 rounds``; ``many`` spells an
    irregular plural.

    >>> plural(1, "round"), plural(0, "token"), plural(3, "target pass", "target passes"), plural(2000, "draft")
    ('1 round', '0 tokens', '3 target passes', '2,000 drafts')
    """
    return f"{n:,} {word if n == 1 else many or word + 's'}"


def rounded(values: Sequence[float], digits: int = 12) -> list[float]:
    """Values rounded for the page: 12 decimals hide float noise (0.6499999999999999) and nothing a chart shows.

    >>> rounded([0.6499999999999999, 1 / 3], 6)
    [0.65, 0.333333]
    """
    return [round(v, digits) for v in values]


def with_pattern(trace: PlotTrace, shape: str) -> PlotTrace:
    """Add a bar fill pattern, the second cue besides colour, to a trace whose role has none of its own.

    >>> with_pattern(bar(["a"], [1.0], name="n", role="accepted"), ".")["marker"]["pattern"]
    {'shape': '.'}
    """
    trace.setdefault("marker", {})["pattern"] = {"shape": shape}
    return trace


def probability_bars(data: Sequence[PlotTrace]) -> Figure:
    """Grouped bars per token on a 0..1 probability axis: the frame of every one-position chart."""
    return figure(data, layout(x_title="token", y_title="probability", y_range=[0, 1], barmode="group"))


def pair_figure(
    labels: Sequence[str],
    p: Sequence[float],  # [vocab] target
    q: Sequence[float],  # [vocab] draft
    overlap: Sequence[float],  # [vocab] min(p, q)
    residual: Sequence[float],  # [vocab] normalize(max(0, p - q))
) -> Figure:
    """Grouped bars for one position: target p, draft q, the accepted mass min(p, q) and the residual.

    Drawn by the Verify and Correct pages alike, so it lives here rather than in either page's module.
    """
    pct = "%{y:.3f}<extra></extra>"
    hover_residual = "residual(%{x}) = %{y:.3f}<extra>drawn only after a rejection</extra>"
    return probability_bars(
        [
            bar(labels, p, name="target p", role="target", hover=f"p(%{{x}}) = {pct}"),
            bar(labels, q, name="draft q", role="draft", hover=f"q(%{{x}}) = {pct}"),
            bar(labels, overlap, name="min(p, q): accepted", role="overlap", hover=f"min(p, q) = {pct}"),
            bar(labels, residual, name="residual: corrections", role="residual", hover=hover_residual),
        ]
    )
