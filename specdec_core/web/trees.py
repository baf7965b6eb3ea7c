"""The Token trees page (docs/trees.md): a tree of drafts verified in one target pass, played round by round.

``trees.round`` plays tree rounds (``multidraft.tree_round``) on one of two pairs, every round from the same
context: ``models.agreement_pair(alpha)`` (the same p and q at every position, where the full-tree theory of
``multidraft.tree_expected_tokens`` holds exactly) or the n-gram pair on a fixed prompt. Round i is drawn with
``random.Random(seed * 1_000_003 + i)``, so a Run in chunks and a shared link reproduce the same rounds, and the
page sends the tallies back to go on. Every round starts at the same context, so the first token each round emits
must follow p at that context: counted and tested with ``stats.goodness_of_fit`` (the n-gram pair's tokens are
grouped into its most likely ones and "other", so that each cell expects enough counts).

``trees.budget`` compares, on the agreement pair, tokens per target pass against the nodes scored per pass for a
chain (k = 1) and full trees, and a static full tree against a best-first (dynamic) tree with the same node budget.

Non-goals: continuing generation across rounds (the Playground does), the cost in time of scoring more nodes
(the Cost page).
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from functools import lru_cache
from typing import Any

from .. import models, multidraft, stats
from . import handler
from .args import check_choice, check_flag, check_int, check_like, check_number, check_seed
from .plot import ALPHA, COLORS, GAMMA, Figure, PlotTrace, figure, layout, line, plural, rounded

PAIRS = ("agreement", "ngram")
PROMPT = "It is a truth universally acknowledged, that a single man in possession of a good"
MAX_K, MAX_DEPTH = 4, 6
MAX_ROUNDS = 200  # per call; the page asks for chunks
MIN_ROUNDS = 100  # rounds before the exactness check gives a verdict
TOP_CELLS = 15  # the n-gram pair's first-token cells: its most likely tokens, then "other"
SHOW_LABELS = 40  # label the tree's nodes with their tokens up to this many nodes
MAX_DRAWN = 300  # a bigger tree is drawn in its top levels and along the walk
MASK_NODES = 40  # the attention mask shows the root and at most this many nodes
_STRIDE = 1_000_003

#: The state's shape (``args.check_like``): the tallies of the rounds played so far.
_SHAPE: dict[str, Any] = {
    "rounds": 0,
    "emitted": 0,
    "accepted": 0,
    "drafted": 0,
    "counts": (TOP_CELLS + 1 + 8, 0),  # first emitted token per cell
    "settings": None,  # [pair, alpha, k, depth, replacement, seed] the tallies belong to: compared, never used
}


@lru_cache(maxsize=16)
def _agreement(alpha: float) -> models.Pair:
    return models.agreement_pair(alpha)


@lru_cache(maxsize=1)
def _ngram() -> tuple[models.Pair, tuple[int, ...]]:
    pair = models.ngram_pair()
    return pair, tuple(pair.encode(PROMPT))


def _setup(pair: str, alpha: float) -> tuple[models.Pair, tuple[int, ...], list[float], list[int]]:
    """The pair, the context every round starts from, p there, and the token of each goodness-of-fit cell."""
    if pair == "agreement":
        chosen = _agreement(alpha)
        p = chosen.target.probs([])
        return chosen, (), p, list(range(len(p)))
    chosen, context = _ngram()
    p = chosen.target.probs(list(context))
    top = sorted(range(len(p)), key=p.__getitem__, reverse=True)[:TOP_CELLS]
    return chosen, context, p, top


def _cells(p: list[float], top: list[int]) -> list[float]:
    """p grouped into the cells: one per token in ``top``, then the rest together when there is a rest."""
    kept = [p[t] for t in top]
    return kept if len(top) == len(p) else [*kept, max(0.0, 1.0 - math.fsum(kept))]


def _label(pair: models.Pair, token: int) -> str:
    word = pair.vocab[token]
    return word.replace("\N{LOWER ONE EIGHTH BLOCK}", " ")


# --8<-- [start:trees_round]
@handler(
    "trees.round",
    example={"pair": "agreement", "alpha": 0.7, "k": 2, "depth": 3, "replacement": True, "seed": 0, "rounds": 20},
)
def play(
    pair: str = "agreement",
    alpha: float = 0.7,
    k: int = 2,
    depth: int = 3,
    replacement: bool = True,
    seed: int = 0,
    rounds: int = 1,
    state: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Play ``rounds`` tree rounds after those in ``state``; return the tallies, the last round and its figures.

    A state whose settings differ from these is dropped: the tallies would mix two experiments.
    """
    name = check_choice(pair, "pair", PAIRS)
    a, kk = check_number(alpha, "alpha", 0, 1), check_int(k, "k", 1, MAX_K)
    d, s = check_int(depth, "depth", 1, MAX_DEPTH), check_seed(seed)
    n, repl = check_int(rounds, "rounds", 1, MAX_ROUNDS), check_flag(replacement, "replacement")
    chosen, context, p, top = _setup(name, a)
    settings = [name, a, kk, d, repl, s]
    tally = _fresh(len(_cells(p, top)), settings) if state is None else _checked(state, settings, len(_cells(p, top)))
    cell_of = {t: i for i, t in enumerate(top)}
    tree = None
    for _ in range(n):
        rng = random.Random(s * _STRIDE + tally["rounds"])
        tree = multidraft.tree_round(chosen.target, chosen.draft, context, kk, d, rng, replacement=repl)
        tally["rounds"] += 1
        tally["emitted"] += len(tree.tokens)
        tally["accepted"] += tree.accepted
        tally["drafted"] += tree.nodes_scored
        tally["counts"][cell_of.get(tree.tokens[0], len(top))] += 1
    if tree is None:  # cannot happen: check_int made n >= 1
        raise ValueError("rounds must be at least 1")
    metrics = _metrics(tally, _cells(p, top), name, p, chosen, kk, d, repl)
    return {
        "state": tally,
        "metrics": metrics,
        "verdict": _verdict(metrics),
        "explain": _explain(tree, chosen, tally["rounds"]),
        "tokens": [_label(chosen, t) for t in tree.tokens],
        "figures": {"tree": tree_figure(tree, chosen), "mask": mask_figure(tree, chosen)},
    }


