"""Checks on the page-side sources that need no browser: the palette, and site_assets/prebuild.py."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from specdec_core.web import plot

ASSETS = Path(__file__).resolve().parents[2] / "site_assets"


def test_css_token_colours_match_the_figure_palette() -> None:
    """Tokens on the page and series in the charts use one palette: tokens.css --sd-NAME == plot.COLORS[NAME]."""
    css = dict(re.findall(r"--sd-([a-z]+):\s*(#[0-9A-Fa-f]{6});", (ASSETS / "css" / "tokens.css").read_text("utf-8")))
    for role, colour in plot.COLORS.items():
        assert css.get(role, "").upper() == colour.upper(), role


# --- site_assets/prebuild.py: the placeholders it accepts and refuses -------------------------------------------


def load_prebuild() -> ModuleType:
    """A fresh copy of site_assets/prebuild.py (a script, not a package module)."""
    spec = importlib.util.spec_from_file_location("sd_prebuild", ASSETS / "prebuild.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def prebuild(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """prebuild.py with its project root moved to an empty folder, so pages can be written there."""
    module = load_prebuild()
    monkeypatch.setattr(module, "ROOT", tmp_path)
    monkeypatch.setattr(module, "DOCS", tmp_path / "docs")
    monkeypatch.setattr(module, "INITIAL", tmp_path / "site_assets" / "initial")
    (tmp_path / "docs").mkdir()
    return module


PLACEHOLDER = """# Verify

<div class="sd-widget" data-widget="pair">
<template data-sd-settings data-search-exclude>{"handler": "verify.pair", "args": {"blend": 0}}</template>
--8<-- "site_assets/initial/verify-1.html"
</div>
"""


def write_page(prebuild: ModuleType, text: str) -> Path:
    page: Path = prebuild.DOCS / "verify.md"
    page.write_text(text, encoding="utf-8")
    return page


def test_prebuild_accepts_a_placeholder_with_its_settings_and_include(prebuild: ModuleType) -> None:
    page = write_page(prebuild, PLACEHOLDER)
    [found] = prebuild.placeholders(page, {"pair"})
    assert (found.name, found.index, found.line, found.settings) == (
        "pair",
        1,
        3,
        {"handler": "verify.pair", "args": {"blend": 0}},
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ('--8<-- "site_assets/initial/verify-1.html"\n', ""),
            r'needs the line --8<-- "site_assets/initial/verify-1\.html"',
        ),
        (("verify-1.html", "verify-2.html"), r"it reads '--8<-- \"site_assets/initial/verify-2\.html\"'"),
        (('data-widget="pair"', 'data-widget="nosuch"'), r"no widget file site_assets/js/widgets/nosuch\.js"),
        (("<template data-sd-settings data-search-exclude>", "<template data-sd-settings>"), "needs its settings"),
        (('{"blend": 0}}', '{"blend": 0}'), "not valid JSON"),
        (('{"handler": "verify.pair", "args": {"blend": 0}}', "[1, 2]"), "must be a JSON object"),
        (("# Verify\n", '# Verify\n\n<script type="application/json">{}</script>\n'), "instant navigation"),
    ],
    ids=[
        "include-missing",
        "include-names-another-file",
        "unknown-widget",
        "no-settings",
        "bad-json",
        "not-an-object",
        "script",
    ],
)
def test_prebuild_refuses_a_broken_placeholder(prebuild: ModuleType, change: tuple[str, str], message: str) -> None:
    page = write_page(prebuild, PLACEHOLDER.replace(*change))
    with pytest.raises(prebuild.PrebuildError, match=message):
        prebuild.placeholders(page, {"pair"})


def test_prebuild_ignores_placeholders_inside_code_fences(prebuild: ModuleType) -> None:
    page = write_page(prebuild, "```html\n" + PLACEHOLDER.replace("verify-1", "elsewhere") + "```\n" + PLACEHOLDER)
    assert [w.line for w in prebuild.placeholders(page, {"pair"})] == [11]


def test_prebuild_names_includes_by_page_and_position(prebuild: ModuleType) -> None:
    (prebuild.DOCS / "guide").mkdir()
    assert prebuild.include_name(prebuild.DOCS / "verify.md", 2) == "site_assets/initial/verify-2.html"
    assert prebuild.include_name(prebuild.DOCS / "guide" / "trees.md", 1) == "site_assets/initial/guide/trees-1.html"
    assert prebuild.page_url(prebuild.DOCS / "index.md") == ""
    assert prebuild.page_url(prebuild.DOCS / "guide" / "trees.md") == "guide/trees/"


def test_prebuild_joins_the_stylesheets_in_cascade_order(prebuild: ModuleType) -> None:
    """docs/css/lab.css holds each file of site_assets/css once, in STYLESHEETS order, and nothing else is left."""
    stale = prebuild.DOCS / "css" / "tokens.css"
    stale.parent.mkdir()
    stale.write_text("old", encoding="utf-8")
    out = prebuild.stylesheet()
    assert out == prebuild.DOCS / "css" / "lab.css"
    assert sorted(p.name for p in out.parent.iterdir()) == ["lab.css"]
    text = out.read_text("utf-8")
    starts = [text.index((ASSETS / "css" / name).read_text("utf-8").rstrip()) for name in prebuild.STYLESHEETS]
    assert starts == sorted(starts) and len(set(starts)) == len(starts) == len(list((ASSETS / "css").iterdir()))


def test_prebuild_refuses_a_stylesheet_it_does_not_list(prebuild: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    assets = prebuild.ROOT / "site_assets"
    (assets / "css").mkdir(parents=True)
    for name in (*prebuild.STYLESHEETS, "extra.css"):
        (assets / "css" / name).write_text(f"/* {name} */", encoding="utf-8")
    monkeypatch.setattr(prebuild, "ASSETS", assets)
    with pytest.raises(prebuild.PrebuildError, match=r"holds components\.css, extra\.css, .*list each stylesheet once"):
        prebuild.stylesheet()


@pytest.mark.parametrize("code", ["assert x > 0", "doc = f.__doc__", "if __debug__:\n    pass"])
def test_prebuild_refuses_code_that_optimize_2_would_change(tmp_path: Path, code: str) -> None:
    """The browser's bytecode has no docstrings or asserts: code that reads them would behave differently there."""
    module = tmp_path / "m.py"
    module.write_text(f"x = 1\n{code}\n", encoding="utf-8")
    prebuild = load_prebuild()
    with pytest.raises(prebuild.PrebuildError, match="optimize=2"):
        prebuild.check_optimizable([(module, "specdec_core/m.py")])


