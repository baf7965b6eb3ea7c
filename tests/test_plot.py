"""The shared figure primitives (web/plot.py): plain, theme-neutral dicts, and the palette shared with the CSS."""

from __future__ import annotations

import json
from typing import Any

import pytest

from specdec_core import web
from specdec_core.web import plot


def _figures(result: dict[str, Any]) -> list[dict[str, Any]]:
    found = [result["figure"]] if "figure" in result else []
    return found + list(result.get("figures", {}).values())


@pytest.mark.parametrize("name", sorted(web.HANDLERS))
def test_every_handler_figure_is_theme_neutral(name: str) -> None:
    """The page sets backgrounds and font colours from the Material palette; a figure must not fix them."""
    for fig in _figures(json.loads(web.call(name, json.dumps(web.EXAMPLES[name])))):
        layout = fig["layout"]
        for key in ("paper_bgcolor", "plot_bgcolor", "font", "template"):
            assert key not in layout, (name, key)
        for axis in ("xaxis", "yaxis"):
            assert "gridcolor" not in layout.get(axis, {}), (name, axis)


def test_every_patterned_role_has_its_own_second_cue() -> None:
    """Series stay distinct in grey scale: the roles with a pattern each get a different one."""
    shapes = [
        plot.bar(["a"], [1.0], name=role, role=role)["marker"].get("pattern", {}).get("shape", "")
        for role in plot.PATTERNS
    ]
    assert len(set(shapes)) == len(shapes)


def test_figure_trace_type_is_not_the_engines_trace() -> None:
    from specdec_core import engine

    assert plot.PlotTrace is not engine.Trace
    assert "Trace" not in plot.__all__


def test_line_takes_marker_style_and_hover() -> None:
    trace = plot.line([1], [2], name="you", role="rejected", mode="markers", marker={"size": 9}, hover="h")
    assert trace["marker"] == {"color": plot.COLORS["rejected"], "size": 9}
    assert trace["hovertemplate"] == "h"


@pytest.mark.numpy
def test_primitives_validate_with_plotly() -> None:
    import plotly.graph_objects as go  # native only, like numpy (plotly needs it)

    traces = [
        plot.line([0, 1], [1, 2], name="l", role="target", dash="dot"),
        plot.bar(["a", "b"], [0.5, 0.5], name="q", role="draft", hover="%{y}"),
    ]
    go.Figure(plot.figure(traces, plot.layout(title="t", x_title="x", y_title="y", y_range=[0, 1], barmode="group")))