# --8<-- [end:trees_round]


def _fresh(cells: int, settings: list[Any]) -> dict[str, Any]:
    return {"rounds": 0, "emitted": 0, "accepted": 0, "drafted": 0, "counts": [0] * cells, "settings": settings}


def _checked(state: object, settings: list[Any], cells: int) -> dict[str, Any]:
    check_like(state, _SHAPE, "state")
    if not isinstance(state, dict):  # check_like refused anything else already
        raise TypeError("state must be an object")
    if state["settings"] != settings or len(state["counts"]) != cells:
        return _fresh(cells, settings)
    if any(not isinstance(c, int) or c < 0 for c in state["counts"]) or sum(state["counts"]) != state["rounds"]:
        raise ValueError("state counts must be non-negative ints summing to its rounds")
    return {key: (list(v) if isinstance(v, list) else v) for key, v in state.items()}


def _metrics(
    tally: dict[str, Any],
    cells: list[float],
    pair: str,
    p: list[float],
    chosen: models.Pair,
    k: int,
    d: int,
    repl: bool,
) -> dict[str, Any]:
    """Measured rates, the goodness of fit of the first tokens, and (agreement pair) the full-tree theory."""
    n = tally["rounds"]
    metrics: dict[str, Any] = {
        "rounds": n,
        "tokens-emitted": tally["emitted"],
        "tokens-per-pass": tally["emitted"] / n,
        "accept-rate": tally["accepted"] / tally["drafted"] if tally["drafted"] else 0.0,
        "nodes-per-pass": tally["drafted"] / n,
        "nodes-full-tree": multidraft.full_tree_nodes(k, d),
    }
    fit = stats.goodness_of_fit(tally["counts"], cells)
    metrics |= {"tv-distance": fit["tv-distance"], "tv-noise": fit["tv-noise"], "p-value": fit["p-value"]}
    if n >= MIN_ROUNDS:
        metrics["exact"] = fit["exact"]
    if pair == "agreement":
        q = chosen.draft.probs([])
        accept = float(multidraft.multidraft_acceptance(p, q, k, replacement=repl))
        metrics["level-acceptance-theory"] = round(accept, 12)
        metrics["tokens-per-pass-theory"] = multidraft.tree_expected_tokens(accept, d)
    return metrics


