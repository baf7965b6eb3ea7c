"""The Playground (docs/playground.md): speculative decoding on ``models.quality_pair``, played round by round.

A run is an ``engine.SpeculativeRun`` with a fixed speculation length on the 24-word pair. The handler keeps
nothing between calls: it returns the run's ``state`` (the engine's snapshot plus tallies of fixed size) and the
page sends it back, so a Run of 2,000 rounds is many short calls advancing one run. Changing the quality or gamma
mid-run goes on with the same random stream under the new settings.

The theory beside each measured number is exact for the rounds played: this pair's acceptance depends on the
previous word, so each round adds its law given its start word (``theory.markov_round_law``). Exactness is
tested per context (``stats.chain_fit``): under exactness the output is the target's Markov chain.

Non-goals: text models (the Draft and Verify pages use the n-gram pair); keeping the token history.
"""

from __future__ import annotations

import json
import math
import random
from functools import lru_cache
from typing import Any

from .. import engine, models, policies, stats, steps, theory
from ..distributions import total_variation
from . import handler
from .args import check_int, check_like, check_number, check_seed
from .plot import ALPHA, COLORS, GAMMA, Figure, PlotTrace, bar, figure, layout, line, plural, rounded

WORDS = models.QUALITY_WORDS
SIZE = len(WORDS)
START = WORDS.index(".")  # a run starts as after a full stop
MAX_GAMMA = 8
MAX_ROUNDS = 5000  # per call (the page asks for about 30 ms of rounds at a time)
WINDOW = 50  # rounds in the sliding draft acceptance rate and the "last rounds" metrics
POINTS = 300  # the window chart keeps a point every ``stride`` rounds, the stride doubling when this many are kept
MIN_TOKENS = 100  # emitted tokens before the exactness check gives a verdict
SHOW = 24  # rounds of this call returned for the token stream
_BUDGET = 10**12  # the engine's token budget: never reached, so it never shortens a round
_LAW = tuple[float, float, list[float]]  # E[accepted], E[accepted^2], P(accepted = k), given the start word

#: The state's shape (``args.check_like``): a tuple is a list of at most that many items like the one given.
_SHAPE: dict[str, Any] = {
    "run": None,  # the engine's snapshot: SpeculativeRun.restore checks it
    "settings": [0.0, 0],  # [quality, gamma] of the last round played
    "transitions": [[0] * SIZE for _ in range(SIZE)],  # [V][V]: after word c, word y was emitted this often
    "histogram": [0] * (MAX_GAMMA + 1),  # rounds by drafts accepted
    "expected_histogram": [0.0] * (MAX_GAMMA + 1),  # the same in expectation, given each round's start
    "sums": [0.0] * 3,  # over rounds, given the start: E[accepted], Var[accepted], E[drafts checked]
    "window": (WINDOW, [0, 0, 0.0]),  # the last rounds: [accepted, drafted, E[accepted]]
    "points": (POINTS, [0, 0.0, 0.0]),  # the window chart: [round, accepted / drafted, expected]
    "stride": 0,
    "changes": (8, [0, ""]),  # [round, label] where the settings changed
    "top": 0,  # the longest gamma played
}


@lru_cache(maxsize=32)
def _pair(quality: float) -> models.Pair:
    return models.quality_pair(quality)


@lru_cache(maxsize=32)
def _rows(quality: float | None = None) -> list[list[float]]:
    """[V][V]: the target's row after each word (``quality`` None), or the draft's at that quality."""
    pair = _pair(1.0 if quality is None else quality)
    return [(pair.target if quality is None else pair.draft).probs([t]) for t in range(SIZE)]


@lru_cache(maxsize=64)
def _law(quality: float, gamma: int) -> list[_LAW]:
    return theory.markov_round_law(_rows(), _rows(quality), gamma)


@lru_cache(maxsize=1)
def _stationary() -> list[float]:
    """How often the target visits each word in the long run: weights the previews before any round."""
    return theory.markov_stationary(_rows())


