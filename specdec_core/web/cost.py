"""The Cost page (docs/cost.md): what a forward pass costs on real hardware, and whether speculation still pays.

``cost.model`` prices plain and speculative decoding with ``costs`` for the reader's hardware, models, batch size
and context: the speedup, the ridge, both passes on the roofline, the speedup across batch sizes and the memory
the run needs. ``cost.race`` plays the same settings on one wall clock: real rounds from the engine (the agreement
pair, whose per-token acceptance rate is alpha at every position), each step timed by ``costs``.
Non-goals: measured times, prefill, tree drafts.
"""

from __future__ import annotations

import math
import random
from typing import Any

from .. import costs, engine, models, policies
from ..costs import HARDWARE, MODELS
from . import handler
from .args import check_choice, check_int, check_number, check_seed
from .draft import MAX_PAGE_GAMMA
from .plot import GAMMA, TIMES, Figure, figure, layout, line, plural

#: The controls' choices: powers of two, as serving engines size their batches and contexts.
BATCHES = [2**i for i in range(11)]  # 1 .. 1024
CONTEXTS = [2**i for i in range(7, 16)]  # 128 .. 32,768
#: Weight precision in bits -> bytes per parameter (the KV cache stays 16-bit).
WEIGHTS = {16: 2.0, 8: 1.0, 4: 0.5}
TARGETS = ["llama-3.1-8b", "llama-3.1-70b"]
DRAFTS = ["llama-3.2-1b", "eagle-8b", "eagle-70b"]
#: Most tokens one race may generate: a lane stays readable at 390 px.
MAX_RACE_TOKENS = 48

_SETTINGS = {
    "alpha": 0.8,
    "gamma": 4,
    "batch": 1,
    "context": 1024,
    "hardware": "h100",
    "target": "llama-3.1-8b",
    "draft": "llama-3.2-1b",
    "weights": 16,
}


class _Setup:
    """The checked arguments every handler of the page shares."""

    def __init__(self, args: dict[str, Any]) -> None:
        self.alpha = check_number(args["alpha"], "alpha", 0, 1)
        self.gamma = check_int(args["gamma"], "gamma", 1, MAX_PAGE_GAMMA)
        self.batch = _power_of_two(args["batch"], "batch", BATCHES)
        self.context = _power_of_two(args["context"], "context", CONTEXTS)
        self.hardware = HARDWARE[check_choice(args["hardware"], "hardware", list(HARDWARE))]
        self.target = MODELS[check_choice(args["target"], "target", TARGETS)]
        self.draft = MODELS[check_choice(args["draft"], "draft", DRAFTS)]
        bits = check_int(args["weights"], "weights", 4, 16)
        if bits not in WEIGHTS:
            raise ValueError(f"weights must be one of 16, 8, 4 bits (got {bits})")
        self.bits, self.weight_bytes = bits, WEIGHTS[bits]

    def cost(self, batch: int | None = None, context: int | None = None) -> costs.SpeculativeCost:
        return costs.speculative_cost(
            self.target,
            self.draft,
            self.hardware,
            alpha=self.alpha,
            gamma=self.gamma,
            batch=self.batch if batch is None else batch,
            context=self.context if context is None else context,
            weight_bytes=self.weight_bytes,
        )

    def memory(self, batch: int | None = None) -> float:
        b = self.batch if batch is None else batch
        return costs.memory_needed(
            self.target, self.draft, context=self.context, batch=b, weight_bytes=self.weight_bytes
        )


def _power_of_two(value: object, name: str, choices: list[int]) -> int:
    n = check_int(value, name, choices[0], choices[-1])
    if n not in choices:
        raise ValueError(f"{name} must be a power of two from {choices[0]:,} to {choices[-1]:,} (got {n})")
    return n


# --8<-- [start:cost_model]
@handler("cost.model", example=_SETTINGS)
def model(
    alpha: float = 0.8,
    gamma: int = 4,
    batch: int = 1,
    context: int = 1024,
    hardware: str = "h100",
    target: str = "llama-3.1-8b",
    draft: str = "llama-3.2-1b",
    weights: int = 16,
) -> dict[str, Any]:
    """Plain against speculative decoding at one batch size: the speedup, both passes and the memory they need."""
    s = _Setup(locals())
    c = s.cost()
    ridge = costs.ridge_tokens(s.target, s.hardware, context=s.context, batch=s.batch, weight_bytes=s.weight_bytes)
    need = s.memory()
    return {
        "figures": {"roofline": _roofline_figure(s, c), "batch": _batch_figure(s)},
        "metrics": {
            "speedup": round(c.speedup, 12),
            "ridge-tokens": round(ridge, 6),
            "plain-pass-ms": _ms(c.plain.time),
            "verify-pass-ms": _ms(c.verify.time),
            "draft-step-ms": _ms(c.draft.time),
            "round-ms": _ms(c.round_time),
            "plain-token-ms": _ms(c.plain_per_token),
            "speculative-token-ms": _ms(c.speculative_per_token),
            "tokens-per-pass": round(c.tokens_per_pass, 12),
            "verify-tokens": c.verify.tokens,
            "compute-bound": int(c.verify.bound == "compute"),
            "memory-gb": round(need / 1e9, 3),
            "memory-fits": int(need <= s.hardware.memory),
        },
        "bound": {"plain": c.plain.bound, "verify": c.verify.bound, "draft": c.draft.bound},
        "memory": {"needed-gb": round(need / 1e9, 3), "available-gb": round(s.hardware.memory / 1e9, 3)},
        "head-note": costs.head_mismatch(s.target, s.draft).strip(),  # "" unless a head is beside another target
        "presets": _presets(s),
    }