def _verdict(metrics: dict[str, Any]) -> dict[str, str]:
    """The exactness check in words; no verdict before MIN_ROUNDS rounds."""
    n = metrics["rounds"]
    if "exact" not in metrics:
        return {"state": "thin", "text": f"too few rounds yet ({n} of at least {MIN_ROUNDS})"}
    p = metrics["p-value"]
    if metrics["exact"]:
        return {"state": "consistent", "text": f"\N{CHECK MARK} first tokens consistent with the target (p = {p:.2f})"}
    return {"state": "inconsistent", "text": f"\N{BALLOT X} first tokens not the target's (p = {p:.1e})"}


def _explain(tree: multidraft.TreeRound, pair: models.Pair, number: int) -> list[str]:
    """The round's verification in words, one line per level the walk checked, then what was emitted. When i.i.d.
    siblings drew the same token, the first line says so: they share one node, so the tree has fewer nodes than
    draws (a level still lists every candidate, repeats included, since each is checked in turn)."""
    draws = sum(len(kids) for kids in tree.candidates)
    shared = ""
    if draws > tree.nodes_scored:
        shared = f" from {draws} draws (siblings that drew the same token share a node)"
    lines = [
        f"Round {number}: the draft built a tree of {plural(tree.nodes_scored, 'node')}{shared}; "
        "one target pass scored all of them."
    ]
    node = 0
    for level, verdict in enumerate(tree.checks, start=1):
        kids = tree.candidates[node]
        words = ", ".join(f"“{_label(pair, tree.nodes[c].token)}”" for c in kids)
        head = f"Level {level}: {plural(len(kids), 'candidate')} ({words}); "
        if verdict.accepted is None:
            rejected_all = {1: "it was rejected", 2: "both rejected"}.get(len(kids), f"all {len(kids)} rejected")
            lines.append(head + f"{rejected_all}, so the walk stopped here.")
            break
        node = kids[verdict.accepted]
        rejected = f"{plural(verdict.accepted, 'candidate')} rejected, then " if verdict.accepted else ""
        lines.append(
            head + f"{rejected}candidate {verdict.accepted + 1} “{_label(pair, tree.nodes[node].token)}” accepted."
        )
    final = tree.nodes[-1]
    source = "the last residual" if tree.ended_with == "correction" else "the target's row after the accepted leaf"
    lines.append(f"{tree.ended_with.capitalize()} “{_label(pair, final.token)}” drawn from {source}.")
    words = " ".join(f"“{_label(pair, t)}”" for t in tree.tokens)
    lines.append(f"Emitted {plural(len(tree.tokens), 'token')} from one pass: {words}.")
    return lines


# Figures ---------------------------------------------------------------------------------------------------------

#: Fate -> (legend name, colour role, marker symbol): the symbol is the second cue besides colour.
FATES: dict[str, tuple[str, str, str]] = {
    "context": ("context (root)", "target", "square"),
    "accepted": ("accepted", "accepted", "circle"),
    "rejected": ("rejected", "rejected", "x"),
    "never checked": ("never checked", "discarded", "circle-open"),
    "correction": ("correction", "correction", "diamond"),
    "bonus": ("bonus", "bonus", "star"),
}


def _shown(tree: multidraft.TreeRound) -> list[int]:
    """The nodes drawn: all of a small tree; of a big one, the levels that fit MAX_DRAWN, then only the walk
    (the path, the candidates it checked and the final node)."""
    if len(tree.nodes) <= MAX_DRAWN:
        return [node.index for node in tree.nodes]
    per_level = Counter(node.depth for node in tree.nodes)
    level, total = 0, 0
    while total + per_level.get(level + 1, 0) <= MAX_DRAWN and level < tree.nodes[-1].depth:
        level, total = level + 1, total + per_level.get(level + 1, 0)
    keep = {node.index for node in tree.nodes if node.depth <= level}
    for n in [0, *tree.path]:
        keep.update(tree.candidates[n])
    keep.update([*tree.path, len(tree.nodes) - 1])
    return sorted(keep)


