"""The Drafters page's handlers (web/drafters.py): every control moves its figure, the lossy rule shows its
distance, the published table's predictions are Eq. 1. JSON safety and Plotly validity of every handler's example
are checked for all pages in tests/test_web.py."""

from __future__ import annotations

import json
from typing import Any

import pytest

from specdec_core import theory, web


def call(name: str, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(web.call(name, json.dumps(args)))
    return result


def test_compare_controls_each_move_the_figures() -> None:
    base = call("drafters.compare", passage="repetitive", drafter="lookup", gamma=4, tokens=64, seed=0)
    positions = base["figures"]["positions"]["data"]
    assert [t["name"] for t in positions] == ["draft model (bigram)", "prompt lookup", "independent heads"]
    assert all(len(t["x"]) == 4 for t in positions)
    # Speculation length: one point per draft position.
    longer = call("drafters.compare", passage="repetitive", drafter="lookup", gamma=6, tokens=64, seed=0)
    assert all(len(t["x"]) == 6 for t in longer["figures"]["positions"]["data"])
    # Drafter: the chosen one is drawn wider and its numbers fill the tiles.
    heads = call("drafters.compare", passage="repetitive", drafter="heads", gamma=4, tokens=64, seed=0)
    widths = [t["line"]["width"] for t in heads["figures"]["positions"]["data"]]
    assert widths == [2, 2, 4] and [t["line"]["width"] for t in positions] == [2, 4, 2]
    row = next(r for r in heads["table"] if r["drafter"] == "heads")
    assert heads["metrics"]["tokens-per-pass"] == pytest.approx(row["tokens-per-pass"], abs=1e-11)
    # Passage and seed change the runs.
    other = call("drafters.compare", passage="ordinary", drafter="lookup", gamma=4, tokens=64, seed=0)
    reseeded = call("drafters.compare", passage="repetitive", drafter="lookup", gamma=4, tokens=64, seed=1)
    assert other["figures"]["passes"]["data"][0]["y"] != base["figures"]["passes"]["data"][0]["y"]
    assert reseeded["figures"]["passes"]["data"][0]["y"] != base["figures"]["passes"]["data"][0]["y"]


def test_lookup_and_heads_cost_no_draft_calls_and_every_drafter_is_lossless() -> None:
    """Only the draft model runs a model of its own: lookup copies, and heads run inside the target's pass."""
    result = call("drafters.compare", passage="repetitive", drafter="model", gamma=4, tokens=64, seed=0)
    rows = {r["drafter"]: r for r in result["table"]}
    assert rows["lookup"]["draft-calls-per-token"] == rows["heads"]["draft-calls-per-token"] == 0.0
    assert rows["model"]["draft-calls-per-token"] > 0
    assert all(r["lossless"] for r in rows.values())
    assert rows["lookup"]["rounds_with_drafts"] < rows["lookup"]["rounds"]  # some rounds found no match
    assert "".join(text for text, _ in result["sample"])  # the first continuation, token by token


def test_typical_accepts_more_and_sits_above_zero_distance() -> None:
    m = call("drafters.typical", epsilon=0.01, delta=0.02, gamma=4, tokens=160, seed=0)["metrics"]
    assert m["accept-rate-typical"] > m["accept-rate-exact"]
    assert m["tv-distance"] > 0.1  # exact, not sampled: no noise to clear
    assert m["tv-distance-exact"] < 1e-12


def test_typical_knobs_move_the_figures() -> None:
    a = call("drafters.typical", epsilon=0.01, delta=0.02, gamma=4, tokens=64, seed=0)
    b = call("drafters.typical", epsilon=0.2, delta=0.5, gamma=4, tokens=64, seed=0)
    assert a["figures"]["law"]["data"][1]["y"] != b["figures"]["law"]["data"][1]["y"]
    assert a["figures"]["positions"]["data"][1]["y"] != b["figures"]["positions"]["data"][1]["y"]
    assert a["figures"]["positions"]["data"][0]["y"] == b["figures"]["positions"]["data"][0]["y"]  # exact: same


def test_first_token_chart_names_each_bar_by_its_own_word() -> None:
    """The law chart's categories are the words alone, with no rank before them ("1. ▁and" tilted into its
    neighbours on a phone): eight, all distinct (a category axis would merge two equal names into one bar)."""
    for seed in range(4):
        law = call("drafters.typical", epsilon=0.05, delta=0.1, gamma=4, tokens=64, seed=seed)["figures"]["law"]
        target, lossy = law["data"]
        assert target["x"] == lossy["x"] and len(set(target["x"])) == len(target["x"]) == 8
        assert not any(name[0].isdigit() and ". " in name for name in target["x"]), target["x"]


def test_published_predictions_are_equation_1() -> None:
    rows = call("drafters.published")["rows"]
    with_alpha = [r for r in rows if r["alpha"] is not None]
    assert len(with_alpha) >= 4
    for r in with_alpha:
        assert r["predicted"] == pytest.approx(theory.expected_tokens(r["alpha"], r["gamma"]), abs=1e-11)
    assert all(r["predicted"] is None for r in rows if r["alpha"] is None)


@pytest.mark.parametrize(
    ("name", "args", "error", "match"),
    [
        ("drafters.compare", {"passage": "poem"}, ValueError, "passage"),
        ("drafters.compare", {"drafter": "oracle"}, ValueError, "drafter"),
        ("drafters.compare", {"gamma": 0}, ValueError, "gamma"),
        ("drafters.compare", {"tokens": 10**6}, ValueError, "tokens"),
        ("drafters.typical", {"epsilon": "0.1"}, TypeError, "epsilon"),
        ("drafters.typical", {"delta": 2}, ValueError, "delta"),
    ],
)
def test_bad_arguments_are_named(name: str, args: dict[str, Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        web.call(name, json.dumps(args))
