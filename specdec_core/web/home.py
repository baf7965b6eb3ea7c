"""The home page's 3D lab (docs/index.md): a few seeded rounds drawn as rounds x draft positions x the verify test.

One run, one set of numbers: ``home.run`` plays ``rounds`` rounds of an ``engine.SpeculativeRun`` on
``models.agreement_pair(alpha)`` and a fixed speculation length, and the chart, the table, the summary and the
metric cards all describe the rounds completed so far in that run (the replay shows it growing). The theory beside
each card is Leviathan et al. (2023), Eq. 1 and Theorem 3.8, whose i.i.d. assumption this pair meets exactly.

Non-goals: long runs (the Playground and Bonus pages simulate thousands of rounds); context-dependent models.
"""

from __future__ import annotations

import random
from typing import Any

from .. import engine, models, policies, steps, theory
from . import handler
from .args import check_flag, check_int, check_number, check_seed
from .plot import ALPHA, COLORS, GAMMA, TIMES, Figure, PlotTrace, figure, plural

#: How each kind of token is drawn: legend name, colour and marker symbol (the second cue besides colour).
#: "drafted" is a proposal not checked yet. Only circles, squares and diamonds: WebGL draws 3D markers from font
#: glyphs, and the cross glyphs are missing from some system fonts. A rejection (open square) sits under its
#: correction (filled square).
KINDS: dict[str, tuple[str, str, str]] = {
    "drafted": ("drafted, not yet checked", COLORS["draft"], "circle-open"),
    "accepted": ("accepted: u below the line", COLORS["accepted"], "circle"),
    "rejected": ("rejected: u above the line", COLORS["rejected"], "square-open"),
    "discarded": ("discarded after the rejection", COLORS["discarded"], "diamond-open"),
    "correction": ("correction from the residual", COLORS["correction"], "square"),
    "bonus": ("bonus from the target", COLORS["bonus"], "diamond"),
}

#: Height of sampled tokens (corrections and bonuses): above the unit interval where u and min(1, p/q) live.
SAMPLED_Z = 1.15

#: Most rounds one run may hold: the chart draws every token of every round.
MAX_ROUNDS = 64


def _generate(alpha: float, gamma: int, seed: int, rounds: int) -> tuple[list[steps.Round], list[str]]:
    """The first ``rounds`` rounds of the seeded run (the same rounds whatever comes after them)."""
    # A round emits at most gamma + 1 tokens, so this budget never shortens one of them.
    pair, budget = models.agreement_pair(alpha), rounds * (gamma + 1)
    run = engine.SpeculativeRun(pair, policies.FixedPolicy(gamma), max_tokens=budget, rng=random.Random(seed))
    for _ in range(rounds):
        run.advance(1)  # one round: each emits at least one token
    return run.trace.rounds, list(pair.vocab)


def _points(run: list[steps.Round], words: list[str], pending: bool) -> list[dict[str, Any]]:
    """One chart point per token: kind, round x, position y (1-based), height z, stem height and hover text."""
    points: list[dict[str, Any]] = []

    def add(kind: str, r: int, position: int, z: float, stem: float | None, text: str) -> None:
        points.append({"kind": kind, "x": r, "y": position, "z": z, "stem": stem, "text": text})

    for r, round_ in enumerate(run, start=1):
        for pos in round_.positions:
            where = f"round {r}, position {pos.index + 1}: “{words[pos.token]}”"
            if pending and r == len(run):
                add("drafted", r, pos.index + 1, 0.0, None, f"{where} drafted, waiting for the target's check")
            elif pos.u is None:
                add("discarded", r, pos.index + 1, 0.0, None, f"{where} discarded: it followed a rejection")
            else:
                stem, sign = min(1.0, pos.ratio), "<" if pos.outcome == "accepted" else "≥"
                text = f"{where} {pos.outcome}: u = {pos.u:.3f} {sign} min(1, p/q) = {stem:.3f}"
                add(pos.outcome, r, pos.index + 1, round(pos.u, 6), round(stem, 6), text)
        if not (pending and r == len(run)):
            word = words[round_.final_token]
            if round_.ended_with == "correction":
                text = f"round {r}, position {round_.accepted + 1}: correction “{word}” drawn from norm(max(0, p - q))"
            else:
                text = f"round {r}: all {round_.gamma} accepted; bonus “{word}” drawn from the target's next row"
            add(round_.ended_with, r, round_.accepted + 1, SAMPLED_Z, None, text)
    return points