# --8<-- [end:cost_model]


@handler("cost.race", example=_SETTINGS | {"tokens": 20, "seed": 0})
def race(
    alpha: float = 0.8,
    gamma: int = 4,
    batch: int = 1,
    context: int = 1024,
    hardware: str = "h100",
    target: str = "llama-3.1-8b",
    draft: str = "llama-3.2-1b",
    weights: int = 16,
    tokens: int = 20,
    seed: int = 0,
) -> dict[str, Any]:
    """Plain and speculative decoding of ``tokens`` tokens on one clock: every pass and draft step with its time.

    The rounds are real: the engine runs the agreement pair (beta = alpha at every position) with a fixed
    speculation length; the times are ``costs``' for the chosen hardware, models, batch and context. Times are in
    milliseconds; a lane's ``steps`` are in the order they happen, each with its ``start`` and ``end``.
    """
    s = _Setup(locals())
    n, rng_seed = check_int(tokens, "tokens", 1, MAX_RACE_TOKENS), check_seed(seed)
    c = s.cost()
    pair = models.agreement_pair(s.alpha)
    spec = engine.generate_speculative(pair, policies.FixedPolicy(s.gamma), max_tokens=n, rng=random.Random(rng_seed))
    plain = engine.generate_autoregressive(pair, max_tokens=n, rng=random.Random(rng_seed))
    plain_steps = [
        {
            "kind": "pass",
            "start": _ms(i * c.plain.time),
            "end": _ms((i + 1) * c.plain.time),
            "emits": [[e.word, e.kind]],
        }
        for i, e in enumerate(plain.events)
    ]
    spec_steps = _speculative_steps(spec, c.draft.time, c.verify.time)
    plain_total, spec_total = plain_steps[-1]["end"], spec_steps[-1]["end"]
    return {
        "plain": {"steps": plain_steps, "total": plain_total},
        "speculative": {"steps": spec_steps, "total": spec_total},
        "metrics": {
            "race-plain-ms": plain_total,
            "race-speculative-ms": spec_total,
            "race-speedup": round(plain_total / spec_total, 12),
            "race-rounds": spec.counters.target_passes,
            "race-tokens": n,
            "race-tokens-per-pass": round(spec.tokens_per_pass, 12),
        },
    }


def _speculative_steps(trace: engine.Trace, draft_time: float, verify_time: float) -> list[dict[str, Any]]:
    """The speculative lane: per round, its draft steps (each with the word drafted and its fate), then the
    verification pass with the tokens it emits (the accepted drafts, then the correction or the bonus)."""
    rounds: dict[int, list[engine.Event]] = {}
    for event in trace.events:
        rounds.setdefault(event.round, []).append(event)
    steps: list[dict[str, Any]] = []
    clock = 0.0
    for events in rounds.values():
        drafted, final = events[:-1], events[-1]  # the engine records the correction or bonus last
        for e in drafted:
            steps.append(
                {"kind": "draft", "start": _ms(clock), "end": _ms(clock + draft_time), "word": e.word, "fate": e.kind}
            )
            clock += draft_time
        emits = [[e.word, e.kind] for e in drafted if e.kind == "accepted"] + [[final.word, final.kind]]
        steps.append({"kind": "verify", "start": _ms(clock), "end": _ms(clock + verify_time), "emits": emits})
        clock += verify_time
    return steps


def _ms(seconds: float) -> float:
    return round(seconds * 1e3, 9)


def _presets(s: _Setup) -> list[dict[str, str]]:
    """The chosen presets' numbers and where each comes from, for the page to show beside the result."""
    hw, gb = s.hardware, 1e9
    return [
        {
            "role": "Hardware",
            "name": hw.name,
            "numbers": f"{hw.bandwidth / 1e12:g} TB/s, {hw.flops / 1e12:g} TFLOP/s dense 16-bit, {hw.memory / gb:g} GB",
            "source": hw.source,
        },
        *(
            {
                "role": role,
                "name": m.name,
                "numbers": f"{m.parameters / gb:.2f}B parameters, {plural(m.layers, 'layer')}, "
                f"{plural(m.kv_heads, 'KV head')} of {m.head_dim}, {s.bits}-bit weights",
                "source": m.source,
            }
            for role, m in (("Target", s.target), ("Draft", s.draft))
        ),
    ]


# Figures --------------------------------------------------------------------------------------------------------


