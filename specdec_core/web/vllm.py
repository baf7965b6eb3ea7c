"""The Tuning page's "your own vLLM numbers" widget: paste /metrics or the log line, read alpha per position.

``tuning.vllm`` reads what the reader pasted with ``vllm_metrics.read_counts`` and analyses it with
``vllm_metrics.analyse``, and recommends gamma under the reader's choice of cost model: the paper's gamma c + 1 at
draft cost c (``costmodel`` "c"), or the Cost page's roofline (``costmodel`` "roofline": hardware, target and
draft presets of ``costs``, batch size and context, priced by ``vllm_metrics.roofline_round_cost``). The roofline's
recommendation is returned under either choice (``roofline``), with the Cost page's query for the same settings.
Text it cannot read is an answer, not a failure: the result
has ``status`` "error" and the parser's message, which the widget shows in place (a wrong *type* of argument is
still an error). An empty text area gives ``status`` "empty". Every result carries ``example``, the two /metrics
dumps the Example button fills in (``data/vllm_metrics_earlier.txt`` and ``..._later.txt``, invented numbers in
vLLM's format).

Non-goals: fetching /metrics (the text never leaves the page); the Cost page's weight precision (16-bit weights
here) and its race.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .. import costs, vllm_metrics
from ..costs import HARDWARE, MODELS
from ..vllm_metrics import Analysis
from . import handler
from .args import check_choice, check_int, check_number
from .cost import BATCHES, CONTEXTS, DRAFTS, TARGETS
from .draft import MAX_PAGE_GAMMA
from .plot import ALPHA, GAMMA, TIMES, Figure, PlotTrace, figure, layout, line, plural, rounded

#: A superscript k, for the curve alpha^k in a legend.
_SUP_K = "\N{MODIFIER LETTER SMALL K}"
#: The recommendation is searched up to here, as the calculator's.
_SEARCH_GAMMA = 32
#: Fewer verified draft tokens than this, and a test that finds no trend says how little it could see.
_FEW_TOKENS = 1000
#: The cost models the reader chooses between: the paper's draft cost c, or the roofline of the Cost page.
COST_MODELS = ["c", "roofline"]
#: The roofline's settings, defaulting as the Cost page's: an 8B target, a 1B draft, one H100, batch 1, 1,024 tokens.
_ROOFLINE = {"hardware": "h100", "target": "llama-3.1-8b", "draft": "llama-3.2-1b", "batch": 1, "context": 1024}


@lru_cache(maxsize=1)
def example() -> dict[str, str]:
    """The Example button's text: an earlier and a later /metrics dump of one two-engine server."""
    from importlib import resources

    data = resources.files("specdec_core") / "data"
    return {
        "metrics": (data / "vllm_metrics_earlier.txt").read_text("utf-8"),
        "later": (data / "vllm_metrics_later.txt").read_text("utf-8"),
    }


#: The handler's test example: one log line (1,000 drafts of 4 tokens, 2,360 accepted: 800 / 640 / 512 / 408).
_EXAMPLE_LINE = (
    "INFO 12-01 09:30:00 [metrics.py:96] SpecDecoding metrics: Mean acceptance length: 3.36, Accepted throughput: "
    "236.00 tokens/s, Drafted throughput: 400.00 tokens/s, Accepted: 2360 tokens, Drafted: 4000 tokens, "
    "Per-position acceptance rate: 0.800, 0.640, 0.512, 0.408, Avg Draft acceptance rate: 59.0%"
)