def _sentence(round_: steps.Round, words: list[str], r: int, pending: bool) -> str:
    """One round in words, the way the Step button explains it."""
    gamma = round_.gamma
    if pending:
        them = "it" if gamma == 1 else "them all at once"
        return f"Round {r}: drafted {gamma}; one target pass is about to check {them}."
    if round_.ended_with == "bonus":
        accepted = "it" if gamma == 1 else f"all {gamma}"
        return f"Round {r}: drafted {gamma}, accepted {accepted}, then the bonus “{words[round_.final_token]}”."
    rejected = next(pos for pos in round_.positions if pos.outcome == "rejected")
    tail = f", discarded the {round_.discarded} after it" if round_.discarded else ""
    return (
        f"Round {r}: drafted {gamma}, accepted {round_.accepted}, rejected “{words[rejected.token]}”{tail}; "
        f"the correction “{words[round_.final_token]}” takes its place."
    )


def _metrics(done: list[steps.Round], alpha: float, gamma: int, cost: float) -> dict[str, float]:
    """The completed rounds' numbers beside the closed forms; only the closed forms before any round."""
    expected = theory.expected_tokens(alpha, gamma)
    metrics = {
        "target-calls-saved-theory": expected - 1.0,
        "relative-latency-theory": 1.0 / theory.speedup(alpha, gamma, cost),
        "discarded-fraction-theory": theory.expected_discarded(alpha, gamma) / gamma,
        "tokens-per-pass-theory": expected,
        "speedup-theory": theory.speedup(alpha, gamma, cost),
        "target-passes": len(done),
    }
    if done:
        passes, emitted = len(done), sum(len(r.tokens) for r in done)
        time = passes + cost * gamma * passes  # in target passes: one per round plus gamma draft steps at c each
        metrics |= {
            # The sequential target calls one check replaces: tokens per pass minus the one a plain pass yields.
            "target-calls-saved": emitted / passes - 1.0,
            "relative-latency": time / emitted,
            "discarded-fraction": sum(r.discarded for r in done) / (gamma * passes),
            "tokens-per-pass": emitted / passes,
            "speedup": emitted / time,
            "tokens-emitted": emitted,
        }
    return {name: round(value, 12) for name, value in metrics.items()}


def _summary(done: list[steps.Round], gamma: int, alpha: float) -> str:
    """What the completed rounds did, in one sentence (a round still waiting for its check is not in it)."""
    n = len(done)
    head = f"{plural(n, 'round')} played, {GAMMA} = {gamma}, {ALPHA} = {alpha:g}"
    if not n:
        return f"{head}: nothing checked yet."
    corrected = sum(r.ended_with == "correction" for r in done)
    return (
        f"{head}: {gamma * n} drafted, {sum(r.accepted for r in done)} accepted, {corrected} rejected and "
        f"corrected, {sum(r.discarded for r in done)} discarded, {plural(n - corrected, 'bonus token')}; "
        f"{plural(sum(len(r.tokens) for r in done), 'token')} from {plural(n, 'target pass', 'target passes')}."
    )


def _footnote(metrics: dict[str, float]) -> str:
    """Under the cards: what they counted so far, and the speedup beside its closed form."""
    passes = int(metrics["target-passes"])
    if not passes:
        return "No round has been checked yet: the cards fill in as the target checks each round."
    counted = "round" if passes == 1 else f"{passes} rounds"
    speedup = f"speedup {metrics['speedup']:.2f}{TIMES} (theory {metrics['speedup-theory']:.2f}{TIMES})"
    return (
        f"Counted over the {counted} checked so far: {plural(int(metrics['tokens-emitted']), 'token')}, {speedup}. "
        "Theory assumes i.i.d. acceptance, as this model pair has (Leviathan et al. 2023, Eq. 1 and Theorem 3.8); "
        "a few rounds scatter around it."
    )