def _mix(visits: list[int], quality: float | None = None) -> list[float]:
    """The target's rows (or the draft's) averaged over the contexts the output followed: like with like."""
    n = sum(visits)
    weights = [v / n for v in visits] if n else _stationary()
    rows = _rows(quality)
    return [math.fsum(w * rows[c][y] for c, w in enumerate(weights)) for y in range(SIZE)]


# --- the run's state, as it travels to the page and back -----------------------------------------------------


def _fresh(seed: int, quality: float, gamma: int) -> tuple[dict[str, Any], engine.SpeculativeRun]:
    pair, policy = _pair(quality), policies.make_policy("fixed", gamma=gamma)
    # window=1: the pair is first-order Markov, the last word is all the models read.
    run = engine.SpeculativeRun(pair, policy, max_tokens=_BUDGET, rng=random.Random(seed), context=[START], window=1)
    empty = {key: [] if isinstance(like, tuple) else json.loads(json.dumps(like)) for key, like in _SHAPE.items()}
    return empty | {"run": run.snapshot(), "settings": [quality, gamma], "stride": 1}, run  # "top": 0, none played


def _restore(state: object, quality: float, gamma: int) -> tuple[dict[str, Any], engine.SpeculativeRun]:
    """Check the state the page sent back and rebuild its run, drafting gamma tokens on the quality's pair."""
    if not isinstance(state, dict):
        raise TypeError(f"state must be the state a previous call returned, got {type(state).__name__}")
    check_like(state, _SHAPE, "state")
    try:
        snapshot = {**state["run"], "policy": policies.make_policy("fixed", gamma=gamma).to_dict()}
        run = engine.SpeculativeRun.restore(_pair(quality), snapshot)
    except (TypeError, ValueError, OverflowError) as err:
        raise ValueError(f"state['run'] is not a run this page made: {err}") from None
    t = run.totals
    # Every round drafts, checks and emits at least one token: the rates below never divide by zero.
    if not (t.target_passes == sum(state["histogram"]) <= min(t.drafted, t.accepted + t.rejected, t.emitted)):
        raise ValueError("state['run'] and the state's tallies disagree")
    if not 1 <= state["stride"] <= 2**40:
        raise ValueError("state['stride'] must be between 1 and 2**40")
    # The tallies grow in place; the caller's dict stays as it was. The state is JSON data: a round trip through
    # the C encoder copies it in a fraction of deepcopy's time.
    return json.loads(json.dumps(state)), run


# --- playing -------------------------------------------------------------------------------------------------


def _play(run: engine.SpeculativeRun) -> steps.Round:
    """One round of the engine's run, taken out of its trace: the tallies keep what the page needs."""
    # The trace still keeps this call's tokens and events: at most MAX_ROUNDS rounds' worth, as every call rebuilds
    # the run from its snapshot.
    # --8<-- [start:playground_round]
    run.advance(1)  # one round (each emits at least one token): draft, one target pass, verify, correct or bonus
    return run.trace.rounds.pop()
    # --8<-- [end:playground_round]


def _tally(state: dict[str, Any], round_: steps.Round, start: int, law: list[_LAW]) -> None:
    """Add one round to the tallies, with its exact expectation given the word it started from."""
    mean, second, probs = law[start]
    for previous, token in zip([start, *round_.tokens], round_.tokens, strict=False):
        state["transitions"][previous][token] += 1
    state["histogram"][round_.accepted] += 1
    for k, pk in enumerate(probs):
        state["expected_histogram"][k] += pk
    sums = state["sums"]
    sums[0] += mean
    sums[1] += second - mean * mean
    sums[2] += mean + 1.0 - probs[round_.gamma]  # checked: the accepted drafts, and one rejected unless all pass
    window = state["window"] = [*state["window"][1 - WINDOW :], [round_.accepted, round_.gamma, mean]]
    played = sum(state["histogram"])
    if played % state["stride"] == 0:
        state["points"].append(_point(played, window))
        if len(state["points"]) == POINTS:  # keep every other point: the chart's resolution halves, not its size
            state["points"] = state["points"][1::2]
            state["stride"] *= 2


def _point(played: int, window: list[list[Any]]) -> list[Any]:
    drafted = max(1, sum(w[1] for w in window))
    return [played, round(sum(w[0] for w in window) / drafted, 6), round(sum(w[2] for w in window) / drafted, 6)]