# --8<-- [start:tuning_vllm]
@handler("tuning.vllm", example={"metrics": _EXAMPLE_LINE, "later": "", "cost": 0.05, "costmodel": "c"} | _ROOFLINE)
def analyse_metrics(
    metrics: str = "",
    later: str = "",
    cost: float = 0.05,
    costmodel: str = "c",
    hardware: str = "h100",
    target: str = "llama-3.1-8b",
    draft: str = "llama-3.2-1b",
    batch: int = 1,
    context: int = 1024,
) -> dict[str, Any]:
    """The analysis of a pasted /metrics dump (minus an earlier one) or SpecDecoding log lines, with gamma
    recommended at draft cost c or on the roofline (``costmodel``)."""
    c = check_number(cost, "cost", 0.0, 10.0)
    chosen = check_choice(costmodel, "costmodel", COST_MODELS)
    roof = _Roofline(hardware, target, draft, batch, context)
    base: dict[str, Any] = {"example": example(), "metrics": {}}
    if isinstance(metrics, str) and isinstance(later, str) and not metrics.strip() and not later.strip():
        return base | {"status": "empty", "message": "Paste vLLM's /metrics output or its log line above."}
    try:
        counts = vllm_metrics.read_counts(metrics, later)
    except ValueError as exc:  # the reader's text: shown beside the text area, in the parser's words
        return base | {"status": "error", "message": str(exc)}
    # The search reaches the server's own gamma when it drafts more than 32 (a dump with 40 positions).
    result = vllm_metrics.analyse(counts, c, max(_SEARCH_GAMMA, counts.gamma))
    paper, roofline = _paper(result), roof.pricing(result)
    pricing = roofline if chosen == "roofline" else paper
    return base | {
        "status": "ok",
        "costmodel": chosen,
        "metrics": _metrics(result, pricing),
        "summary": _summary(result),
        "verdict": {"kind": result.depth.verdict, "text": _verdict(result), "evidence": _evidence(result)},
        "recommendation": _recommendation(result, pricing),
        "roofline": roof.summary(result, roofline),
        "notes": list(result.notes),
        "rows": _rows(result),
        "figures": {"positions": _positions_figure(result), "gamma": _gamma_figure(result, pricing)},
    }


# --8<-- [end:tuning_vllm]


@dataclass(frozen=True)
class _Pricing:
    """A cost model's recommendation: the round cost in plain target passes and the best gamma under each model."""

    round_cost: Callable[[int], float]
    best_profile: int
    best_iid: int
    where: str  # opens the recommendation: "At draft cost c = 0.05", "On the roofline (...)"
    model: str  # names the model after a speedup: "by Thm 3.8's cost model"
    short: str  # the setting in a legend: "c = 0.05", "batch 1"

    def speedup(self, tokens: tuple[float, ...], gamma: int) -> float:
        """Tokens per unit of time against plain decoding's one token per pass: the speedup at ``gamma``."""
        return tokens[gamma] / self.round_cost(gamma)


def _paper(a: Analysis) -> _Pricing:
    """Leviathan et al. 2023, Theorem 3.8's model: a round of gamma drafts costs gamma c + 1 target passes."""
    return _Pricing(
        vllm_metrics.paper_round_cost(a.cost),
        a.best_profile,
        a.best_iid,
        f"At draft cost c = {a.cost:g}",
        "by Thm 3.8's cost model",
        f"c = {a.cost:g}",
    )


def _power_of_two(value: object, name: str, choices: list[int]) -> int:
    n = check_int(value, name, choices[0], choices[-1])
    if n not in choices:
        raise ValueError(f"{name} must be a power of two from {choices[0]:,} to {choices[-1]:,} (got {n})")
    return n