def _positions(tree: multidraft.TreeRound, shown: list[int]) -> dict[int, float]:
    """A tidy layout: leaves one row apart in drawing order, each parent centred on its children."""
    kids: dict[int, list[int]] = {n: [] for n in shown}
    for n in shown[1:]:
        kids[tree.nodes[n].parent].append(n)
    y: dict[int, float] = {}
    row = 0

    def place(n: int) -> None:
        nonlocal row
        if not kids[n]:
            y[n], row = float(row), row + 1
            return
        for c in kids[n]:
            place(c)
        y[n] = (y[kids[n][0]] + y[kids[n][-1]]) / 2

    place(0)
    return y


def tree_figure(tree: multidraft.TreeRound, pair: models.Pair) -> Figure:
    """The drafted tree: depth across, one marker per node coloured and shaped by its fate, the path bold."""
    shown = _shown(tree)
    y = _positions(tree, shown)
    x = {n: float(tree.nodes[n].depth) for n in shown}
    # Each edge leaves its parent straight up or down, then runs level into the child: a label to the right of its
    # node is never crossed (a slanted edge ran through the labels of nodes with two children).
    edge_x: list[float | None] = []
    edge_y: list[float | None] = []
    for n in shown[1:]:
        parent = tree.nodes[n].parent
        edge_x += [x[parent], x[parent], x[n], None]
        edge_y += [y[parent], y[n], y[n], None]
    path = [0, *tree.path, len(tree.nodes) - 1]
    path_x, path_y = [x[0]], [y[0]]
    for parent, n in itertools.pairwise(path):
        path_x += [x[parent], x[n]]
        path_y += [y[n], y[n]]
    data: list[PlotTrace] = [
        {"type": "scatter", "mode": "lines", "name": "drafted edges", "x": edge_x, "y": edge_y, "hoverinfo": "skip"}
        | {"line": {"color": COLORS["discarded"], "width": 1}, "showlegend": False},
        line(path_x, path_y, name="verified path", role="accepted")
        | {"line": {"color": COLORS["accepted"], "width": 5}, "hoverinfo": "skip"},
    ]
    labelled = len(shown) <= SHOW_LABELS
    # A node whose edge runs level out of it (a child on its own row) has its label above that edge.
    level = {tree.nodes[n].parent for n in shown[1:] if y[n] == y[tree.nodes[n].parent]}
    for fate, (name, role, symbol) in FATES.items():
        members = [tree.nodes[n] for n in shown if tree.nodes[n].fate == fate]
        if not members:
            continue
        words = [_label(pair, node.token) if node.token >= 0 else "context" for node in members]
        trace = line([x[m.index] for m in members], [y[m.index] for m in members], name=name, role=role)
        where = ["top right" if m.index in level else "middle right" for m in members]
        trace |= {"mode": "markers+text" if labelled else "markers", "text": words, "textposition": where}
        trace |= {"hovertemplate": f"%{{text}}<extra>{name}</extra>"}
        trace["marker"] = {"color": COLORS[role], "symbol": symbol, "size": 13 if labelled else 7, "line": {"width": 2}}
        if symbol in ("x", "circle-open"):
            trace["marker"]["line"]["color"] = COLORS[role]
        data.append(trace)
    # A title and a subtitle: one line ran ~190 px past a phone's screen. Above the legend's three rows on a phone
    # (~60 px) they need a top margin of their own.
    title = (
        None if len(shown) == len(tree.nodes) else f"{len(shown) - 2:,} of {tree.nodes_scored:,} drafted nodes drawn"
    )
    axes = layout(
        x_title="depth in the tree (0: the context)",
        height=int(max(300, min(640, 22 * (max(y.values()) + 1) + 120))) if labelled else 520,
        xaxis={"dtick": 1, "range": [-0.3, max(x.values()) + (1.2 if labelled else 0.5)]},
        title=title,
        subtitle="deeper levels only along the walk",
        yaxis={"visible": False, "range": [max(y.values()) + 0.6, -0.6]},
        margin={"l": 16} | ({"t": 124} if title else {}),
    )
    return figure(data, axes)


