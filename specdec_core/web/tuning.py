"""The Tuning page (docs/tuning.md): the gamma calculator and the draft-length policies side by side.

``tuning.calculator`` evaluates the closed forms of Leviathan et al. (2023) for one (alpha, gamma, c): tokens
per target pass (Eq. 1), the speedup (Theorem 3.8), the operations factor (Theorem 3.11), the optimal gamma and
the break-even alpha, taking alpha directly or converted from what a server reports (the draft acceptance rate,
or the mean acceptance length = tokens per target pass). ``tuning.policies`` runs the four policies of
``policies.make_policy`` on the n-gram pair, resumably, so the page can stream one long run in short calls.

Non-goals: measuring a real server; the cost model is the paper's (one draft step costs c target passes).
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Any

from .. import engine, models, policies, theory
from ..distributions import MAX_GAMMA
from . import handler
from .args import check_choice, check_int, check_list, check_number, check_seed
from .draft import ngram_pair
from .plot import ALPHA, GAMMA, TIMES, Figure, PlotTrace, bar, figure, layout, line, role_marker, rounded

#: The optimal-gamma map's grid: alpha 0..0.98 and c 0..1, both in steps of 0.02.
_MAP_ALPHAS = [round(i * 0.02, 2) for i in range(50)]
_MAP_COSTS = [round(i * 0.02, 2) for i in range(51)]
#: The optimal gamma is searched up to here (the curve is flat long before).
_SEARCH_GAMMA = 32


@lru_cache(maxsize=1)
def _optimal_gamma_grid() -> tuple[tuple[int, ...], ...]:
    # The same for every call: computed once per process (about 0.1 s natively), reused by every slider move.
    return tuple(tuple(theory.optimal_gamma(a, c, _SEARCH_GAMMA) for c in _MAP_COSTS) for a in _MAP_ALPHAS)


def _alpha_from(source: str, alpha: object, rate: object, length: object, gamma: int, notes: list[str]) -> float:
    """The per-token alpha, from whichever figure the reader has (a server reports acceptance after the fact)."""
    if source == "alpha":
        return check_number(alpha, "alpha", 0.0, 1.0)
    if source == "rate":
        return theory.per_token_alpha_from_acceptance_rate(check_number(rate, "rate", 0.0, 1.0), gamma)
    raw = check_number(length, "length", 0.0, 1e6)
    tokens = min(max(raw, 1.0), gamma + 1.0)
    if tokens != raw:
        notes.append(f"a mean acceptance length of {raw:g} is impossible at {GAMMA} = {gamma}; using {tokens:g}")
    return theory.per_token_alpha_from_tokens_per_pass(tokens, gamma)


# --8<-- [start:tuning_calculator]
@handler("tuning.calculator", example={"alpha": 0.8, "gamma": 4, "cost": 0.05})
def calculator(
    alpha: float = 0.8,  # per-token acceptance rate (used when source is "alpha")
    gamma: int = 4,  # speculation length: vLLM num_speculative_tokens, transformers num_assistant_tokens
    cost: float = 0.05,  # c = draft step time / target pass time
    op_cost: float | None = None,  # c_hat = draft operations per token / target's (Thm 3.11); defaults to c
    source: str = "alpha",  # the figure the reader has: "alpha", "rate" (draft acceptance rate) or "length"
    rate: float | None = None,  # the draft acceptance rate, accepted / drafted, as vLLM reports it
    length: float | None = None,  # mean acceptance length = tokens per target pass = 1 + accepted / rounds
) -> dict[str, Any]:
    """Everything Thm 3.8 and 3.11 say about one (alpha, gamma, c), and the gamma they recommend."""
    g = check_int(gamma, "gamma", 1, MAX_GAMMA)
    notes: list[str] = []
    a = _alpha_from(check_choice(source, "source", ("alpha", "rate", "length")), alpha, rate, length, g, notes)
    c = check_number(cost, "cost", 0.0, 10.0)
    c_hat = c if op_cost is None else check_number(op_cost, "op_cost", 0.0, 10.0)
    best = theory.optimal_gamma(a, c, _SEARCH_GAMMA)
    gammas = list(range(1, max(16, g, best + 2) + 1))  # always reaches the reader's gamma (up to 64)
    even = theory.break_even_alpha(g, c)
    metrics = {
        "alpha": a,
        "tokens-per-pass": theory.expected_tokens(a, g),
        "accept-rate": theory.draft_acceptance_rate(a, g),
        "speedup": theory.speedup(a, g, c),
        "optimal-gamma": best,
        "optimal-speedup": theory.speedup(a, best, c) if best else 1.0,
        "operations-factor": theory.operations_factor(a, g, c_hat),
        "discarded-fraction": theory.expected_discarded(a, g) / g,
    }
    if even is not None:  # None when c > 1: no alpha pays, and the page says so in words
        metrics["break-even-alpha"] = even
    # The search's last gamma is no optimum when one more draft token is faster still (alpha near 1, c near 0).
    capped = best == _SEARCH_GAMMA and theory.speedup(a, best + 1, c) > metrics["optimal-speedup"]
    if capped:
        notes.append(f"the search stops at {GAMMA} = {_SEARCH_GAMMA}; longer drafts would be faster still")
    curve = rounded([theory.speedup(a, k, c) for k in gammas])
    return {
        "capped": capped,
        "figures": {"speedup": _speedup_figure(gammas, curve, g, best, capped), "map": _map_figure(a, c)},
        "metrics": {k: round(v, 12) if isinstance(v, float) else v for k, v in metrics.items()},
        "pays": even is not None and a > even,
        "notes": notes,
    }


# --8<-- [end:tuning_calculator]


def _speedup_figure(gammas: list[int], speedups: list[float], gamma: int, best: int, capped: bool = False) -> Figure:
    """Speedup against gamma, the break-even line, the reader's gamma and the optimum (0 when no gamma pays)."""
    at = dict(zip(gammas, speedups, strict=True))

    def mark(x: int, name: str, role: str, style: dict[str, Any]) -> PlotTrace:
        return line([x], [at.get(x, 1.0)], name=name, role=role, mode="markers", marker=style)

    hover = f"{GAMMA} = %{{x}}: speedup %{{y:.3f}}{TIMES}<extra></extra>"
    even = line([0, max(gammas)], [1.0, 1.0], name=f"break-even (1{TIMES})", role="discarded", dash="dash")
    data = [
        line(gammas, speedups, name="speedup (Thm 3.8)", role="target", mode="lines+markers", hover=hover),
        even | {"hoverinfo": "skip"},
        mark(gamma, f"your {GAMMA} = {gamma}", "target", {"size": 11, "symbol": "circle"}),
        # At the search's end the star is the best searched, not an optimum: the curve rises past it.
        mark(
            best,
            f"{'best searched' if capped else 'optimal'} {GAMMA} = {best}",
            "rejected",
            {"size": 15, "symbol": "star"},
        ),
    ]
    x_title, top = f"speculation length {GAMMA}", max([*speedups, 1.0]) * 1.12
    # Plotly spaces the ticks by the axis's width (every gamma from 1 to 16 stood on end on a phone); integers only.
    ticks = {"tickformat": "d", "range": [0.5, max(gammas) + 0.5]}
    return figure(data, layout(x_title=x_title, y_title="speedup over plain decoding", y_range=[0, top], xaxis=ticks))