def _advance(state: dict[str, Any], run: engine.SpeculativeRun, quality: float, gamma: int, rounds: int) -> list[Any]:
    """Play ``rounds`` rounds; return the last SHOW of them as (round number, round) pairs."""
    played, law = sum(state["histogram"]), _law(quality, gamma)
    if rounds and played and state["settings"] != [quality, gamma]:
        state["changes"] = [*state["changes"][-7:], [played, f"quality {quality:g}, {GAMMA} {gamma}"]]
    if rounds:
        state["settings"], state["top"] = [quality, gamma], max(state["top"], gamma)
    last, recent = state["run"]["context"][-1], list[tuple[int, steps.Round]]()
    for number in range(played + 1, played + rounds + 1):
        round_ = _play(run)
        _tally(state, round_, last, law)
        last = round_.tokens[-1]
        recent = [*recent[1 - SHOW :], (number, round_)]
    state["run"] = run.snapshot()
    return recent


# --8<-- [start:playground]
@handler("playground.run", example={"quality": 0.85, "gamma": 4, "cost": 0.05, "seed": 0, "rounds": 60})
def run(
    quality: float = 0.85,  # the draft is quality * p + (1 - quality) * uniform (models.quality_pair)
    gamma: int = 4,  # speculation length, 1..8
    cost: float = 0.05,  # draft cost c: one draft step in units of one target pass (only the speedup uses it)
    seed: int = 0,  # starts a new run (ignored when ``state`` continues one)
    rounds: int = 0,  # rounds to play now, at these settings
    state: dict[str, Any] | None = None,  # what the last call returned, to go on with that run
) -> dict[str, Any]:
    """Advance the run by ``rounds`` rounds; return its state, metrics, figures, token stream and verdict."""
    q = check_number(quality, "quality", 0.0, 1.0)
    g = check_int(gamma, "gamma", 1, MAX_GAMMA)
    c = check_number(cost, "cost", 0.0, 1.0)
    n = check_int(rounds, "rounds", 0, MAX_ROUNDS)
    state, engine_run = _fresh(check_seed(seed), q, g) if state is None else _restore(state, q, g)
    recent = _advance(state, engine_run, q, g, n)
    metrics = _rates(state, engine_run.totals, q, g, c)
    verdict = _verdict(metrics)
    return {
        "metrics": metrics,
        "figures": _figures(state, q, g, metrics),
        "verdict": verdict,
        "stream": [_stream(number, round_, q) for number, round_ in recent],
        "explanation": _explain(*recent[-1]) if recent else None,
        "state": state,
        "settings": {"quality": q, "gamma": g, "cost": c},
    }


# --8<-- [end:playground]


def _rates(state: dict[str, Any], totals: engine.Counters, quality: float, gamma: int, cost: float) -> dict[str, Any]:
    """Counts and rates with their exact theory for the rounds played; before any, a preview of the settings."""
    done, drafted, accepted, rejected = totals.target_passes, totals.drafted, totals.accepted, totals.rejected
    pi, law = _stationary(), _law(quality, gamma)
    mean_now = math.fsum(w * law[s][0] for s, w in enumerate(pi))  # E[accepted] per round in the long run
    checked_now = mean_now + 1.0 - math.fsum(w * law[s][2][gamma] for s, w in enumerate(pi))
    metrics: dict[str, Any] = {
        "rounds": done,
        "tokens-emitted": totals.emitted,
        "drafted": drafted,
        "accepted": accepted,
    }
    metrics |= {"rejected": rejected, "discarded": totals.discarded, "bonuses": totals.bonuses}
    # The alpha of Eq. 1 that gives this setting's exact tokens per pass: where the takeaway chart's star sits.
    metrics["alpha-effective"] = theory.per_token_alpha_from_tokens_per_pass(min(gamma + 1.0, 1 + mean_now), gamma)
    if not done:
        return metrics | {
            "accept-rate-theory": mean_now / gamma,
            "alpha-theory": mean_now / checked_now,
            "tokens-per-pass-theory": 1.0 + mean_now,
            "speedup-theory": (1.0 + mean_now) / (1.0 + gamma * cost),
        }
    expected, variance, checked = state["sums"]
    visits = [sum(row) for row in state["transitions"]]  # [V] tokens emitted after each word
    time = done + cost * drafted  # in target passes: one per round, plus c per draft step
    return (
        metrics
        | stats.chain_fit(state["transitions"], _rows())
        | {
            "accept-rate": accepted / drafted,
            "accept-rate-theory": expected / drafted,
            "accept-rate-sd": math.sqrt(variance) / drafted,
            "alpha": accepted / (accepted + rejected),  # only the checked drafts: discarded ones never were
            "alpha-theory": expected / checked if checked else 1.0,
            "tokens-per-pass": totals.emitted / done,
            "tokens-per-pass-theory": 1.0 + expected / done,
            "speedup": totals.emitted / time,
            "speedup-theory": (done + expected) / time,
            "tv-draft": round(total_variation(_mix(visits, quality), _mix(visits)), 6),
        }
        | _recent(state["window"], cost)
    )


