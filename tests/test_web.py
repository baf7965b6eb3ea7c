"""The handler registry the browser and the build hook call: JSON in, JSON-safe dicts out."""

from __future__ import annotations

import importlib
import inspect
import json
import math
import pkgutil
import sys
from collections import defaultdict
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import specdec_core
from specdec_core import web

P = [0.4, 0.35, 0.25]
Q = [0.2, 0.2, 0.6]


def _figures(result: dict[str, Any]) -> list[dict[str, Any]]:
    found = [result["figure"]] if "figure" in result else []
    return found + list(result.get("figures", {}).values())


def _walk_numbers(value: Any) -> list[float]:
    if isinstance(value, dict):
        return [x for item in value.values() for x in _walk_numbers(item)]
    if isinstance(value, list):
        return [x for item in value for x in _walk_numbers(item)]
    return [value] if isinstance(value, float) else []


def test_every_handler_has_an_example() -> None:
    assert set(web.EXAMPLES) == set(web.HANDLERS)


def test_pages_names_the_modules_that_register_each_prefix() -> None:
    # Every module of the package is imported first: one that registers handlers but is missing from PAGES would
    # otherwise never be imported, and its handlers would be missing without a word.
    for module in pkgutil.iter_modules(web.__path__):
        importlib.import_module(f"{web.__name__}.{module.name}")
    registered: dict[str, set[str]] = defaultdict(set)
    for name, fn in web.HANDLERS.items():
        registered[name.partition(".")[0]].add(fn.__module__.rpartition(".")[2])
    assert {prefix: set(modules) for prefix, modules in web.PAGES.items()} == registered


def test_a_call_imports_its_own_page_and_no_other() -> None:
    """In a fresh copy of the package (its sys.modules entries set aside, then put back): importing it imports no
    page, a page's first call imports that page alone, and reading HANDLERS imports every page."""

    def mine(name: str) -> bool:
        return name == "specdec_core.web" or name.startswith("specdec_core.web.")

    pages = {f"specdec_core.web.{module}" for modules in web.PAGES.values() for module in modules}
    args = {name: json.dumps(web.EXAMPLES[name]) for name in ("playground.run", "home.run")}
    names = set(web.HANDLERS)
    saved = {name: module for name, module in sys.modules.items() if mine(name)}
    for name in saved:
        del sys.modules[name]
    try:
        fresh = importlib.import_module("specdec_core.web")
        assert fresh is not web
        assert pages & set(sys.modules) == set()
        json.loads(fresh.call("playground.run", args["playground.run"]))
        assert pages & set(sys.modules) == {"specdec_core.web.playground"}
        json.loads(fresh.call("home.run", args["home.run"]))
        assert pages & set(sys.modules) == {"specdec_core.web.playground", "specdec_core.web.home"}
        assert set(fresh.HANDLERS) == names
        assert pages <= set(sys.modules)
    finally:
        for name in [name for name in sys.modules if mine(name)]:
            del sys.modules[name]
        sys.modules.update(saved)
        specdec_core.web = web


@pytest.mark.parametrize("name", sorted(web.HANDLERS))
def test_handler_output_is_json_safe(name: str) -> None:
    text = web.call(name, json.dumps(web.EXAMPLES[name]))
    result = json.loads(text)
    assert isinstance(result, dict)
    assert all(math.isfinite(x) for x in _walk_numbers(result))
    # JSON.parse in the browser rejects NaN/Infinity tokens; the text must not contain them.
    json.loads(text, parse_constant=lambda token: pytest.fail(f"{name} emitted {token}"))


@pytest.mark.numpy
@pytest.mark.parametrize("name", sorted(web.HANDLERS))
def test_handler_figures_validate_with_plotly(name: str) -> None:
    import plotly.graph_objects as go  # native only, like numpy (plotly needs it)

    result = json.loads(web.call(name, json.dumps(web.EXAMPLES[name])))
    for fig in _figures(result):
        go.Figure(fig)  # raises ValueError on any unknown property or bad value


