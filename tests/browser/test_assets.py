"""Checks on the page-side sources that need no browser."""

from __future__ import annotations

import re
from pathlib import Path

from specdec_core.web import plot

ASSETS = Path(__file__).resolve().parents[2] / "site_assets"


def test_css_token_colours_match_the_figure_palette() -> None:
    """Tokens on the page and series in the charts use one palette: lab.css --sd-NAME == plot.COLORS[NAME]."""
    css = dict(re.findall(r"--sd-([a-z]+):\s*(#[0-9A-Fa-f]{6});", (ASSETS / "css" / "lab.css").read_text("utf-8")))
    for role, colour in plot.COLORS.items():
        assert css.get(role, "").upper() == colour.upper(), role
