"""The Bonus page (docs/bonus.md): how often a round ends with a bonus token, and tokens per target pass.

``bonus.simulate`` plays rounds of ``models.agreement_pair`` (beta = alpha at every position) on the engine beside
the capped geometric law of accepted drafts and Eq. 1 of Leviathan et al. (2023). Non-goals: real text, tuning.
"""

from __future__ import annotations

import math
import random
from typing import Any

from .. import models, theory
from . import handler
from .args import check_int, check_number, check_seed
from .correct import play_rounds
from .draft import MAX_PAGE_GAMMA
from .plot import Figure, bar, figure, layout, line, rounded, with_pattern

#: Most rounds one call may play (about half a second in Pyodide).
MAX_ROUNDS = 20_000


# --8<-- [start:bonus_simulate]
@handler("bonus.simulate", example={"alpha": 0.8, "gamma": 4, "rounds": 500, "seed": 0})
def simulate(alpha: float = 0.8, gamma: int = 4, rounds: int = 3000, seed: int = 0) -> dict[str, Any]:
    """Theory against ``rounds`` real rounds: accepted counts, the bonus share, tokens per pass and alpha.

    The measured ``alpha`` is accepted / (accepted + rejected): only drafts the verifier checked count (drafts
    after a rejection are discarded unchecked), so it estimates the per-token acceptance rate alpha, not the draft
    acceptance rate accepted / drafted.
    """
    a, g = check_number(alpha, "alpha", 0, 1), check_int(gamma, "gamma", 1, MAX_PAGE_GAMMA)
    n = check_int(rounds, "rounds", 1, MAX_ROUNDS)
    runs = play_rounds(models.agreement_pair(a), g, n, random.Random(check_seed(seed)))
    counts = [sum(r.accepted == k for r in runs) for k in range(g + 1)]  # the last: rounds ending with a bonus
    law = theory.accepted_count_distribution(a, g)
    mean = sum((k + 1) * c for k, c in enumerate(counts)) / n
    expected = theory.expected_tokens(a, g)
    # Standard error of the simulated mean, from the law's variance of (accepted + 1).
    var = sum(pk * (k + 1 - expected) ** 2 for k, pk in enumerate(law))
    accepted = sum(k * c for k, c in enumerate(counts))
    checked = accepted + n - counts[g]  # every round without a bonus checked exactly one rejected draft
    return {
        "figures": {
            "counts": _counts_figure(g, rounded(law), [c / n for c in counts]),
            "curve": _curve_figure(a, g, rounded([theory.expected_tokens(a, k) for k in range(1, 9)]), mean),
        },
        "metrics": {
            "tokens-per-pass": mean,
            "tokens-per-pass-theory": round(expected, 12),
            "tokens-per-pass-se": round(math.sqrt(var / n), 12),
            "bonus-share": counts[g] / n,
            "bonus-share-theory": round(law[g], 12),
            "alpha": accepted / checked if checked else 1.0,
            "alpha-theory": a,
            "rounds": n,
        },
        "counts": counts,
        # Tokens the rounds emitted, fewest and most (accepted + 1): at alpha = 1 both are gamma + 1.
        "emitted": [min(k for k, c in enumerate(counts) if c) + 1, max(k for k, c in enumerate(counts) if c) + 1],
    }


# --8<-- [end:bonus_simulate]


def _counts_figure(gamma: int, law: list[float], simulated: list[float]) -> Figure:
    """Accepted drafts per round: the capped geometric law, its last bar the rounds that end with a bonus."""
    names = [str(k) for k in range(gamma + 1)]
    hover = "P(%{x} accepted) = %{y:.4f}<extra></extra>"
    ended = bar(names[:-1], law[:-1], name="theory: ends with a correction", role="correction", hover=hover)
    full = bar(names[-1:], law[-1:], name="theory: all accepted, ends with a bonus", role="bonus", hover=hover)
    dots, hover = {"symbol": "diamond", "size": 11}, "simulated: %{y:.4f}<extra></extra>"
    sim = line(names, simulated, name="simulated rounds", role="target", mode="markers", marker=dots, hover=hover)
    x_title, y_title = "drafts accepted in the round", "share of rounds"
    # Headroom above 1: at alpha = 1 every round ends with a bonus, and the marker must not be cut at the top.
    axes = layout(x_title=x_title, y_title=y_title, y_range=[0, 1.08], barmode="overlay", xaxis={"type": "category"})
    axes["yaxis"] |= {"tickvals": [0, 0.2, 0.4, 0.6, 0.8, 1]}
    return figure([ended, with_pattern(full, "+"), sim], axes)


def _curve_figure(alpha: float, gamma: int, expected: list[float], simulated: float) -> Figure:
    """Expected tokens per target pass against gamma at this alpha, under the ceiling gamma + 1."""
    gammas = list(range(1, len(expected) + 1))
    ring, dot = {"size": 14, "symbol": "circle-open", "line": {"width": 3}}, {"symbol": "diamond", "size": 10}
    data = [
        line(gammas, [g + 1 for g in gammas], name="ceiling &#947; + 1", role="discarded", dash="dot"),
        line(gammas, expected, name=f"expected at &#945; = {alpha:.2f}", role="target", mode="lines+markers"),
        line([gamma], [expected[gamma - 1]], name=f"&#947; = {gamma}", role="bonus", mode="markers", marker=ring),
        line([gamma], [simulated], name="simulated", role="accepted", mode="markers", marker=dot),
    ]
    x_title, y_title = "speculation length &#947;", "tokens per target pass"
    return figure(data, layout(x_title=x_title, y_title=y_title, y_range=[0, 9.5], xaxis={"dtick": 1}))