#: Viridis, sampled at ten points: the ramp for gamma = 1 and up. Gamma = 0 ("no gamma pays") gets a grey of its
#: own, so plain decoding's region cannot be mistaken for a short draft.
_VIRIDIS = [
    *("#440154", "#482878", "#3E4989", "#31688E", "#26828E"),
    *("#1F9E89", "#35B779", "#6DCD59", "#B4DE2C", "#FDE725"),
]
_NO_GAMMA = "#8C8C8C"


def _gamma_colorscale(top: int) -> list[list[float | str]]:
    """0 in grey, then 1..top along Viridis; ``top`` is the largest value on the map (zmin 0, zmax top)."""
    edge = 0.5 / top  # halfway between 0 and 1 on the normalised scale
    ramp: list[list[float | str]] = [[edge + (1 - edge) * i / (len(_VIRIDIS) - 1), c] for i, c in enumerate(_VIRIDIS)]
    return [[0.0, _NO_GAMMA], [edge, _NO_GAMMA], [edge, _VIRIDIS[0]], *ramp]


def _map_figure(alpha: float, cost: float) -> Figure:
    """Heatmap of the optimal gamma over draft cost (x) and alpha (y), with the reader's point marked."""
    grid = _optimal_gamma_grid()
    top = max(1, max(max(row) for row in grid))
    # No tick at 1: it sits 1/top of the bar above 0's and their labels would collide.
    ticks = sorted({*range(4, top + 1, 4), top})
    heat = {
        "type": "heatmap",
        "x": _MAP_COSTS,
        "y": _MAP_ALPHAS,
        "z": [list(row) for row in grid],
        "colorscale": _gamma_colorscale(top),
        "zmin": 0,
        "zmax": top,
        # Under the map, as wide as it: a bar at its side took ~100 px of a phone's ~250 px plot. Its title says
        # what grey means, which no tick label could say in that width.
        "colorbar": {
            "title": {"text": f"optimal {GAMMA} (grey: no {GAMMA} pays)", "side": "bottom"},
            "orientation": "h",
            **{"x": 0.5, "xanchor": "center", "len": 1, "yref": "container", "y": 0, "yanchor": "bottom"},
            "thickness": 12,
            "tickvals": [0, *ticks],
            "ticktext": list(map(str, [0, *ticks])),
        },
        "hovertemplate": f"c = %{{x:.2f}}, {ALPHA} = %{{y:.2f}}: optimal {GAMMA} = %{{z}}<extra></extra>",
        "name": f"optimal {GAMMA}",
    }
    cross = {"color": "#FFFFFF", "size": 12, "symbol": "x", "line": {"color": "#000000", "width": 2}}
    hover = f"your setting: c = %{{x:.2f}}, {ALPHA} = %{{y:.2f}}<extra></extra>"
    here = line([cost], [alpha], name=f"your (c, {ALPHA})", mode="markers", marker=cross, hover=hover)
    y_title = f"per-token acceptance rate {ALPHA}"
    axes = layout(x_title="draft cost c", y_title=y_title, height=430, margin={"b": 120}, showlegend=False)
    return figure([heat, here], axes)