def _recent(window: list[list[Any]], cost: float) -> dict[str, Any]:
    """The same rates over the last WINDOW rounds only: after a change of settings the whole-run numbers move
    slowly (they average every round so far), these show the new settings within WINDOW rounds."""
    rounds, accepted, drafted = len(window), sum(w[0] for w in window), sum(w[1] for w in window)
    expected, time = math.fsum(w[2] for w in window), rounds + cost * drafted
    emitted = accepted + rounds  # every round emits its accepted drafts and one correction or bonus token
    return {
        "recent-rounds": rounds,
        "accept-rate-recent": accepted / drafted,
        "accept-rate-recent-theory": expected / drafted,
        "tokens-per-pass-recent": emitted / rounds,
        "tokens-per-pass-recent-theory": 1.0 + expected / rounds,
        "speedup-recent": emitted / time,
        "speedup-recent-theory": (rounds + expected) / time,
    }


def _verdict(metrics: dict[str, Any]) -> dict[str, str]:
    """The exactness check in words; no verdict before MIN_TOKENS tokens and a context with 5+ expected."""
    n = metrics["tokens-emitted"]
    if n < MIN_TOKENS or not metrics.get("df"):
        for key in ("exact", "p-value", "chi-square"):
            metrics.pop(key, None)
        need = f"{n} of at least {MIN_TOKENS} tokens" if n < MIN_TOKENS else "no context has 5+ expected yet"
        return {"state": "thin", "text": f"too few tokens yet ({need})"}
    p = metrics["p-value"]
    if metrics["exact"]:
        return {"state": "consistent", "text": f"\N{CHECK MARK} consistent (p = {p:.2f})"}
    return {"state": "inconsistent", "text": f"\N{BALLOT X} not the target (p = {p:.1e})"}


def _stream(number: int, round_: steps.Round, quality: float) -> dict[str, Any]:
    """A round as words with their fate, in reading order: accepted, rejected -> correction, discarded, bonus."""
    tokens: list[list[str]] = []
    for pos in round_.positions:
        tokens.append([WORDS[pos.token], pos.outcome])
        if pos.outcome == "rejected":
            tokens.append([WORDS[round_.final_token], "correction"])
    if round_.ended_with == "bonus":
        tokens.append([WORDS[round_.final_token], "bonus"])
    return {"round": number, "gamma": round_.gamma, "quality": quality, "tokens": tokens}


def _explain(number: int, round_: steps.Round) -> str:
    """One round in words, for the Step button's live region."""
    gamma, final, accepted = round_.gamma, WORDS[round_.final_token], round_.accepted
    text = f'Round {number}: drafted {gamma} ("{" ".join(WORDS[pos.token] for pos in round_.positions)}"), '
    if round_.ended_with == "bonus":
        whole = "accepted it" if gamma == 1 else f"all {gamma} accepted"
        text += f'{whole}, bonus "{final}" from the target\'s next row'
    else:
        no = round_.positions[accepted]  # the first rejection ends the round
        # Three decimals, and u (always below 1) never shown as 1.000: a rejection reads u >= p/q on the page too.
        u = min(round(no.u or 0.0, 3), 0.999)  # a rejection always has its u (None only for unchecked drafts)
        why = f"kept with probability p/q = {min(1.0, no.ratio):.3f}, drew u = {u:.3f}"
        text += f'accepted {accepted}, rejected "{WORDS[no.token]}" ({why}) and resampled "{final}" from the residual'
        text += f"; discarded the {round_.discarded} drafted after it" if round_.discarded else ""
    return f"{text}: {plural(accepted + 1, 'token')} for one target pass."