class _Roofline:
    """The checked roofline settings (the Cost page's choices, 16-bit weights) and what they imply for gamma."""

    def __init__(self, hardware: object, target: object, draft: object, batch: object, context: object) -> None:
        self.hardware = HARDWARE[check_choice(hardware, "hardware", list(HARDWARE))]
        self.target = MODELS[check_choice(target, "target", TARGETS)]
        self.draft = MODELS[check_choice(draft, "draft", DRAFTS)]
        self.batch = _power_of_two(batch, "batch", BATCHES)
        self.context = _power_of_two(context, "context", CONTEXTS)

    def pricing(self, a: Analysis) -> _Pricing:
        cost = vllm_metrics.roofline_round_cost(
            self.target, self.draft, self.hardware, batch=self.batch, context=self.context
        )
        setting = (
            f"{self.target.name} verifying {self.draft.name} on {self.hardware.name}, batch {self.batch:,}, "
            f"{self.context:,} tokens of context"
        )
        return _Pricing(
            cost,
            vllm_metrics.best_gamma(a.profile[: a.reach + 1], cost),
            vllm_metrics.best_gamma(a.iid, cost),
            f"On the roofline ({setting})",
            "on the roofline",
            f"batch {self.batch:,}",
        )

    def summary(self, a: Analysis, p: _Pricing) -> dict[str, Any]:
        """The roofline's recommendation, its draft cost and ridge, and the Cost page's query for these settings."""
        ridge = costs.ridge_tokens(self.target, self.hardware, context=self.context, batch=self.batch)
        # The largest gamma whose verification pass of batch * (gamma + 1) tokens is still memory-bound.
        last = math.floor(ridge / self.batch) - 1
        plain, step = (
            costs.pass_cost(m, self.hardware, tokens=self.batch, context=self.context, batch=self.batch)
            for m in (self.target, self.draft)
        )
        c = step.time / plain.time
        if last >= _SEARCH_GAMMA:
            bound = f"the verification pass stays memory-bound for every {GAMMA} up to {_SEARCH_GAMMA}"
        elif last >= 1:
            bound = (
                f"the verification pass of {self.batch:,} {TIMES} ({GAMMA} + 1) tokens stays memory-bound up to "
                f"{GAMMA} = {last} (the ridge is at {ridge:,.0f} tokens per pass); beyond, every draft token "
                "verified costs arithmetic time"
            )
        else:
            bound = f"the verification pass is compute-bound at every {GAMMA} (the ridge is {ridge:,.0f} tokens)"
        text = f"Here a draft step costs c = {c:.3f} of a plain target pass, and {bound}."
        # As the Cost page warns: a roofline times passes, not whether the models and caches fit.
        need = costs.memory_needed(self.target, self.draft, context=self.context, batch=self.batch)
        fits = need <= self.hardware.memory
        if not fits:
            text += (
                f" These models do not fit: the weights and KV caches need {need / 1e9:,.1f} GB, and this hardware "
                f"has {self.hardware.memory / 1e9:,.0f} GB. The times assume they fit."
            )
        text += costs.head_mismatch(self.target, self.draft)
        return {
            "best-profile": p.best_profile,
            "best-iid": p.best_iid,
            "speedup": round(p.speedup(a.profile, p.best_profile), 12),
            "draft-cost": round(c, 12),
            "memory-bound-to": last,
            "memory-fits": int(fits),
            "text": text,
            "query": {
                "hardware": self.hardware.key,
                "target": self.target.key,
                "draft": self.draft.key,
                "batch": self.batch,
                "context": self.context,
                "alpha": round(a.alpha, 2),
                # The Cost page's gamma runs 1..MAX_PAGE_GAMMA: the i.i.d. recommendation, as that page is i.i.d.
                "gamma": min(max(p.best_iid, 1), MAX_PAGE_GAMMA),
            },
        }


def _metrics(a: Analysis, p: _Pricing) -> dict[str, float | int]:
    g = a.counts.gamma
    return {
        "accept-rate": round(a.accept_rate, 12),
        "tokens-per-pass": round(a.tokens_per_pass, 12),
        "alpha": round(a.alpha, 12),
        "optimal-gamma": p.best_profile,
        "optimal-gamma-iid": p.best_iid,
        "gamma": g,
        "speedup": round(p.speedup(a.profile, g), 12),
        "optimal-speedup": round(p.speedup(a.profile, p.best_profile), 12),
    }


def _summary(a: Analysis) -> str:
    c = a.counts
    window = {
        "one dump": "the server's whole life (one dump: counters are cumulative; paste an earlier dump too to "
        "measure a window)",
        "difference of two dumps": "the window between the two dumps",
        "log": f"{c.series} logging interval{'s' if c.series > 1 else ''}",
    }[c.source]
    engines = f", summed over {c.series} engines" if c.source != "log" and c.series > 1 else ""
    return (
        f"{plural(c.drafts, 'draft')} of up to {plural(c.gamma, 'token')} ({GAMMA} = {c.gamma}): "
        f"{c.draft_tokens:,} draft tokens, "
        f"{c.accepted:,} accepted, over {window}{engines}."
    )