@handler("home.run", example={"gamma": 4, "alpha": 0.8, "cost": 0.05, "seed": 0, "rounds": 16})
def run(
    gamma: int = 4,  # speculation length: drafts per round
    alpha: float = 0.8,  # per-token acceptance rate: sum_x min(p(x), q(x)) at every position
    cost: float = 0.05,  # draft cost c: one draft step in units of one target pass
    seed: int = 0,
    rounds: int = 16,  # rounds in the run; the chart's round axis spans them all
    shown: int | None = None,  # rounds played so far (a replay's progress); None: all of them
    pending: bool = False,  # the last shown round is drafted but not yet checked (a replay's first half-step)
) -> dict[str, Any]:
    """A seeded run of speculative rounds, drawn in 3D, with the numbers of the rounds played so far."""
    g = check_int(gamma, "gamma", 1, 8)
    a = check_number(alpha, "alpha", 0.0, 1.0)
    c = check_number(cost, "cost", 0.0, 1.0)
    total = check_int(rounds, "rounds", 1, MAX_ROUNDS)
    n = total if shown is None else check_int(shown, "shown", 1, total)
    view, words = _generate(a, g, check_seed(seed), n)
    done = view[:-1] if check_flag(pending, "pending") else view
    table = [
        {"round": i, "drafts": [f"{words[pos.token]} ({pos.outcome})" for pos in r.positions]}
        | {"final": f"{words[r.final_token]} ({r.ended_with})", "emitted": len(r.tokens)}
        for i, r in enumerate(done, start=1)
    ]
    metrics = _metrics(done, a, g, c)
    return {
        "figure": _figure(_points(view, words, pending), rounds=total, gamma=g),
        "metrics": metrics,
        "footnote": _footnote(metrics),
        "summary": _summary(done, g, a),
        "latest": _sentence(view[-1], words, n, pending),
        "table": table,
    }


def _figure(points: list[dict[str, Any]], *, rounds: int, gamma: int) -> Figure:
    """Rounds x draft positions x the verify test, as one Plotly ``scatter3d`` scene.

    A checked proposal stands on a stem as high as min(1, p/q), its marker at its uniform u: it is accepted
    exactly when the marker sits below the stem's top, which is the verify step drawn to scale.
    """
    stems: dict[str, list[Any]] = {"x": [], "y": [], "z": []}
    for point in points:
        if point["stem"] is not None:
            stems["x"] += [point["x"], point["x"], None]
            stems["y"] += [point["y"], point["y"], None]
            stems["z"] += [0.0, point["stem"], None]
    line_style = {"color": COLORS["target"], "width": 5}
    data: list[PlotTrace] = [
        {"type": "scatter3d", "mode": "lines", "name": "min(1, p/q): the acceptance line", **stems}
        | {"line": line_style, "hoverinfo": "skip", "connectgaps": False}
    ]
    for kind, (name, colour, symbol) in KINDS.items():
        # A kind absent from the run keeps its legend entry through one point at null, which draws nothing: the
        # legend is the chart's key, and entries coming and going with a slider would move the others around.
        group = [point for point in points if point["kind"] == kind] or [{"text": ""}]
        marker = {"color": colour, "symbol": symbol, "size": 6 if kind == "discarded" else 7}
        data.append(
            {"type": "scatter3d", "mode": "markers", "name": name}
            | {key: [point.get(key) for point in group] for key in ("x", "y", "z", "text")}
            | {"hovertemplate": "%{text}<extra></extra>", "marker": marker, "showlegend": True}
        )
    return figure(data, _scene_layout(rounds, gamma))


def _scene_layout(rounds: int, gamma: int) -> dict[str, Any]:
    positions = list(range(1, gamma + 2))
    y_ticks: dict[str, Any] = {"tickvals": positions, "ticktext": [*map(str, positions[:-1]), "bonus"]}
    # No "0": the height's zero is the round axis's corner, where its "0" fell on round 1's label ("0₁").
    z_ticks: dict[str, Any] = {"tickvals": [0.5, 1, SAMPLED_Z], "ticktext": ["0.5", "1", "sampled"]}

    def axis(title: str, range_: list[float], **ticks: Any) -> dict[str, Any]:
        return {"showspikes": False, "title": {"text": title}, "range": range_, **ticks}

    return {
        "height": 500,
        "margin": {"l": 0, "r": 0, "t": 8, "b": 0},
        "legend": {"orientation": "h", "x": 0, "y": 1.0, "xanchor": "left", "yanchor": "bottom"},
        "uirevision": "lab3d",  # keeps the reader's camera when a slider redraws the scene
        "scene": {
            "xaxis": axis("round", [0.5, rounds + 0.5], dtick=1 if rounds <= 20 else 5),
            "yaxis": axis("draft position", [0.5, gamma + 1.5], **y_ticks),
            "zaxis": axis("u vs min(1, p/q)", [0, 1.25], **z_ticks),
            "aspectmode": "manual",
            "aspectratio": {"x": 2.0, "y": 1.0, "z": 0.75},
            "camera": {"eye": {"x": 1.32, "y": -1.815, "z": 0.825}, "center": {"x": 0, "y": 0, "z": -0.35}},
            "dragmode": "turntable",
        },
    }