def test_the_package_compiles_for_the_browser_unchanged() -> None:
    prebuild = load_prebuild()
    prebuild.check_optimizable(prebuild.package_files())


def test_prebuild_inert_json_survives_html_parsing() -> None:
    """The build-time result sits in a <template>: no character of it may start markup or an entity."""
    text = load_prebuild()._inert_json({"label": "<b>p & q</b>", "x": [1.5]})
    assert not set("<>&") & set(text)
    assert json.loads(text) == {"label": "<b>p & q</b>", "x": [1.5]}


# --- site_assets/search_math.py: Zensical's search index, math as symbols ----------------------------------------


def load_search_math() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sd_search_math", ASSETS / "search_math.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


A, B, G = plot.ALPHA, "\N{GREEK SMALL LETTER BETA}", plot.GAMMA


@pytest.mark.parametrize(
    ("tex", "text"),
    [
        (r"\min\left(1, \frac{p(x)}{q(x)}\right)", "min(1, (p(x))/(q(x)))"),
        (r"\frac{1 - \alpha^{\gamma+1}}{1 - \alpha}", f"(1 - {A}^({G}+1))/(1 - {A})"),
        (r"\tfrac{1}{2}\,\beta", f"1/2 {B}"),
        (r"x_{\gamma} \sim q", f"x_{G} ~ q"),
        (
            r"N = \text{accepted} + 1 \in \{1, 2, \dots, \gamma + 1\}",
            f"N = accepted + 1 \N{ELEMENT OF} {{1, 2, \N{HORIZONTAL ELLIPSIS}, {G} + 1}}",
        ),
        (r"\operatorname{norm}\big(\max(0, p - q)\big)", "norm(max(0, p - q))"),
        (r"\mathbb{E}[N] \le \gamma + 1", f"E[N] \N{LESS-THAN OR EQUAL TO} {G} + 1"),
        (r"\unknowncommand{x}", "unknowncommandx"),
        # A multi-line display (aligned, gathered) reads as one line: no environment names, breaks or "&".
        (
            r"\begin{aligned} \beta &= \sum_x q(x) \\ &= 1 \end{aligned}",
            f"{B} = \N{GREEK CAPITAL LETTER SIGMA}_x q(x) = 1",
        ),
        (r"\begin{gathered} x_i, \\ i = 1 \end{gathered}", "x_i, i = 1"),
        # As Zensical's index holds them: "&" escaped, and "<" too, which stays.
        (r"\begin{aligned} a &amp;= b \\ &amp;= c &lt; d \end{aligned}", "a = b = c &lt; d"),
    ],
)
def test_search_math_reads_the_pages_tex_as_symbols(tex: str, text: str) -> None:
    math = load_search_math()
    assert math.readable(tex) == text
    # In a page's text, inline and display math alike; the text around it stays as it was.
    assert math.plain_math(f"before \\({tex}\\) and \\[{tex}\\] after") == f"before {text} and {text} after"


def test_search_math_rewrites_only_titles_and_texts(tmp_path: Path) -> None:
    index = tmp_path / "search.json"
    items = [{"location": r"#a-\(x\)", "title": r"\(\gamma\) rows", "text": r"<p>as tall as \(\min(1, p/q)\)</p>"}]
    index.write_text(json.dumps({"config": {"lang": ["en"]}, "items": items}), "utf-8")
    assert load_search_math().rewrite(index) == 1
    out = json.loads(index.read_text("utf-8"))
    assert out["config"] == {"lang": ["en"]}
    assert out["items"] == [{"location": r"#a-\(x\)", "title": f"{G} rows", "text": "<p>as tall as min(1, p/q)</p>"}]
