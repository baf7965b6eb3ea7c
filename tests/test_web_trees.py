"""The Token trees page's handlers (web/trees.py): tree rounds in chunks, their record, and the budget charts."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from specdec_core import multidraft, theory, web


def call(name: str, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(web.call(name, json.dumps(args)))
    return result


def play(**args: Any) -> dict[str, Any]:
    return call("trees.round", **args)


def test_chunked_run_equals_one_run() -> None:
    settings = {"pair": "agreement", "alpha": 0.6, "k": 3, "depth": 2, "replacement": False, "seed": 5}
    whole = play(**settings, rounds=60)
    state = None
    for _ in range(3):
        part = play(**settings, rounds=20, state=state)
        state = part["state"]
    assert part["state"] == whole["state"]
    assert part["metrics"] == whole["metrics"]
    assert part["explain"] == whole["explain"]


def test_changed_settings_start_new_tallies() -> None:
    first = play(pair="agreement", alpha=0.6, k=2, depth=2, rounds=30)
    again = play(pair="agreement", alpha=0.6, k=3, depth=2, rounds=10, state=first["state"])
    assert again["metrics"]["rounds"] == 10


def test_more_candidates_raise_tokens_per_pass() -> None:
    """Theory: sum_{j<=3} A_k^j grows with k. Measured over 200 rounds: each within 5 standard errors of it
    (tokens per pass lies in 1..4, so its standard deviation is at most 1.5 and 5 SE <= 5 * 1.5 / sqrt(200) = .53),
    and k = 4 beats k = 1 by far more than that at alpha = .5 (2.51 against 1.88 in theory).
    """
    rows = {k: play(pair="agreement", alpha=0.5, k=k, depth=3, rounds=200, seed=3)["metrics"] for k in (1, 2, 4)}
    expected = [rows[k]["tokens-per-pass-theory"] for k in (1, 2, 4)]
    assert expected == sorted(expected) and expected[0] == pytest.approx(theory.expected_tokens(0.5, 3))
    for m in rows.values():
        assert abs(m["tokens-per-pass"] - m["tokens-per-pass-theory"]) < 5 * 1.5 / 200**0.5
    assert rows[4]["tokens-per-pass"] > rows[1]["tokens-per-pass"] + 0.3


def test_first_tokens_pass_the_exactness_check() -> None:
    result = play(pair="agreement", alpha=0.4, k=2, depth=2, rounds=200, seed=1)
    m = result["metrics"]
    assert m["exact"] == 1 and result["verdict"]["state"] == "consistent"
    assert 0 <= m["tv-distance"] <= 3 * m["tv-noise"]
    thin = play(pair="agreement", alpha=0.4, k=2, depth=2, rounds=5, seed=1)
    assert "exact" not in thin["metrics"] and thin["verdict"]["state"] == "thin"


def test_step_explains_each_level_and_the_emitted_tokens() -> None:
    result = play(pair="agreement", alpha=0.7, k=2, depth=3, rounds=1, seed=2)
    lines = result["explain"]
    assert lines[0].startswith("Round 1: the draft built a tree of")
    assert any(line.startswith("Level 1: ") for line in lines)
    assert lines[-2].startswith(("Correction", "Bonus")) and lines[-1].startswith("Emitted ")
    assert len(result["tokens"]) == int(lines[-1].split()[1])


def test_the_first_line_says_when_identical_draws_share_a_node() -> None:
    """i.i.d. siblings that draw the same token share one node (the tree is a trie), so a level may list a token
    twice while the tree has fewer nodes than draws: the first line then gives both counts. Without replacement
    candidates are distinct, and the line never speaks of sharing."""
    shared = 0
    for seed in range(8):
        for repl in (True, False):
            lines = play(pair="agreement", alpha=0.9, k=4, depth=2, rounds=1, seed=seed, replacement=repl)["explain"]
            level_1 = lines[1].split("(", 1)[1].split(")", 1)[0].split(", ")
            nodes = int(lines[0].split(" tree of ")[1].split()[0])
            if "share a node" in lines[0]:
                draws = int(lines[0].split(" from ")[1].split()[0])
                assert repl and draws > nodes
                shared += 1
            else:
                assert len(set(level_1)) == len(level_1)  # no repeat went unexplained
    assert shared > 0  # alpha .9 concentrates q: some of the 8 i.i.d. rounds repeat a token


def test_tree_figure_marks_every_fate_with_a_colour_and_a_symbol() -> None:
    fig = play(pair="agreement", alpha=0.5, k=3, depth=2, rounds=1, seed=4)["figures"]["tree"]
    fates = {
        trace["name"]: trace["marker"]["symbol"] for trace in fig["data"] if trace.get("mode", "").startswith("markers")
    }
    assert "accepted" in fates or "rejected" in fates
    assert len(set(fates.values())) == len(fates)  # the symbol tells the fates apart without colour
    assert fig["data"][1]["name"] == "verified path"


def _segments(trace: dict[str, Any]) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """A lines trace's segments: consecutive points, a None ending a run."""
    points = list(zip(trace["x"], trace["y"], strict=True))
    return [(a, b) for a, b in itertools.pairwise(points) if None not in a and None not in b]