# --- figures -------------------------------------------------------------------------------------------------


def _figures(state: dict[str, Any], quality: float, gamma: int, metrics: dict[str, Any]) -> dict[str, Figure]:
    done, top = metrics["rounds"], max(gamma, state["top"] if metrics["rounds"] else gamma)
    if done:
        shares = [x / done for x in state["histogram"][: top + 1]]
        expected = [x / done for x in state["expected_histogram"][: top + 1]]
    else:  # a preview: start words weighted as the target visits them
        law = _law(quality, gamma)
        shares = [0.0] * (top + 1)
        expected = [math.fsum(w * law[s][2][k] for s, w in enumerate(_stationary())) for k in range(top + 1)]
    visits = [sum(row) for row in state["transitions"]]
    n = sum(visits)
    output = rounded([sum(row[y] for row in state["transitions"]) / n for y in range(SIZE)]) if n else None
    points = state["points"] + ([_point(done, state["window"])] if done % state["stride"] else [])
    same = state["settings"] == [quality, gamma] and not state["changes"]  # the whole run at these settings
    measured = (metrics["alpha-effective"], metrics["tokens-per-pass"]) if done and same else None
    return {
        "accepted": _accepted_figure(rounded(shares), rounded(expected), done),
        "window": _window_figure(points, state["changes"]),
        "distributions": _distributions_figure(rounded(_mix(visits)), output, rounded(_mix(visits, quality))),
        "takeaway": _takeaway_figure(gamma, metrics["alpha-effective"], measured),
    }


def _accepted_figure(observed: list[float], expected: list[float], rounds: int) -> Figure:
    """Drafts accepted per round: the rounds played (bars) against the exact expectation (markers)."""
    ks, diamond = [str(k) for k in range(len(observed))], {"symbol": "diamond", "size": 10, "line": {"width": 1}}
    hover = "%{y:.3f} of rounds<extra></extra>"
    played = bar(ks, observed, name=f"played ({rounds:,} rounds)", role="accepted", hover=hover)
    hover = "expected %{y:.3f}<extra></extra>"
    theory_ = line(ks, expected, name="theory", role="target", mode="markers", marker=diamond, hover=hover)
    x_title, category = "drafts accepted in a round", {"type": "category"}
    axes = layout(x_title=x_title, y_title="share of rounds", height=280, xaxis=category, yaxis={"rangemode": "tozero"})
    return figure([played, theory_], axes)


def _window_figure(points: list[list[Any]], changes: list[list[Any]]) -> Figure:
    """The draft acceptance rate over the last WINDOW rounds as the run goes on, against its exact expectation."""
    x, name = [p[0] for p in points], f"draft acceptance rate, last {WINDOW} rounds"
    played = line(x, [p[1] for p in points], name=name, role="accepted", hover="round %{x}: %{y:.3f}<extra></extra>")
    hover = "round %{x}: expected %{y:.3f}<extra></extra>"
    expected = line(x, [p[2] for p in points], name="theory", role="target", dash="dot", hover=hover)
    empty = {} if x else {"range": [0, WINDOW]}  # before the first round: an axis one window wide
    axes = layout(x_title="round", y_title="accepted / drafted", y_range=[0, 1.05], height=280, xaxis=empty)
    dashed, at = {"dash": "dash", "width": 1, "color": COLORS["discarded"]}, {"xref": "x", "yref": "paper"}
    axes["shapes"] = [{"type": "line", "x0": r, "x1": r, "y0": 0, "y1": 1, "line": dashed} | at for r, _ in changes]
    label = {"y": 1.0, "showarrow": False, "xanchor": "left", "yanchor": "top", "font": {"size": 10}} | at
    axes["annotations"] = [{"x": r, "text": text} | label for r, text in _spaced(changes, max(x, default=WINDOW))]
    return figure([played, expected], axes)