def mask_figure(tree: multidraft.TreeRound, pair: models.Pair) -> Figure:
    """The tree-attention mask as a heatmap: row i may attend to column j when j is i or one of its ancestors.

    Cells sit at integer positions with the node names as tick labels, and the y range is given reversed (row 0 on
    top), so the build-time sketch draws the same picture as Plotly.
    """
    size = min(tree.nodes_scored, MASK_NODES) + 1
    mask = multidraft.attention_mask(tree, nodes=size - 1)
    names = ["context"] + [f"{i}:{_label(pair, tree.nodes[i].token)}" for i in range(1, size)]
    cut = size - 1 < tree.nodes_scored
    cells = list(range(size))
    trace: PlotTrace = {
        "type": "heatmap",
        "z": mask,
        "x": cells,
        "y": cells,
        "zmin": 0,
        "zmax": 1,
        "colorscale": [[0, "rgba(140,140,140,0.12)"], [1, COLORS["target"]]],
        "showscale": False,
        "xgap": 1,
        "ygap": 1,
        "hovertemplate": "node %{y} sees node %{x}: %{z}<extra></extra>",
    }
    labelled = size <= 24
    ticks = {"tickvals": cells, "ticktext": names, "showticklabels": labelled, "showgrid": False, "zeroline": False}
    axes = layout(
        title="Tree-attention mask",
        subtitle=f"the first {size - 1} of {tree.nodes_scored:,} nodes" if cut else None,
        height=420,
        xaxis=ticks | {"title": {"text": "attends to (key)"}, "range": [-0.5, size - 0.5], "tickangle": -60},
        yaxis=ticks | {"title": {"text": "node (query)"}, "range": [size - 0.5, -0.5]},
        # A title and no legend: the top margin a legend under the title would need stood empty (~50 px).
        margin={"l": 96 if labelled else 56, "b": 96 if labelled else 48, "t": 66 if cut else 44},
    )
    return figure([trace], axes)


# The budget charts -------------------------------------------------------------------------------------------------

BUDGET_ROUNDS = 150  # rounds per configuration and call
MAX_BUDGET = 400  # nodes: the second chart's static trees stop before a full tree would score more
CHAIN_LENGTHS = (1, 2, 3, 4, 6, 8, 12, 16)


def _simulate(
    pair: models.Pair, k: int, depth: int, repl: bool, rounds: int, seed: int, budget: int | None = None
) -> tuple[float, float]:
    """Mean nodes scored and tokens emitted per pass over ``rounds`` tree rounds."""
    nodes = tokens = 0
    for i in range(rounds):
        rng = random.Random(seed * _STRIDE + i)
        tree = multidraft.tree_round(pair.target, pair.draft, (), k, depth, rng, replacement=repl, budget=budget)
        nodes += tree.nodes_scored
        tokens += len(tree.tokens)
    return nodes / rounds, tokens / rounds


@lru_cache(maxsize=8)
def _full_trees(alpha: float, repl: bool, rounds: int, seed: int) -> dict[int, list[tuple[float, float]]]:
    """The budget chart's full trees, k = 2..4 at depths 1..3: they do not depend on the reader's k and depth, so
    moving those reuses them (most of a call's time). Callers only read the result."""
    pair = _agreement(alpha)
    return {k: [_simulate(pair, k, level, repl, rounds, seed) for level in range(1, 4)] for k in range(2, MAX_K + 1)}