@pytest.mark.parametrize(
    "settings",
    [
        {"k": 1, "depth": 4, "seed": 0},  # a chain: each node's one child on its own row
        {"k": 2, "depth": 3, "seed": 1},
        {"k": 3, "depth": 2, "seed": 4},  # three children: the middle one on the parent's row
        {"k": 3, "depth": 2, "seed": 2, "replacement": False},
        {"k": 4, "depth": 2, "seed": 7},
    ],
)
def test_no_edge_of_the_tree_drawing_runs_through_a_label(settings: dict[str, Any]) -> None:
    """A label sits to the right of its node, at its height ("middle right") or above it ("top right"). Edges go
    straight up or down out of a parent and level into the child, so only a level segment can cross a label: one
    at a node's height that passes to the right of it. For every labelled round drawn, no level segment of an edge
    or of the verified path does so for a node labelled at its height, and each segment is level or upright."""
    checked = 0
    for rounds in range(1, 9):
        fig = play(pair="agreement", alpha=0.6, rounds=rounds, **settings)["figures"]["tree"]
        segments = [s for t in fig["data"] if t.get("mode") == "lines" for s in _segments(t)]
        labelled = [t for t in fig["data"] if t.get("mode") == "markers+text"]
        if not labelled:
            continue
        for (x0, y0), (x1, y1) in segments:
            assert x0 == x1 or y0 == y1, ((x0, y0), (x1, y1))
        at_height = [
            (x, y, word)
            for t in labelled
            for x, y, word, where in zip(t["x"], t["y"], t["text"], t["textposition"], strict=True)
            if where == "middle right"
        ]
        for (x0, y0), (x1, y1) in segments:
            if y0 != y1:
                continue
            low, high = sorted((x0, x1))
            crossed = [word for x, y, word in at_height if y == y0 and low <= x < high]
            assert not crossed, (rounds, crossed, (x0, y0), (x1, y1))
        checked += 1
    assert checked >= 4


def test_big_trees_are_drawn_in_part_and_the_mask_capped() -> None:
    result = play(pair="agreement", alpha=0.7, k=4, depth=6, replacement=False, rounds=1)
    assert result["metrics"]["nodes-per-pass"] == multidraft.full_tree_nodes(4, 6) == 5460
    assert "drafted nodes drawn" in result["figures"]["tree"]["layout"]["title"]["text"]
    # Each title line fits a phone (one line of 71 characters ran ~190 px past a 390 px screen). The second line is
    # a subtitle: plotly.js 4.1.1 drew a two-line title ("<br>") with its first line half above the figure.
    for name in ("tree", "mask"):
        title = result["figures"][name]["layout"]["title"]
        lines = [title["text"], title["subtitle"]["text"]]
        assert all("<br>" not in line and len(line) <= 40 for line in lines), lines
    mask = result["figures"]["mask"]["data"][0]["z"]
    assert len(mask) == 41 and all(sum(row) >= 1 for row in mask)


def test_ngram_round_runs_on_the_prompt() -> None:
    result = play(pair="ngram", k=2, depth=2, rounds=3, seed=0)
    m = result["metrics"]
    assert m["rounds"] == 3 and 1 <= m["tokens-per-pass"] <= 3
    assert "tokens-per-pass-theory" not in m  # the i.i.d. theory does not hold for text
    assert len(result["state"]["counts"]) == 16  # the 15 likeliest first tokens and "other"


def test_budget_chart_puts_the_chain_on_eq_1() -> None:
    result = call("trees.budget", alpha=0.8, k=2, depth=3, rounds=30)
    chain = result["figures"]["budget"]["data"][0]
    assert chain["y"][:3] == pytest.approx([theory.expected_tokens(0.8, g) for g in (1, 2, 3)])
    dynamic = result["figures"]["dynamic"]["data"]
    assert dynamic[0]["x"] == ["2", "6", "14"] == dynamic[1]["x"]
    assert result["capped"] is None  # k = 2, depth 3: 14 nodes, under the cap


def test_budget_says_where_the_static_trees_stop() -> None:
    """At k = 4 a full tree of depth 5 scores 1,364 nodes, past the 400-node cap: the second chart stops at depth
    4 (340 nodes) and the result says so, for the note under it, rather than drawing less than asked in silence."""
    result = call("trees.budget", alpha=0.7, k=4, depth=6, rounds=10)
    assert result["figures"]["dynamic"]["data"][0]["x"] == ["4", "20", "84", "340"]
    assert result["capped"] == {"depth": 5, "nodes": 1364, "max": 400}


@pytest.mark.numpy
def test_figures_validate_with_plotly_for_both_pairs() -> None:
    import plotly.graph_objects as go

    for args in ({"pair": "ngram", "k": 4, "depth": 5}, {"pair": "agreement", "k": 1, "depth": 1, "alpha": 1.0}):
        for fig in play(**args, rounds=1)["figures"].values():
            go.Figure(fig)


@pytest.mark.parametrize(
    ("args", "error", "name"),
    [
        ({"pair": "words"}, ValueError, "pair"),
        ({"k": 5}, ValueError, "k"),
        ({"depth": 0}, ValueError, "depth"),
        ({"alpha": "high"}, TypeError, "alpha"),
        ({"rounds": 201}, ValueError, "rounds"),
        ({"state": {"rounds": 1}}, ValueError, "state"),
    ],
)
def test_bad_arguments_name_themselves(args: dict[str, Any], error: type[Exception], name: str) -> None:
    with pytest.raises(error, match=name):
        play(**args)