def _spaced(changes: list[list[Any]], span: int) -> list[list[Any]]:
    """The changes to label, newest first kept: one closer than a third of the axis to a newer label goes unlabelled
    (its dashed line stays), as two labels that close printed over each other ("quality 0.85quality 0.3, ...").

    >>> _spaced([[100, "a"], [130, "b"], [900, "c"]], 1000)
    [[130, 'b'], [900, 'c']]
    """
    kept: list[list[Any]] = []
    for change in reversed(changes):
        if not kept or kept[0][0] - change[0] >= span / 3:
            kept.insert(0, change)
    return kept


def _distributions_figure(target: list[float], output: list[float] | None, draft: list[float]) -> Figure:
    """Output against target over the same contexts, and the current draft's distribution for contrast."""
    hover = "output %{x}: %{y:.4f}<extra></extra>"
    emitted = [] if output is None else [bar(WORDS, output, name="emitted output", role="overlap", hover=hover)]
    data = [
        bar(WORDS, target, name="target p", role="target", hover="p(%{x}) = %{y:.4f}<extra></extra>"),
        *emitted,
        bar(WORDS, draft, name="draft q (contrast)", role="draft", hover="q(%{x}) = %{y:.4f}<extra></extra>"),
    ]
    axes: dict[str, Any] = {"xaxis": {"tickangle": -45}, "yaxis": {"rangemode": "tozero"}, "margin": {"b": 72}}
    return figure(data, layout(x_title="token", y_title="share of emitted tokens", barmode="group", height=300, **axes))


@lru_cache(maxsize=1)
def _curves() -> tuple[list[float], list[list[float]]]:
    alphas = [i / 50 for i in range(51)]
    return alphas, [[round(theory.expected_tokens(a, g), 6) for a in alphas] for g in range(1, MAX_GAMMA + 1)]


def _takeaway_figure(gamma: int, alpha: float, measured: tuple[float, float] | None) -> Figure:
    """(1 - alpha^(gamma+1)) / (1 - alpha) against alpha, one line per gamma, with the current setting marked."""
    alphas, curves = _curves()
    data: list[PlotTrace] = []
    for g, ys in enumerate(curves, start=1):
        hover = f"{GAMMA} = {g}, {ALPHA} = %{{x:.2f}}: %{{y:.2f}} tokens<extra></extra>"
        trace = line(alphas, ys, name=f"{GAMMA} = {g}", role="target" if g == gamma else "discarded", hover=hover)
        trace["line"]["width"] = 3.5 if g == gamma else 1
        data.append(trace | {"opacity": 1.0 if g == gamma else 0.55, "showlegend": g == gamma})
    # One text trace labels the line ends: far cheaper for Plotly to lay out than eight annotations.
    ends = line([alphas[-1]] * len(curves), [ys[-1] for ys in curves], name="labels", mode="text")
    ends |= {"text": [f" {GAMMA}={g}" for g in range(1, len(curves) + 1)], "textposition": "middle right"}
    data.append(ends | {"hoverinfo": "skip", "showlegend": False, "cliponaxis": False})
    star = {"symbol": "star", "size": 20, "line": {"width": 1, "color": "#ffffff"}}
    hover = f"{ALPHA} = %{{x:.3f}}: expected %{{y:.2f}} tokens per pass<extra>your setting</extra>"
    x, y = [round(alpha, 6)], [round(theory.expected_tokens(alpha, gamma), 6)]
    data.append(line(x, y, name="your setting", role="rejected", mode="markers", marker=star, hover=hover))
    if measured is not None:
        diamond, hover = {"symbol": "diamond", "size": 8}, "played: %{y:.2f} tokens per pass<extra>your run</extra>"
        x, y = [measured[0]], [measured[1]]
        data.append(line(x, y, name="your run", role="accepted", mode="markers", marker=diamond, hover=hover))
    x_title = f"{ALPHA} (per-token acceptance rate)"
    axes = layout(x_title=x_title, y_title="expected tokens per target pass", y_range=[0, 9.3], margin={"r": 40})
    return figure(data, axes)