def _verdict(a: Analysis) -> str:
    t, g = a.depth, a.counts.gamma
    first = a.conditional[0]
    known = [x for x in a.conditional if x is not None]
    span = f"from {first:.2f} at position 1 to {known[-1]:.2f} at position {len(known)}" if first is not None else ""
    if t.verdict == "falls" and t.slope is not None:
        share = -t.slope / t.pooled
        return (
            f"Acceptance falls with depth: {ALPHA} at each position drops by about {-t.slope:.3f} per position "
            f"({share:.0%} of {ALPHA} = {t.pooled:.2f}), {span}. The best {GAMMA} is shorter than the i.i.d. "
            "formula's, which assumes every position keeps the first one's rate."
        )
    if t.verdict == "rises" and t.slope is not None:
        return (
            f"Acceptance rises with depth: {ALPHA} at each position grows by about {t.slope:.3f} per position, "
            f"{span}. Drafts that get past the first tokens tend to continue (easy stretches of text), so the best "
            f"{GAMMA} is longer than the i.i.d. formula's."
        )
    if t.verdict == "slight" and t.slope is not None:
        return (
            f"A trend too small to matter: {ALPHA} at each position changes by about {t.slope:+.4f} per position "
            f"({span}). At these counts the test detects it, but it is under {vllm_metrics.MIN_SLOPE:g} per "
            "position, so the i.i.d. formulas on this site describe this drafter."
        )
    if t.verdict == "flat":
        # "Flat" is the test finding no trend, which few tokens cannot tell from a large one (1.00 then 0.00).
        few = sum(t.trials) < _FEW_TOKENS
        return (
            f"No trend detected with depth: {ALPHA} at each position ({span}) stays within chance of "
            f"{t.pooled:.3f}, so the i.i.d. formulas on this site describe this drafter"
            + (
                f" as far as {plural(sum(t.trials), 'verified token')} can tell: more would show a smaller trend."
                if few
                else "."
            )
        )
    if g == 1:
        return f"One draft position ({GAMMA} = 1): there is no depth to compare, so the i.i.d. model cannot be tested."
    return f"Every verified draft token went the same way ({ALPHA} = {t.pooled:.2f}): there is no trend to test."


def _p_text(p: float) -> str:
    return "p < 0.0001" if p < 1e-4 else f"p = {p:.4f}"


def _evidence(a: Analysis) -> str:
    t = a.depth
    counts = (
        f"{plural(a.counts.drafts, 'draft')}, {plural(sum(t.trials), 'verified draft token')}, "
        f"{sum(t.successes):,} accepted, over {plural(a.counts.gamma, 'position')}"
    )
    if t.z is None or t.p_value is None:
        return f"No test possible ({counts})."
    approx = " (counts rebuilt from the log line's rounded rates)" if not a.counts.exact else ""
    return (
        f"Cochran-Armitage trend test of the acceptance at each position against depth: z = {t.z:.2f}, two-sided "
        f"{_p_text(t.p_value)}; a trend is reported when p < {t.threshold:g}. From {counts}{approx}."
    )


def _recommendation(a: Analysis, p: _Pricing) -> str:
    g, bp, bi = a.counts.gamma, p.best_profile, p.best_iid
    cost = p.where
    if bp == 0:
        return f"{cost}, speculation does not pay under the measured profile: plain decoding is faster."
    speed = f"{p.speedup(a.profile, bp):.2f}{TIMES} {p.model}"
    if bp == g:
        text = f"{cost}, your {GAMMA} = {g} is already the fastest under the measured profile ({speed})"
    else:
        text = (
            f"{cost}, {GAMMA} = {bp} is fastest under the measured profile ({speed}, against "
            f"{p.speedup(a.profile, g):.2f}{TIMES} at your {GAMMA} = {g})"
        )
    text += "." if bp == bi else f"; the i.i.d. fit would say {GAMMA} = {bi}."
    last = a.reach
    if bp == last and p.speedup(a.profile, last) >= p.speedup(a.profile, last - 1):
        text += (
            f" The search stops at {GAMMA} = {last}"
            + (f", {last - g} past yours: further out nothing measured supports the profile" if last > g else "")
            + "; a longer draft may be faster still."
        )
    if bp > g:
        text += f" Beyond {GAMMA} = {g} the profile is extrapolated from the fitted trend, not measured."
    if bp != g:
        # The knob, as vLLM 0.11.0 names it (docs/tuning.md cites its speculative decoding page).
        text += f' To try it, set "num_speculative_tokens": {bp} in --speculative-config' + (
            ", and paste the new counters here." if bp > g else "."
        )
    return text


