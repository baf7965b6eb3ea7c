"""The one registry the browser calls: handler name -> handler(**args) -> JSON-safe dict.

Two callers, one entry point, ``call(name, args_json) -> str``:

- the Web Worker (``site_assets/js/worker.js``) answers each ``CALL {id, name, args}`` message with it, inside
  Pyodide;
- the build hook (``site_assets/build_hook.py``) calls it natively for each widget placeholder, so every widget
  paints a build-time figure before Python boots in the browser.

Arguments and results cross as JSON strings, so JavaScript never builds Python source.

How a page asks for its build-time figure
------------------------------------------
A widget placeholder in Markdown carries its settings as inert JSON, right after the opening tag::

    <div class="sd-widget" data-widget="pair">
    <script type="application/json">{"handler": "distributions.pair", "args": {"blend": 0}}</script>
    </div>

When the settings name a ``handler``, the build hook runs ``call(handler, json.dumps(args))`` and embeds the result
in the page; the widget receives it as ``ctx.initial`` and later makes the same call live with ``ctx.call``.

What a handler returns
----------------------
A JSON object. By convention ``figure`` holds one Plotly figure dict (from ``figures``), ``figures`` a name ->
figure mapping when a widget draws several charts, and ``metrics`` a name -> number mapping whose names are the
page's ``data-metric`` names (``accept-rate``, ``tv-distance``, ...). Anything else a widget needs may sit beside
them. NaN and infinities are refused (``call`` raises), because ``JSON.parse`` cannot read them.

Adding a handler
----------------
Decorate a function with keyword parameters; the name is ``<module>.<what>``. ``example`` holds arguments the
native tests call it with (every handler must have one: tests/test_web.py checks each result is JSON-safe and that
its figures validate with ``plotly.graph_objects.Figure``)::

    @handler("theory.expected_tokens", example={"alpha": 0.8, "gamma": 4})
    def _expected_tokens(alpha: float, gamma: int) -> dict[str, Any]: ...

Nothing imports this module except the worker and the build hook.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar

from . import engine, figures, models, policies, theory
from .distributions import (
    acceptance_rate,
    check_alpha,
    check_cost,
    check_gamma,
    residual,
    total_variation,
    validate_probs,
)

__all__ = ["EXAMPLES", "HANDLERS", "call", "dumps", "handler"]

Handler = Callable[..., dict[str, Any]]
H = TypeVar("H", bound=Handler)

#: Every handler the page may call, by name.
HANDLERS: dict[str, Handler] = {}

#: Example keyword arguments per handler, for the native tests.
EXAMPLES: dict[str, dict[str, Any]] = {}


def handler(name: str, *, example: dict[str, Any]) -> Callable[[H], H]:
    """Register a function under ``name``; registering one name twice is an error, not a silent override."""

    def register(fn: H) -> H:
        if name in HANDLERS:
            raise ValueError(f"handler {name!r} is already registered")
        HANDLERS[name] = fn
        EXAMPLES[name] = example
        return fn

    return register


def call(name: str, args_json: str = "{}") -> str:
    """Run handler ``name`` with keyword arguments decoded from ``args_json``; return its result as JSON.

    >>> json.loads(call("distributions.pair", '{"p": [0.4, 0.35, 0.25], "q": [0.2, 0.2, 0.6]}'))["metrics"]
    {'accept-rate': 0.65, 'reject-rate': 0.35, 'tv-distance': 0.35}
    >>> call("no.such", "{}")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown handler 'no.such'; known: ...distributions.pair...
    """
    fn = HANDLERS.get(name)
    if fn is None:
        raise ValueError(f"unknown handler {name!r}; known: {', '.join(sorted(HANDLERS))}")
    args = json.loads(args_json)
    if not isinstance(args, dict):
        raise TypeError(f"args for {name!r} must be a JSON object, got {type(args).__name__}")
    result = fn(**args)
    if not isinstance(result, dict):
        raise TypeError(f"handler {name!r} must return a dict, got {type(result).__name__}")
    return dumps(result, where=name)


def dumps(value: object, where: str = "value") -> str:
    """Compact JSON that ``JSON.parse`` accepts: a non-finite number is an error that names its path.

    >>> dumps({"a": [1, 2.5]})
    '{"a":[1,2.5]}'
    >>> dumps({"m": {"x": float("nan")}}, where="h")
    Traceback (most recent call last):
    ...
    ValueError: h returned a non-finite number at ["m"]["x"]: nan
    """
    _check_finite(value, where, "")
    return json.dumps(value, allow_nan=False, separators=(",", ":"))


def _check_finite(value: object, where: str, path: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{where} returned a non-finite number at {path or 'the top level'}: {value}")
    if isinstance(value, dict):
        for key, item in value.items():
            _check_finite(item, where, f"{path}[{json.dumps(key)}]")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _check_finite(item, where, f"{path}[{i}]")


def _rounded(values: list[float]) -> list[float]:
    # 12 decimals hide float noise (0.6499999999999999) without hiding anything a chart or a test can see.
    return [round(v, 12) for v in values]


# --- distributions ------------------------------------------------------------------------------------------


# --8<-- [start:pair]
@handler("distributions.pair", example={"p": [0.4, 0.35, 0.25], "q": [0.2, 0.2, 0.6], "blend": 0.5})
def _pair(
    p: list[float],  # [vocab] target distribution
    q: list[float],  # [vocab] draft distribution
    blend: float = 0.0,  # 0 keeps q; 1 moves the draft all the way onto the target
    labels: list[str] | None = None,  # [vocab] token names for the x axis
) -> dict[str, Any]:
    """One position of verification: p, q, the accepted mass min(p, q) and the residual.

    The draft is (1 - blend) * q + blend * p, so one slider walks it from q to the target. The paper's worked
    example (p = [.4, .35, .25], q = [.2, .2, .6], blend 0) gives beta = .65 and residual [4/7, 3/7, 0].
    """
    p_row = validate_probs(p, "p")
    q_row = validate_probs(q, "q")
    if len(p_row) != len(q_row):
        raise ValueError(f"p and q must have the same length (got {len(p_row)} and {len(q_row)})")
    if isinstance(blend, bool) or not isinstance(blend, int | float) or not 0.0 <= blend <= 1.0:
        raise ValueError(f"blend must be a number between 0 and 1, got {blend!r}")
    names = labels if labels is not None else [f"x{i + 1}" for i in range(len(p_row))]
    if len(names) != len(p_row):
        raise ValueError(f"labels must name every token (got {len(names)} for {len(p_row)})")

    draft = [(1.0 - blend) * qi + blend * pi for qi, pi in zip(q_row, p_row, strict=True)]
    beta = acceptance_rate(p_row, draft)
    overlap = [min(pi, di) for pi, di in zip(p_row, draft, strict=True)]
    fallback = residual(p_row, draft)
    return {
        "figure": figures.pair_figure(names, p_row, _rounded(draft), _rounded(overlap), _rounded(fallback)),
        "metrics": {
            "accept-rate": round(beta, 12),
            "reject-rate": round(1.0 - beta, 12),
            "tv-distance": round(total_variation(p_row, draft), 12),
        },
        "q": _rounded(draft),
        "residual": _rounded(fallback),
    }


# --8<-- [end:pair]


# --- Tuning -------------------------------------------------------------------------------------------------
# Handlers of the Tuning page (docs/tuning.md): the gamma calculator and the adaptive-policy comparison.

#: The optimal-gamma map's grid: alpha 0..0.98 and c 0..1, both in steps of 0.02.
_MAP_ALPHAS = [round(i * 0.02, 2) for i in range(50)]
_MAP_COSTS = [round(i * 0.02, 2) for i in range(51)]
_MAX_GAMMA = 32
_GAMMA = "\N{GREEK SMALL LETTER GAMMA}"  # spelled out: ruff flags a literal Greek letter as confusable


@lru_cache(maxsize=1)
def _optimal_gamma_grid() -> tuple[tuple[int, ...], ...]:
    # The same for every call, so computed once per process (about 0.1 s natively) and reused by every slider move.
    return tuple(tuple(theory.optimal_gamma(a, c, _MAX_GAMMA) for c in _MAP_COSTS) for a in _MAP_ALPHAS)


# --8<-- [start:tuning_calculator]
@handler("tuning.calculator", example={"alpha": 0.8, "gamma": 4, "cost": 0.05})
def _tuning_calculator(
    alpha: float = 0.8,  # per-token agreement rate (used when source is "alpha")
    gamma: int = 4,  # speculation length: vLLM num_speculative_tokens, transformers num_assistant_tokens
    cost: float = 0.05,  # c = draft step time / target pass time
    op_cost: float | None = None,  # c_hat = draft operations per token / target's (Thm 3.11); defaults to c
    source: str = "alpha",  # which figure the reader has: "alpha", "rate" (accepted / drafted) or "length"
    rate: float | None = None,  # vLLM's draft acceptance rate, accepted / drafted
    length: float | None = None,  # mean acceptance length = tokens per target pass = 1 + accepted / rounds
) -> dict[str, Any]:
    """Everything Thm 3.8 and 3.11 say about one (alpha, gamma, c), and the gamma they recommend."""
    g = check_gamma(gamma)
    if g < 1:
        raise ValueError("gamma must be between 1 and 64 (got 0: nothing would be drafted)")
    notes: list[str] = []
    # A served model reports acceptance after the fact; turn it into the per-token alpha the formulas use.
    if source == "alpha":
        a = check_alpha(alpha)
    elif source == "rate":
        a = theory.per_token_alpha_from_acceptance_rate(check_alpha(rate, "rate"), g)
    elif source == "length":
        raw = check_cost(length, "length")
        tokens = min(max(raw, 1.0), g + 1.0)
        if tokens != raw:
            notes.append(f"a mean acceptance length of {raw:g} is impossible at {_GAMMA} = {g}; using {tokens:g}")
        a = theory.per_token_alpha_from_tokens_per_pass(tokens, g)
    else:
        raise ValueError(f"source must be one of alpha, rate, length (got {source!r})")
    c = check_cost(cost)
    c_hat = c if op_cost is None else check_cost(op_cost, "op_cost")

    best = theory.optimal_gamma(a, c, _MAX_GAMMA)
    gammas = list(range(1, max(16, g, best + 2) + 1))[:_MAX_GAMMA]
    curve = [theory.speedup(a, k, c) for k in gammas]
    even = theory.break_even_alpha(g, c)
    metrics = {
        "alpha": a,
        "tokens-per-pass": theory.expected_tokens(a, g),
        "draft-acceptance-rate": theory.draft_acceptance_rate(a, g),
        "speedup": theory.speedup(a, g, c),
        "optimal-gamma": best,
        "optimal-speedup": theory.speedup(a, best, c) if best else 1.0,
        "operations-factor": theory.operations_factor(a, g, c_hat),
        "discarded-fraction": theory.expected_discarded(a, g) / g,
    }
    if even is not None:  # None when c > 1: no alpha pays, and the page says so in words
        metrics["break-even-alpha"] = even
    grid = _optimal_gamma_grid()
    return {
        "figures": {
            "speedup": figures.speedup_curve_figure(gammas, _rounded(curve), gamma=g, best_gamma=best),
            "map": figures.optimal_gamma_map_figure(_MAP_COSTS, _MAP_ALPHAS, grid, alpha=a, cost=c),
        },
        "metrics": {k: round(v, 12) if isinstance(v, float) else v for k, v in metrics.items()},
        "pays": even is not None and a > even,
        "notes": notes,
    }


# --8<-- [end:tuning_calculator]

_POLICY_NAMES = ("fixed", "confidence", "dynamic", "oracle")
_POLICY_LABELS = {
    "fixed": f"fixed {_GAMMA}",
    "confidence": "confidence \N{GREEK SMALL LETTER TAU}",
    "dynamic": "dynamic +2/\N{MINUS SIGN}1",
    "oracle": "oracle (upper bound)",
}
_MEASURES = ["tokens per target pass", "draft steps per token", "discarded share", "speedup at c"]


@lru_cache(maxsize=4)
def _tuning_pair(temperature: float, top_k: int, top_p: float) -> models.Pair:
    # Reusing the pair keeps the models' row caches warm across the chunks of one run.
    return models.ngram_pair(temperature=temperature, top_k=top_k, top_p=top_p)


def _make_tuning_policy(name: str, gamma: int, tau: float, max_gamma: int, state: dict[str, Any]) -> Any:
    if name == "fixed":
        return policies.FixedPolicy(gamma)
    if name == "confidence":
        return policies.ConfidencePolicy(tau, max_gamma)
    if name == "dynamic":
        # The schedule's current length carries over from the previous chunk, as in one long generation.
        return policies.DynamicPolicy(int(state.get("gamma", gamma)), max(max_gamma, gamma))
    return policies.OraclePolicy(max_gamma)


# --8<-- [start:tuning_policies]
@handler("tuning.policies", example={"tokens": 40, "seed": 1, "gamma": 4, "tau": 0.5})
def _tuning_policies(
    tokens: int = 50,  # tokens each policy emits in this call (one chunk of a longer run)
    seed: int = 0,
    chunk: int = 0,  # index of this chunk; with the seed it fixes the random stream
    gamma: int = 4,  # fixed gamma, and the dynamic schedule's starting length
    tau: float = 0.5,  # confidence threshold
    max_gamma: int = 16,  # cap for the confidence, dynamic and oracle rules
    cost: float = 0.05,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
    policies_: list[str] | None = None,
    state: dict[str, Any] | None = None,  # policy -> {counters, context, gamma}, as returned by the last chunk
) -> dict[str, Any]:
    """Run each draft-length policy for ``tokens`` more tokens on the n-gram pair; return running totals.

    A long run is many short calls: the page passes ``state`` back, so the totals, the text context and the
    dynamic schedule continue where the last chunk stopped. A paragraph that ends starts a fresh one.
    """
    if isinstance(tokens, bool) or not isinstance(tokens, int) or not 1 <= tokens <= 2000:
        raise ValueError(f"tokens must be an int between 1 and 2000 (got {tokens!r})")
    if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 0:
        raise ValueError(f"chunk must be an int >= 0 (got {chunk!r})")
    g = check_gamma(gamma)
    if g < 1:
        raise ValueError("gamma must be between 1 and 64 (got 0)")
    c = check_cost(cost)
    names = list(policies_ or _POLICY_NAMES)
    if not names or any(n not in _POLICY_NAMES for n in names):
        raise ValueError(f"policies_ must name some of {', '.join(_POLICY_NAMES)} (got {names!r})")
    pair = _tuning_pair(float(temperature), int(top_k), float(top_p))
    previous = state or {}
    new_state: dict[str, Any] = {}
    metrics: dict[str, float] = {}
    rows: list[list[float]] = []
    sample = ""
    for name in names:
        mine = previous.get(name, {})
        policy = _make_tuning_policy(name, g, tau, max_gamma, mine)
        totals = dict.fromkeys(engine.Counters().to_dict(), 0) | mine.get("counters", {})
        context = [int(t) for t in mine.get("context", [])]
        # Every policy gets the same stream; they consume it differently, so texts differ but all are exact.
        rng = random.Random(f"tuning:{seed}:{chunk}")
        emitted = 0
        while emitted < tokens:
            trace = engine.generate_speculative(pair, policy, max_tokens=tokens - emitted, rng=rng, context=context)
            for key, value in trace.counters.to_dict().items():
                totals[key] += value
            emitted += trace.counters.emitted
            context = [] if trace.stopped == "end" else (context + trace.tokens)[-8:]
            if name == names[0]:
                sample += (" " if sample else "") + trace.text
        new_state[name] = {"counters": totals, "context": context, "gamma": getattr(policy, "gamma", g)}

        passes, steps, drafted = totals["target_passes"], totals["draft_steps"], totals["drafted"]
        row = [
            totals["emitted"] / passes,
            steps / totals["emitted"],
            totals["discarded"] / drafted if drafted else 0.0,
            totals["emitted"] / (passes + c * steps),  # plain decoding: one target pass per token
        ]
        rows.append(_rounded(row))
        for metric, value in zip(
            ("tokens-per-pass", "draft-per-token", "discarded-fraction", "speedup"), row, strict=True
        ):
            metrics[f"{name}-{metric}"] = round(value, 12)
        metrics[f"{name}-tokens-emitted"] = totals["emitted"]
        if name == "fixed":
            # alpha as the calculator means it: each verified draft is accepted or rejected; discards never count.
            judged = totals["accepted"] + totals["rejected"]
            metrics["alpha-measured"] = round(totals["accepted"] / judged, 12) if judged else 0.0
    return {
        "figure": figures.policy_bars_figure(names, [_POLICY_LABELS[n] for n in names], _MEASURES, rows),
        "metrics": metrics,
        "state": new_state,
        "sample": sample,
    }


# --8<-- [end:tuning_policies]