# --- the draft-length policies, side by side -------------------------------------------------------------------

#: Per policy: its label, and the role whose colour and bar pattern it borrows.
_STYLES = {
    "fixed": (f"fixed {GAMMA}", "target"),
    "confidence": ("confidence \N{GREEK SMALL LETTER TAU}", "draft"),
    "dynamic": ("dynamic +2/\N{MINUS SIGN}1", "overlap"),
    "oracle": ("oracle (upper bound on average)", "residual"),
}
_MEASURES = ["tokens per target pass", "draft steps per token", "discarded share", "speedup at c"]


def _runs(
    names: list[str], state: object, pair: models.Pair, budget: int, seed: int, **policy_args: Any
) -> dict[str, engine.SpeculativeRun]:
    """Each policy's run: resumed from ``state`` when the page sent it, else started with ``budget`` tokens to emit."""
    if state is not None and not isinstance(state, dict):
        raise TypeError(f"state must be the state a previous call returned, got {type(state).__name__}")
    saved, runs = state or {}, {}
    if set(saved) - set(names):
        raise ValueError(f"state must hold runs of the policies named in policies_ only (got {sorted(saved)})")
    for name in names:
        if name not in saved:
            # Every policy gets the same random stream; they consume it differently, so the texts differ. A
            # window of 8 is more than the n-gram target reads; a paragraph that ends starts a fresh one.
            rng, policy = random.Random(f"tuning:{seed}"), policies.make_policy(name, **policy_args)
            runs[name] = engine.SpeculativeRun(pair, policy, max_tokens=budget, rng=rng, window=8, restart_at_end=True)
            continue
        try:
            runs[name] = engine.SpeculativeRun.restore(pair, saved[name])
        except (TypeError, ValueError, OverflowError) as err:
            raise ValueError(f"state[{name!r}] is not a run this page made: {err}") from None
        if saved[name]["policy"]["name"] != name:
            raise ValueError(f"state[{name!r}] holds another policy's run")
    return runs


def _measures(name: str, totals: engine.Counters, cost: float) -> list[float]:
    """Tokens per target pass, draft steps per token, discarded share, and the speedup at cost c."""
    passes, emitted = totals.target_passes, totals.emitted
    if not 0 < passes <= emitted:  # every round emits a token; a run that emitted nothing was never started
        raise ValueError(f"state[{name!r}] holds counters no run produces")
    plain = passes + cost * totals.draft_steps  # plain decoding: one target pass per token
    return [emitted / passes, totals.draft_steps / emitted, totals.discarded / max(1, totals.drafted), emitted / plain]


