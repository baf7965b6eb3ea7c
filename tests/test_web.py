"""The handler registry the browser and the build hook call: JSON in, JSON-safe dicts out."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from typing import Any

import pytest

from specdec_core import acceptance_rate, residual, web

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
def test_handler_metrics_are_numbers(name: str) -> None:
    result = json.loads(web.call(name, json.dumps(web.EXAMPLES[name])))
    for metric, value in result.get("metrics", {}).items():
        assert isinstance(value, int | float) and not isinstance(value, bool), metric


def test_pair_worked_example_matches_the_paper() -> None:
    """p = [.4, .35, .25], q = [.2, .2, .6]: beta = .2 + .2 + .25 = .65; residual = [.2, .15, 0] / .35."""
    result = json.loads(web.call("distributions.pair", json.dumps({"p": P, "q": Q})))
    assert result["metrics"]["accept-rate"] == pytest.approx(0.65, abs=1e-12)
    assert result["metrics"]["reject-rate"] == pytest.approx(0.35, abs=1e-12)
    expected = [float(Fraction(4, 7)), float(Fraction(3, 7)), 0.0]
    assert result["residual"] == pytest.approx(expected, abs=1e-12)


def test_pair_blend_moves_the_draft_toward_the_target() -> None:
    """blend = .5 gives q' = (q + p) / 2 = [.3, .275, .425]; beta and the residual follow from q'."""
    result = json.loads(web.call("distributions.pair", json.dumps({"p": P, "q": Q, "blend": 0.5})))
    draft = [(a + b) / 2 for a, b in zip(P, Q, strict=True)]
    assert result["q"] == pytest.approx(draft, abs=1e-12)
    assert result["metrics"]["accept-rate"] == pytest.approx(acceptance_rate(P, draft), abs=1e-12)
    assert result["residual"] == pytest.approx(residual(P, draft), abs=1e-12)


def test_pair_full_blend_accepts_everything() -> None:
    result = json.loads(web.call("distributions.pair", json.dumps({"p": P, "q": Q, "blend": 1})))
    assert result["metrics"]["accept-rate"] == pytest.approx(1.0, abs=1e-12)
    assert result["metrics"]["tv-distance"] == pytest.approx(0.0, abs=1e-12)


def test_pair_rejects_bad_input_by_name() -> None:
    with pytest.raises(ValueError, match="blend"):
        web.call("distributions.pair", json.dumps({"p": P, "q": Q, "blend": 2}))
    with pytest.raises(ValueError, match="same length"):
        web.call("distributions.pair", json.dumps({"p": P, "q": [0.5, 0.5]}))
    with pytest.raises(ValueError, match="labels"):
        web.call("distributions.pair", json.dumps({"p": P, "q": Q, "labels": ["a"]}))


def test_unknown_handler_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown handler 'nope'; known: .*distributions\.pair"):
        web.call("nope", "{}")


def test_args_must_be_a_json_object() -> None:
    with pytest.raises(TypeError, match="must be a JSON object"):
        web.call("distributions.pair", "[1, 2]")


def test_unexpected_argument_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="nonsense"):
        web.call("distributions.pair", json.dumps({"p": P, "q": Q, "nonsense": 1}))


def test_non_finite_results_are_refused_with_their_path() -> None:
    with pytest.raises(ValueError, match=r'at \["metrics"\]\["x"\]\[1\]: inf'):
        web.dumps({"metrics": {"x": [1.0, math.inf]}}, where="test")


def test_registering_a_name_twice_is_an_error() -> None:
    with pytest.raises(ValueError, match="already registered"):
        web.handler("distributions.pair", example={})(lambda: {})