@handler("trees.budget", example={"alpha": 0.7, "k": 2, "depth": 3, "replacement": True, "seed": 0, "rounds": 20})
def budget(
    alpha: float = 0.7, k: int = 2, depth: int = 3, replacement: bool = True, seed: int = 0, rounds: int = BUDGET_ROUNDS
) -> dict[str, Any]:
    """Chain against trees at equal nodes scored per pass, and a static against a dynamic tree per budget."""
    a, kk = check_number(alpha, "alpha", 0, 1), check_int(k, "k", 1, MAX_K)
    d, s = check_int(depth, "depth", 1, MAX_DEPTH), check_seed(seed)
    n, repl = check_int(rounds, "rounds", 10, 1000), check_flag(replacement, "replacement")
    pair = _agreement(a)
    p, q = pair.target.probs([]), pair.draft.probs([])
    chain = [
        (float(g), multidraft.tree_expected_tokens(float(multidraft.multidraft_acceptance(p, q, 1)), g))
        for g in CHAIN_LENGTHS
    ]
    trees = _full_trees(a, repl, n, s)
    static, dynamic, sizes = [], [], []
    capped = None  # the nodes of the first full tree left out, if the reader's depth asks for one past MAX_BUDGET
    for level in range(1, d + 1):
        size = multidraft.full_tree_nodes(kk, level)
        if size > MAX_BUDGET:
            capped = size
            break
        sizes.append(size)
        static.append(trees[kk][level - 1] if kk in trees and level <= 3 else _simulate(pair, kk, level, repl, n, s))
        dynamic.append(_simulate(pair, kk, multidraft.MAX_DEPTH, repl, n, s, budget=size))
    return {
        "figures": {"budget": _budget_figure(chain, trees, a), "dynamic": _dynamic_figure(sizes, static, dynamic, kk)},
        "metrics": {"alpha": a, "k": kk, "rounds": n, "seed": s},
        "capped": None if capped is None else {"depth": len(sizes) + 1, "nodes": capped, "max": MAX_BUDGET},
    }


def _budget_figure(
    chain: list[tuple[float, float]], trees: dict[int, list[tuple[float, float]]], alpha: float
) -> Figure:
    styles = {2: ("circle", "dash"), 3: ("diamond", "dot"), 4: ("square", "dashdot")}
    data = [
        line(
            [x for x, _ in chain],
            rounded([y for _, y in chain]),
            name=f"chain (k = 1, {ALPHA} = {alpha:.2f}), theory: {GAMMA} = nodes",
            role="target",
            mode="lines+markers",
        )
        | {"marker": {"symbol": "triangle-up", "size": 9, "color": COLORS["target"]}},
    ]
    for branch, points in trees.items():
        symbol, dash = styles[branch]
        trace = line(
            [round(x, 3) for x, _ in points],
            [round(y, 4) for _, y in points],
            name=f"full trees, k = {branch}, depth 1-3 (simulated)",
            mode="lines+markers",
        )
        trace |= {"marker": {"symbol": symbol, "size": 10}, "line": {"dash": dash}}
        data.append(trace)
    axes = layout(
        x_title="nodes scored per target pass",
        y_title="tokens per target pass",
    )
    return figure(data, axes)


def _dynamic_figure(
    sizes: list[int], static: list[tuple[float, float]], dynamic: list[tuple[float, float]], k: int
) -> Figure:
    """Tokens per pass at each budget k + ... + k^d: the full tree of depth d, and best first (EAGLE-2's idea)."""
    budgets = [str(size) for size in sizes]
    data = [
        line(
            budgets,
            [round(y, 4) for _, y in static],
            name=f"static full tree (k = {k})",
            role="target",
            mode="lines+markers",
        )
        | {"marker": {"symbol": "circle", "size": 10, "color": COLORS["target"]}},
        line(
            budgets,
            [round(y, 4) for _, y in dynamic],
            name="dynamic: best path probability first",
            role="bonus",
            mode="lines+markers",
            dash="dash",
        )
        | {"marker": {"symbol": "star", "size": 12, "color": COLORS["bonus"]}},
    ]
    # The range is given (half a category either side), so the first-paint sketch and Plotly frame it alike.
    axes = layout(
        x_title="node budget per target pass",
        y_title="tokens per target pass",
        xaxis={"type": "category", "range": [-0.5, len(budgets) - 0.5]},
    )
    return figure(data, axes)