@pytest.mark.parametrize("name", sorted(web.HANDLERS))
def test_an_axis_of_pieces_says_what_the_space_mark_is(name: str) -> None:
    """A category axis whose labels are byte-level BPE pieces ("\N{LOWER ONE EIGHTH BLOCK}and") says in its title
    that the mark is a space: a reader of the Drafters or Sampling page has not seen the Draft page's note."""
    mark = "\N{LOWER ONE EIGHTH BLOCK}"
    result = json.loads(web.call(name, json.dumps(web.EXAMPLES[name])))
    for fig in _figures(result):
        for trace in fig["data"]:
            axis = "xaxis" + trace.get("xaxis", "x")[1:]
            labels = [x for x in trace.get("x") or [] if isinstance(x, str)]
            if any(mark in x for x in labels):
                title = fig["layout"].get(axis, {}).get("title", {}).get("text", "")
                assert f"{mark} = a space" in title, (name, axis, title)


@pytest.mark.parametrize("name", sorted(web.HANDLERS))
def test_handler_metrics_are_numbers(name: str) -> None:
    result = json.loads(web.call(name, json.dumps(web.EXAMPLES[name])))
    for metric, value in result.get("metrics", {}).items():
        assert isinstance(value, int | float) and not isinstance(value, bool), metric


def test_unknown_handler_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown handler 'nope'; known: .*verify\.pair"):
        web.call("nope", "{}")


def test_args_must_be_a_json_object() -> None:
    with pytest.raises(TypeError, match="must be a JSON object"):
        web.call("verify.pair", "[1, 2]")


def test_unexpected_argument_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="nonsense"):
        web.call("verify.pair", json.dumps({"p": P, "q": Q, "nonsense": 1}))


def test_non_finite_results_are_refused_with_their_path() -> None:
    with pytest.raises(ValueError, match=r'at \["metrics"\]\["x"\]\[1\]: inf'):
        web.dumps({"metrics": {"x": [1.0, math.inf]}}, where="test")


def test_registering_a_name_twice_is_an_error() -> None:
    with pytest.raises(ValueError, match="already registered"):
        web.handler("verify.pair", example={})(lambda: {})


# Bad input, for every handler -------------------------------------------------------------------------------
# Whatever a page (or a hand-edited request) sends, a handler answers with its result or with a TypeError or
# ValueError that names the argument: never a KeyError, an operator error or a hang. Work is capped by the
# handlers' own ranges, so these inputs (each far outside any range or of the wrong type) stay cheap.

_BAD_VALUES: list[object] = [
    "0.1",  # a number as a string
    True,  # a bool where a number or a list belongs
    None,
    {"x": 1},
    [],
    [math.nan],
    ["x", "y"],
    math.nan,
    math.inf,
    -math.inf,
    1e300,
    -1e300,
    10**30,  # an int no float range reaches
    -(10**30),
    -1,
    -0.5,
]


_ARGUMENTS = [
    (name, param) for name in sorted(web.HANDLERS) for param in inspect.signature(web.HANDLERS[name]).parameters
]


@pytest.mark.parametrize(("name", "param"), _ARGUMENTS)
@settings(max_examples=8, deadline=None, derandomize=True)
@given(value=st.sampled_from(_BAD_VALUES))
def test_every_handler_names_the_argument_it_refuses(name: str, param: str, value: object) -> None:
    """One argument of a handler's example replaced by a bad value: the handler either copes (and its result is
    JSON-safe) or raises TypeError / ValueError whose message names that argument."""
    try:
        result = web.HANDLERS[name](**{**web.EXAMPLES[name], param: value})
    except (TypeError, ValueError) as err:
        assert param in str(err), f"{name}({param}={value!r}) raised {type(err).__name__} not naming it: {err}"
        return
    web.dumps(result, where=name)  # a value it accepted must still give finite JSON
