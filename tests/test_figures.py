"""Figure builders: plain, theme-neutral dicts, and the palette shared with the page's CSS."""

from __future__ import annotations

import pytest

from specdec_core import figures


def test_layout_is_theme_neutral() -> None:
    """The page sets backgrounds and font colours from the Material palette; a figure must not fix them."""
    fig = figures.pair_figure(["a", "b"], [0.5, 0.5], [0.25, 0.75], [0.25, 0.5], [1.0, 0.0])
    layout = fig["layout"]
    for key in ("paper_bgcolor", "plot_bgcolor", "font", "template"):
        assert key not in layout
    assert "gridcolor" not in layout["xaxis"] and "gridcolor" not in layout["yaxis"]


def test_every_series_has_a_second_cue_besides_colour() -> None:
    fig = figures.pair_figure(["a", "b"], [0.5, 0.5], [0.25, 0.75], [0.25, 0.5], [1.0, 0.0])
    shapes = [trace["marker"].get("pattern", {}).get("shape", "") for trace in fig["data"]]
    assert len(set(shapes)) == len(shapes)


@pytest.mark.numpy
def test_builders_validate_with_plotly() -> None:
    import plotly.graph_objects as go  # native only, like numpy (plotly needs it)

    line = figures.line([0, 1], [1, 2], name="l", role="target", dash="dot")
    go.Figure(figures.figure([line], figures.layout(title="t")))
    go.Figure(figures.pair_figure(["a"], [1.0], [1.0], [1.0], [1.0]))