def _roofline_figure(s: _Setup, c: costs.SpeculativeCost) -> Figure:
    """Attainable FLOP/s against arithmetic intensity, log-log, with the three passes of the chosen setting.

    The axes hold log10 of the values, labelled with the values themselves: the same picture as Plotly's log axes,
    drawn the same by the page's first-paint sketch, which reads linear axes only.
    """
    hw = s.hardware
    ridge = hw.flops / hw.bandwidth  # FLOP per byte where the two roofs meet
    lo, hi = 0.25, 4 * max(ridge, c.verify.intensity, 1.0)
    tera = 1e12
    roof_y = [hw.bandwidth * lo / tera, hw.flops / tera, hw.flops / tera]
    roof = line(
        _log([lo, ridge, hi]), _log(roof_y), name=f"roof: {hw.name}", role="discarded", hover="roof<extra></extra>"
    )
    ridge_line = line(
        _log([ridge, ridge]),
        _log([roof_y[0], roof_y[1]]),
        name=f"ridge: {ridge:.0f} FLOP/byte",
        role="discarded",
        dash="dot",
        hover=f"ridge: {ridge:.0f} FLOP per byte<extra></extra>",
    )
    # The plain pass is a wide ring: at small batches a draft step sits at the same intensity, inside it.
    ring, dot = {"symbol": "circle-open", "size": 20, "line": {"width": 3}}, {"size": 12, "line": {"width": 1}}
    points = [
        (c.plain, f"plain pass ({_tokens(c.plain.tokens)})", "target", ring),
        (c.verify, f"verification ({_tokens(c.verify.tokens)})", "bonus", dot | {"symbol": "diamond"}),
        (c.draft, f"draft step ({_tokens(c.draft.tokens)})", "draft", dot | {"symbol": "square"}),
    ]
    marks = [
        line(
            _log([p.intensity]),
            _log([p.flops / p.time / tera]),
            name=name,
            role=role,
            mode="markers",
            marker=style,
            hover=f"{name}: {p.intensity:.3g} FLOP/byte, {p.flops / p.time / tera:.4g} TFLOP/s, "
            f"{p.time * 1e3:.3f} ms, {p.bound}-bound<extra></extra>",
        )
        for p, name, role, style in points
    ]
    x_ticks = [10.0**k for k in range(-1, 6) if lo <= 10.0**k <= hi]
    y_ticks = [10.0**k for k in range(-3, 5) if roof_y[0] <= 10.0**k <= roof_y[1] * 1.5]
    axes = layout(
        x_title="FLOP per byte read (log scale)",
        y_title="attained TFLOP/s (log scale)",
        xaxis={"tickvals": _log(x_ticks), "ticktext": [f"{t:g}" for t in x_ticks]},
        yaxis={"tickvals": _log(y_ticks), "ticktext": [f"{t:g}" for t in y_ticks]},
        height=340,
    )
    return figure([roof, ridge_line, *marks], axes)


def _batch_figure(s: _Setup) -> Figure:
    """Speedup against batch size (log2 on x) at the chosen gamma, alpha and context, with break-even at 1x."""
    speedups = [round(s.cost(batch=b).speedup, 9) for b in BATCHES]
    fits = [s.memory(b) <= s.hardware.memory for b in BATCHES]
    x = [float(i) for i in range(len(BATCHES))]  # log2 of the batch size
    you = BATCHES.index(s.batch)
    hover = [f"batch {b:,}: {v:.2f}{TIMES}<extra></extra>" for b, v in zip(BATCHES, speedups, strict=True)]
    curve = line(x, speedups, name=f"speedup, {GAMMA} = {s.gamma}", role="target", mode="lines+markers")
    curve["hovertemplate"] = hover
    ring = {"size": 15, "symbol": "circle-open", "line": {"width": 3}}
    data = [
        curve,
        line(
            x,
            [1.0] * len(x),
            name=f"break-even (1{TIMES})",
            role="discarded",
            dash="dot",
            hover="break-even<extra></extra>",
        ),
        line(
            [x[you]],
            [speedups[you]],
            name=f"batch {s.batch:,}",
            role="bonus",
            mode="markers",
            marker=ring,
            hover=hover[you],
        ),
    ]
    over = [i for i, ok in enumerate(fits) if not ok]
    if over:
        data.append(
            line(
                [x[i] for i in over],
                [speedups[i] for i in over],
                name="does not fit in memory",
                role="rejected",
                mode="markers",
                marker={"symbol": "x", "size": 10},
                hover="weights and KV cache exceed the memory<extra></extra>",
            )
        )
    top = max(2.0, max(speedups) * 1.15)
    axes = layout(
        x_title="batch size (sequences decoded together)",
        y_title=f"speedup ({TIMES})",
        y_range=[0, top],
        xaxis={"tickvals": x, "ticktext": [f"{b:,}" for b in BATCHES], "range": [-0.4, len(x) - 0.6]},
        height=320,
    )
    return figure(data, axes)


def _tokens(n: int) -> str:
    return f"{n:,} token" + ("" if n == 1 else "s")


def _log(values: list[float]) -> list[float]:
    return [round(math.log10(v), 9) for v in values]