def _rows(a: Analysis) -> list[dict[str, Any]]:
    return [
        {
            "position": j + 1,
            "accepted": n_j,
            "rate": round(a.per_position[j], 12),
            "conditional": None if a.conditional[j] is None else round(a.conditional[j] or 0.0, 12),
            "iid": round(a.alpha ** (j + 1), 12),
        }
        for j, n_j in enumerate(a.counts.per_position)
    ]


def _positions_figure(a: Analysis) -> Figure:
    """Per-position acceptance against the i.i.d. curve alpha^k, and alpha at each depth against the fitted alpha."""
    ks = list(range(1, a.counts.gamma + 1))
    conditional = [(k, c) for k, c in zip(ks, a.conditional, strict=True) if c is not None]
    hover = "position %{x}: %{y:.3f}<extra>%{fullData.name}</extra>"
    data: list[PlotTrace] = [
        line(
            ks,
            rounded(a.per_position),
            name="measured: accepted at k / drafts",
            role="target",
            mode="lines+markers",
            hover=hover,
        ),
        line(
            ks,
            rounded([a.alpha**k for k in ks]),
            name=f"i.i.d. fit: {ALPHA}{_SUP_K}",
            role="draft",
            dash="dash",
            hover=hover,
        ),
        line(
            [k for k, _ in conditional],
            rounded([c for _, c in conditional]),
            name=f"{ALPHA} at depth k",
            role="accepted",
            mode="markers",
            marker={"symbol": "diamond", "size": 10},
            hover=hover,
        ),
        line(
            [0.8, a.counts.gamma + 0.2],
            [round(a.alpha, 12)] * 2,
            name=f"fitted {ALPHA} = {a.alpha:.3f}",
            role="discarded",
            dash="dot",
        )
        | {"hoverinfo": "skip"},
    ]
    axis = {"dtick": 1, "range": [0.6, a.counts.gamma + 0.4]}
    return figure(
        data,
        layout(
            x_title="draft position k (vLLM 0.11.0's label + 1)",
            y_title="acceptance",
            y_range=[0, 1.02],
            xaxis=axis,
            height=340,
        ),
    )


def _gamma_figure(a: Analysis, p: _Pricing) -> Figure:
    """Expected tokens per target pass against gamma under both models, the reader's gamma and the recommendations."""
    g = a.counts.gamma
    top = min(len(a.profile) - 1, max(12, g + 4, p.best_profile + 2, p.best_iid + 2))
    xs = list(range(1, top + 1))
    hover = f"{GAMMA} = %{{x}}: %{{y:.3f}} tokens per pass<extra>%{{fullData.name}}</extra>"
    measured = list(range(1, g + 1))
    beyond = list(range(g, top + 1))

    def mark(x: int, tokens: tuple[float, ...], name: str, role: str, symbol: str, size: int) -> PlotTrace:
        style = {"symbol": symbol, "size": size}
        return line([x], [round(tokens[x], 12)], name=name, role=role, mode="markers", marker=style, hover=hover)

    data: list[PlotTrace] = [
        line(
            xs,
            rounded([a.iid[x] for x in xs]),
            name=f"i.i.d. fit ({ALPHA} = {a.alpha:.3f})",
            role="draft",
            dash="dash",
            hover=hover,
        ),
        line(
            measured,
            rounded([a.profile[x] for x in measured]),
            name="measured profile",
            role="target",
            mode="lines+markers",
            hover=hover,
        ),
        line(
            beyond,
            rounded([a.profile[x] for x in beyond]),
            name="profile, extrapolated",
            role="target",
            dash="dot",
            hover=hover,
        ),
        mark(g, a.profile, f"your {GAMMA} = {g}", "target", "circle-open", 14),
    ]
    if p.best_profile:
        data.append(
            mark(p.best_profile, a.profile, f"best {GAMMA} = {p.best_profile} at {p.short}", "rejected", "star", 15)
        )
    if p.best_iid and p.best_iid != p.best_profile:
        data.append(mark(p.best_iid, a.iid, f"i.i.d. best {GAMMA} = {p.best_iid}", "draft", "star-open", 13))
    axis = {"dtick": 2 if top > 16 else 1}
    return figure(
        data,
        layout(
            x_title=f"speculation length {GAMMA}",
            y_title="expected tokens per target pass",
            y_range=[0, max(a.iid[top], a.profile[top]) * 1.1 + 0.2],
            xaxis=axis,
            height=340,
        ),
    )