# --8<-- [start:tuning_policies]
@handler("tuning.policies", example={"tokens": 40, "seed": 1, "gamma": 4, "tau": 0.5})
def compare(
    tokens: int = 50,  # tokens each policy emits in this call (one chunk of a longer run)
    total: int | None = None,  # tokens per policy in the whole run (its budget); default ``tokens``: one call
    seed: int = 0,
    gamma: int = 4,  # fixed gamma, and the dynamic schedule's starting length
    tau: float = 0.5,  # confidence threshold
    max_gamma: int = 16,  # cap for the confidence, dynamic and oracle rules
    cost: float = 0.05,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
    policies_: list[str] | None = None,
    state: dict[str, Any] | None = None,  # policy -> the engine's snapshot, as the last call returned it
) -> dict[str, Any]:
    """Advance each policy's run on the n-gram pair by ``tokens`` tokens; return the runs' totals so far.

    A long run is many short calls that hand ``state`` back: ``engine.SpeculativeRun`` resumes each run exactly,
    so a run streamed in chunks is the run one call would make.
    """
    n = check_int(tokens, "tokens", 1, 2000)
    budget = n if total is None else check_int(total, "total", 1, 20_000)
    s, g, t = check_seed(seed), check_int(gamma, "gamma", 1, MAX_GAMMA), check_number(tau, "tau", 0.0, 1.0)
    cap = check_int(max_gamma, "max_gamma", 1, MAX_GAMMA)
    chosen = check_list(policies_ or list(policies.POLICY_NAMES), "policies_", 1, 4)
    names = [check_choice(x, f"policies_[{i}]", policies.POLICY_NAMES) for i, x in enumerate(chosen)]
    if len(set(names)) < len(names):  # one run per policy: a name twice would have no bar of its own
        raise ValueError(f"policies_ must name each policy at most once (got {', '.join(names)})")
    c = check_number(cost, "cost", 0.0, 10.0)
    shaping = (check_number(temperature, "temperature", 0.05, 10.0), check_int(top_k, "top_k", 0, 10**5))
    pair = ngram_pair(*shaping, check_number(top_p, "top_p", 0.01, 1.0))
    runs = _runs(names, state, pair, budget, s, gamma=g, tau=t, max_gamma=cap)
    metrics: dict[str, float] = {}
    rows = []
    for name, run in runs.items():
        run.advance(n)
        rows.append(rounded(_measures(name, run.totals, c)))
        keys = ("tokens-per-pass", "draft-per-token", "discarded-fraction", "speedup")
        metrics |= {f"{name}-{key}": value for key, value in zip(keys, rows[-1], strict=True)}
        metrics[f"{name}-tokens-emitted"] = run.totals.emitted
        if name == "fixed":  # alpha as the calculator means it: of the drafts the target checked, those accepted
            metrics["alpha"] = round(run.totals.accepted / (run.totals.accepted + run.totals.rejected or 1), 12)
    return {
        "figure": _policy_figure(names, rows),
        "metrics": metrics,
        "state": {name: run.snapshot() for name, run in runs.items()},
        "sample": pair.decode(runs[names[0]].trace.tokens, show_bytes=True),
        "done": all(run.done for run in runs.values()),
    }


# --8<-- [end:tuning_policies]


def _policy_figure(names: list[str], rows: list[list[float]]) -> Figure:
    """One small panel per measure, each with its own y axis (a share and a speedup never share a scale); one bar
    per policy, with the policy's colour and pattern, and one legend entry per policy."""
    traces: list[PlotTrace] = []
    axes: dict[str, Any] = {}
    for m, measure in enumerate(_MEASURES):
        suffix = "" if m == 0 else str(m + 1)
        column, row = m % 2, m // 2
        # A gap wide enough for the right panel's tick labels and axis title on a 390 px phone (at 0.4 / 0.6 the
        # title touched the left panel's last bar there).
        x_domain = [0.0, 0.37] if column == 0 else [0.63, 1.0]
        y_domain = [0.58, 1.0] if row == 0 else [0.0, 0.42]
        fixed = {"fixedrange": True}
        # Headroom above the tallest bar: autoranged, it reached the panel's top edge.
        top = max((values[m] for values in rows), default=0.0)
        y_range = {"range": [0, round(1.12 * top, 6)]} if top > 0 else {"rangemode": "tozero"}
        axes[f"xaxis{suffix}"] = fixed | {"domain": x_domain, "anchor": f"y{suffix}", "showticklabels": False}
        axes[f"yaxis{suffix}"] = fixed | {"domain": y_domain, "anchor": f"x{suffix}"} | y_range
        axes[f"yaxis{suffix}"]["title"] = {"text": measure}
        for name, values in zip(names, rows, strict=True):
            label, role = _STYLES[name]
            hover = f"{label}<br>{measure}: %{{y:.3f}}<extra></extra>"
            trace = bar([label], [values[m]], name=label, hover=hover)
            trace |= {"marker": role_marker(role), "xaxis": f"x{suffix}", "yaxis": f"y{suffix}"}
            traces.append(trace | {"legendgroup": name, "showlegend": m == 0})
    base = layout(height=440, margin={"t": 56})
    return figure(traces, base | axes)
