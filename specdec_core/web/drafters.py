"""The Drafters page (docs/drafters.md): where drafts come from, on the bundled novel, and a lossy rule.

``drafters.compare`` runs the three lossless drafters of ``drafters.py`` (the bigram draft model, prompt lookup,
independent heads) through the engine on one passage of the novel, with the n-gram pair's trigram as the target,
and measures acceptance per draft position and tokens per target pass. ``drafters.typical`` runs the bigram draft
under the exact rule and under Medusa's typical acceptance, and gives the lossy rule's distance from the target.
``drafters.published`` is the table of published results, with Eq. 1 of Leviathan et al. (2023) evaluated where a
paper gives alpha.

Each run continues the passage ``SEGMENT`` tokens at a time, again and again from the same passage (one seeded
random stream throughout), so the numbers describe drafting *right after this passage*, not after wherever a long
generation wanders. Non-goals: timing (no draft costs here), trees of candidates.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, cast

from .. import drafters, engine, models, policies, theory
from ..distributions import acceptance_rate, residual, total_variation
from . import handler
from .args import check_choice, check_int, check_number, check_seed
from .draft import MAX_PAGE_GAMMA, ngram_pair, top_tokens
from .plot import GAMMA, PIECE_AXIS, Figure, PlotTrace, bar, figure, layout, line, rounded

#: The two passages: a sentence of the novel said twice and begun a third time, cut inside a word (the trigram
#: target cannot see the repetition, so lookup's copies pay off where the novel makes the next piece likely), and
#: the opening of chapter 2 as it stands.
PASSAGES: dict[str, str] = {
    "repetitive": (
        "Elizabeth was surprised, but agreed to it immediately. Elizabeth was surprised, but agreed to it "
        "immediately. Elizabeth was sur"
    ),
    "ordinary": (
        "Mr. Bennet was among the earliest of those who waited on Mr. Bingley. He had always intended to visit "
        "him, though to the last always assuring his wife that he should not go;"
    ),
}
#: Tokens per continuation of the passage.
SEGMENT = 16
#: Most tokens one call may generate per drafter (about a second in Pyodide for all three).
MAX_TOKENS = 400
#: How the page names the drafters, in the order it shows them.
LABELS = {"model": "draft model (bigram)", "lookup": "prompt lookup", "heads": "independent heads"}
#: The same, broken in two for the bar chart's axis (it must fit 390 px).
SHORT = {"model": "draft model<br>(bigram)", "lookup": "prompt<br>lookup", "heads": "independent<br>heads"}
ROLES = {"model": "draft", "lookup": "bonus", "heads": "correction"}


@dataclass
class Tally:
    """What a drafter did over all continuations: counters, and per draft position the checked and accepted."""

    gamma: int
    free: bool = False  # no draft model runs: lookup copies from the context, heads run in the target's pass
    passes: int = 0
    emitted: int = 0
    drafted: int = 0
    accepted: int = 0
    draft_calls: int = 0  # forward passes of a draft model (0 for prompt lookup)
    rounds_with_drafts: int = 0
    checked: list[int] = field(default_factory=list)
    kept: list[int] = field(default_factory=list)
    sample: list[list[str]] = field(default_factory=list)  # [[text, "draft" | "target"], ...] of the first one
    starts: list[list[int]] = field(default_factory=list)  # the context at the start of every round

    def __post_init__(self) -> None:
        self.checked, self.kept = [0] * self.gamma, [0] * self.gamma

    def add(self, pair: models.Pair, prompt: list[int], trace: engine.Trace) -> None:
        c = trace.counters
        self.passes, self.emitted = self.passes + c.target_passes, self.emitted + c.emitted
        self.drafted, self.accepted = self.drafted + c.drafted, self.accepted + c.accepted
        self.draft_calls += 0 if self.free else c.draft_steps
        context = list(prompt)
        for round_ in trace.rounds:
            self.starts.append(list(context))
            context += round_.tokens
            self.rounds_with_drafts += round_.gamma > 0
            for pos in round_.positions:
                if pos.outcome != "discarded":
                    self.checked[pos.index] += 1
                    self.kept[pos.index] += pos.outcome == "accepted"
        if not self.sample:
            self.sample = [
                [pair.decode([e.token], show_bytes=True), "draft" if e.kind == "accepted" else "target"]
                for e in trace.events
                if e.emitted
            ]

    def by_position(self) -> list[float | None]:
        """Accepted / checked at each draft position (None where no draft reached it)."""
        return [k / n if n else None for k, n in zip(self.kept, self.checked, strict=True)]

    def metrics(self) -> dict[str, float]:
        return {
            "accept-rate": self.accepted / self.drafted if self.drafted else 0.0,
            "tokens-per-pass": self.emitted / self.passes if self.passes else 0.0,
            # Prompt lookup's drafts are copies, not model calls, and Medusa's heads run on the target's hidden
            # state inside its own pass (Cai et al. 2024): neither costs a draft model's forward pass.
            "draft-calls-per-token": self.draft_calls / self.emitted if self.emitted else 0.0,
        }


def play(
    pair: models.Pair,
    prompt: list[int],
    gamma: int,
    tokens: int,
    seed: int,
    drafter: engine.Drafter | None = None,
    rule: engine.RoundRule | None = None,
) -> Tally:
    """Continue ``prompt`` SEGMENT tokens at a time until ``tokens`` are out, on the engine; tally what happened."""
    free = isinstance(drafter, drafters.PromptLookupDrafter | drafters.IndependentHeadsDrafter)
    rng, tally = random.Random(seed), Tally(gamma, free)
    while tally.emitted < tokens:
        budget = min(SEGMENT, tokens - tally.emitted)
        policy = policies.FixedPolicy(gamma)
        run = engine.SpeculativeRun(
            pair, policy, max_tokens=budget, rng=rng, context=prompt, drafter=drafter, rule=rule
        )
        run.advance(budget)
        tally.add(pair, prompt, run.trace)
    return tally


def _make_drafter(name: str, pair: models.Pair) -> engine.Drafter:
    if name == "lookup":
        return drafters.PromptLookupDrafter(len(pair.vocab))
    if name == "heads":
        return drafters.IndependentHeadsDrafter(pair.draft)
    return drafters.ModelDrafter(pair.draft)


@lru_cache(maxsize=1)
def _pair_and_heads() -> tuple[models.Pair, engine.Drafter]:
    # The heads drafter is kept between calls: its marginals depend on the last token alone, and each costs a pass
    # over the bigram counts (66 of them were 0.3 s of every drafters.compare call natively), so the next slider
    # move reuses those it shares with the last.
    pair = ngram_pair(1.0, 0, 1.0)
    return pair, _make_drafter("heads", pair)


@lru_cache(maxsize=8)
def _tallies(name: str, gamma: int, tokens: int, seed: int) -> dict[str, Tally]:
    # Every drafter runs whichever one the page highlights: choosing another reuses the runs (read, never changed).
    pair, heads = _pair_and_heads()
    prompt = pair.encode(PASSAGES[name])
    made = {d: heads if d == "heads" else _make_drafter(d, pair) for d in drafters.DRAFTER_NAMES}
    return {d: play(pair, prompt, gamma, tokens, seed, drafter=drafter) for d, drafter in made.items()}


def _checked(passage: object, gamma: object, tokens: object, seed: object) -> tuple[str, int, int, int]:
    return (
        check_choice(passage, "passage", tuple(PASSAGES)),
        check_int(gamma, "gamma", 1, MAX_PAGE_GAMMA),
        check_int(tokens, "tokens", SEGMENT, MAX_TOKENS),
        check_seed(seed),
    )


# --8<-- [start:drafters_compare]
@handler("drafters.compare", example={"passage": "repetitive", "drafter": "lookup", "gamma": 4, "tokens": 64})
def compare(
    passage: str = "repetitive", drafter: str = "lookup", gamma: int = 4, tokens: int = 160, seed: int = 0
) -> dict[str, Any]:
    """The three lossless drafters on one passage: acceptance per draft position and tokens per target pass."""
    name, g, n, s = _checked(passage, gamma, tokens, seed)
    chosen = check_choice(drafter, "drafter", drafters.DRAFTER_NAMES)
    tallies = _tallies(name, g, n, s)
    table = [
        {"drafter": d, "label": LABELS[d], "lossless": drafters.LOSSLESS[d], "rounds": t.passes}
        | {"rounds_with_drafts": t.rounds_with_drafts}
        | {k: round(v, 12) for k, v in t.metrics().items()}
        for d, t in tallies.items()
    ]
    return {
        "figures": {"positions": _positions_figure(tallies, chosen), "passes": _passes_figure(tallies, chosen)},
        "metrics": tallies[chosen].metrics(),
        "table": table,
        "sample": tallies[chosen].sample,
        "passage": PASSAGES[name],
        "segment": SEGMENT,
    }


# --8<-- [end:drafters_compare]


def _positions_figure(tallies: dict[str, Tally], chosen: str) -> Figure:
    data: list[PlotTrace] = []
    for d, t in tallies.items():
        x = list(range(1, t.gamma + 1))
        width = 4 if d == chosen else 2
        trace = line(x, rounded_or_none(t.by_position()), name=LABELS[d], role=ROLES[d], mode="lines+markers")
        trace["line"] |= {"width": width}
        trace["marker"] = {"size": 10 if d == chosen else 6}
        trace["hovertemplate"] = "position %{x}: %{y:.3f}<extra>" + LABELS[d] + "</extra>"
        data.append(trace)
    axes = layout(x_title="draft position i", y_title="accepted ÷ checked at position i", y_range=[0, 1.05])
    axes["xaxis"] |= {"dtick": 1}
    return figure(data, axes)


def _passes_figure(tallies: dict[str, Tally], chosen: str) -> Figure:
    names = [SHORT[d] for d in tallies]
    values = rounded([t.metrics()["tokens-per-pass"] for t in tallies.values()])
    trace = bar(names, values, name="tokens per target pass", hover="%{y:.3f} tokens per pass<extra></extra>")
    trace["marker"] = {
        "color": [("#0072B2" if d == chosen else "#8C8C8C") for d in tallies],
        "pattern": {"shape": ["" if d == chosen else "/" for d in tallies]},
    }
    gamma = next(iter(tallies.values())).gamma
    axes = layout(x_title=None, y_title="tokens per target pass", y_range=[0, gamma + 1.2], showlegend=False)
    axes["shapes"] = [
        {"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": 1, "y1": 1, "line": {"dash": "dot", "width": 1}}
    ]
    return figure([trace], axes)


def rounded_or_none(values: list[float | None]) -> list[float]:
    """Rounded rates, None (JSON null: a gap in the line) where no draft reached the position."""
    # The cast is for ``plot.line``'s annotation only: Plotly draws a null y as a gap, which is what we mean.
    return cast(list[float], [None if v is None else round(v, 12) for v in values])


# --8<-- [start:drafters_typical]
@handler("drafters.typical", example={"epsilon": 0.01, "delta": 0.02, "gamma": 4, "tokens": 64})
def typical(
    epsilon: float = 0.01,
    delta: float = 0.02,
    gamma: int = 4,
    tokens: int = 160,
    seed: int = 0,
    passage: str = "ordinary",
) -> dict[str, Any]:
    """Exact rule against Medusa's typical acceptance, same drafts (the bigram), same seed: acceptance and distance.

    ``tv-distance`` is exact, not sampled: at the start of every round of the typical run, the law of the first
    token a round emits is q 1_A + q(not A) p (``drafters.typical_distance``); we average its distance from p.
    ``tv-distance-exact`` is the same for the exact rule at the passage's end, where that law is
    min(p, q) + (1 - beta) residual(p, q) = p (Leviathan et al. 2023, Appendix A.1): 0 up to rounding.
    """
    name, g, n, s = _checked(passage, gamma, tokens, seed)
    eps, dlt = check_number(epsilon, "epsilon", 0, 1), check_number(delta, "delta", 0, 1)
    pair = ngram_pair(1.0, 0, 1.0)
    prompt = pair.encode(PASSAGES[name])
    exact = play(pair, prompt, g, n, s)
    lossy = play(pair, prompt, g, n, s, rule=drafters.typical_rule(eps, dlt))
    p, q = pair.target.probs(prompt), pair.draft.probs(prompt)
    rows = [(pair.target.probs(c), pair.draft.probs(c)) for c in lossy.starts]
    distance = sum(drafters.typical_distance(pr, qr, eps, dlt) for pr, qr in rows) / len(rows)
    beta, fix = acceptance_rate(p, q), residual(p, q)
    exact_law = [min(a, b) + (1.0 - beta) * r for a, b, r in zip(p, q, fix, strict=True)]
    metrics = {f"{k}-typical": v for k, v in lossy.metrics().items()} | {
        f"{k}-exact": v for k, v in exact.metrics().items()
    }
    metrics |= {
        "tv-distance": round(distance, 12),
        "tv-distance-exact": round(total_variation(exact_law, p), 12),
        "threshold": round(drafters.typical_threshold(p, eps, dlt), 12),
    }
    return {
        "figures": {"positions": _rules_figure(exact, lossy), "law": _law_figure(pair, p, q, eps, dlt)},
        "metrics": metrics,
    }


# --8<-- [end:drafters_typical]


def _rules_figure(exact: Tally, lossy: Tally) -> Figure:
    x = list(range(1, exact.gamma + 1))
    data = [
        line(
            x, rounded_or_none(exact.by_position()), name="exact rule (lossless)", role="target", mode="lines+markers"
        ),
        line(
            x,
            rounded_or_none(lossy.by_position()),
            name="typical acceptance (lossy)",
            role="rejected",
            mode="lines+markers",
            dash="dash",
        ),
    ]
    axes = layout(x_title="draft position i", y_title="accepted ÷ checked at position i", y_range=[0, 1.05])
    axes["xaxis"] |= {"dtick": 1}
    return figure(data, axes)


def _law_figure(pair: models.Pair, p: list[float], q: list[float], eps: float, dlt: float) -> Figure:
    """The first token's law after the passage: the target's p, and what typical acceptance emits instead."""
    out = [float(x) for x in drafters.typical_output_distribution(p, q, eps, dlt)]
    ids = top_tokens([max(a, b) for a, b in zip(p, out, strict=True)], 8)
    # The words alone (the vocabulary's are distinct: a category axis would merge equal names), in order of
    # probability: a rank before each ("1. ▁and") made the tilted labels interleave on a phone.
    names = [pair.vocab[t] for t in ids]
    target = bar(names, rounded([p[t] for t in ids]), name="target p (= the exact rule's output)", role="target")
    lossy = bar(names, rounded([out[t] for t in ids]), name="typical acceptance's output", role="rejected")
    top = max(max(p[t] for t in ids), max(out[t] for t in ids))
    # A fixed range: the static first paint (sketch.js) and Plotly then agree on the axis, bars start at 0.
    axes = layout(
        x_title=PIECE_AXIS, y_title="probability of the first token", barmode="group", xaxis={"type": "category"}
    )
    axes["yaxis"] |= {"range": [0, round(1.1 * top, 3)]}
    axes["margin"] |= {"b": 96}
    return figure([target, lossy], axes)


# Published results ------------------------------------------------------------------------------------------------

#: (method, setting, alpha or None, gamma or None, reported figure, differs, source). Alpha values: Leviathan et
#: al. (2023), Tables 2 and 3 (T5-XXL 11B target; batch size 1, one TPU-v4 for the timed T5 runs); the other rows
#: report speedups only. See docs/drafters.md for the citations.
PUBLISHED: list[tuple[str, str, float | None, int | None, str, str, str]] = [
    ("Draft model", "T5-XXL / T5-small, WMT EnDe, greedy", 0.75, 7, "3.4x", "greedy; batch 1; TPU-v4", "lev-t2"),
    ("Draft model", "T5-XXL / T5-small, WMT EnDe, T = 1", 0.62, 7, "2.6x", "sampled; batch 1; TPU-v4", "lev-t2"),
    ("Draft model", "T5-XXL / T5-small, CNN/DM, greedy", 0.65, 5, "3.1x", "greedy; batch 1; TPU-v4", "lev-t2"),
    ("Draft model", "T5-XXL / T5-small, CNN/DM, T = 1", 0.53, 5, "2.3x", "sampled; batch 1; TPU-v4", "lev-t2"),
    (
        "Draft model",
        "LaMDA 137B / LaMDA 8B, dialogue",
        0.75,
        None,
        "not timed",
        "greedy; no walltime measured",
        "lev-t3",
    ),
    (
        "Draft model",
        "LaMDA 137B / LaMDA 100M, dialogue",
        0.61,
        None,
        "not timed",
        "greedy; no walltime measured",
        "lev-t3",
    ),
    ("Medusa heads", "Vicuna and other chat models", None, None, "2.2-3.6x", "batch 1; one GPU", "medusa"),
    ("EAGLE-1", "LLaMA2-Chat 70B", None, None, "2.7-3.5x", "latency speedup", "eagle"),
    ("EAGLE-2", "three model series, six tasks", None, None, "3.05-4.26x", "lossless", "eagle2"),
    (
        "EAGLE-3",
        "best case reported",
        None,
        None,
        "up to 6.5x",
        "its best task, the authors' code; in SGLang at batch 64: 1.38x throughput",
        "eagle3",
    ),
    ("Lookahead decoding", "MT-bench / code completion", None, None, "1.8x / 4x", "4x with multi-GPU scaling", "la"),
    (
        "Prompt lookup",
        "summarization, context QA, multi-turn chat",
        None,
        None,
        "2-4x",
        "greedy; Mistral-7B-Instruct; one A100",
        "pld",
    ),
]
#: Speculation length for rows that give alpha without one (Table 3): the formula's value is then ours.
TABLE_GAMMA = 5


@handler("drafters.published", example={})
def published() -> dict[str, Any]:
    """The published table, with tokens per target pass predicted by Eq. 1 wherever a paper gives alpha."""
    rows = []
    for method, setting, alpha, gamma, reported, differs, source in PUBLISHED:
        g = gamma if gamma is not None else TABLE_GAMMA
        predicted = round(theory.expected_tokens(alpha, g), 12) if alpha is not None else None
        rows.append(
            {"method": method, "setting": setting, "alpha": alpha, "gamma": g if alpha is not None else None}
            | {"gamma_from_paper": gamma is not None, "predicted": predicted, "reported": reported}
            | {"differs": differs, "source": source}
        )
    return {"rows": rows, "gamma_default": TABLE_GAMMA, "symbol": GAMMA}
