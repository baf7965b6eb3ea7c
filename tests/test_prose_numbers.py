"""Derived numbers written in the pages' prose, recomputed with the package and compared as written.

The site's rule is that every number shown on a page is computed by the package or cited; widgets compute theirs
live, but prose in ``docs/*.md`` and a few literal strings in ``site_assets/js/widgets/*.js`` state numbers derived
from the theory that nothing else checks. Each entry gives the file, a snippet around the number (whitespace runs
collapsed, so rewrapping is fine but editing the sentence or the number is not), the number as written, the decimals
it is rounded to and a lambda computing it; choices left to the reader, cited figures and versions are left out.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import NamedTuple

import pytest

from specdec_core import costs, drafters, models, multidraft, stats, theory, vllm_metrics
from specdec_core.web import cost as web_cost
from specdec_core.web import draft as web_draft
from specdec_core.web import drafters as web_drafters
from specdec_core.web import exactness as web_exactness
from specdec_core.web import playground as web_playground
from specdec_core.web import tuning as web_tuning

ROOT = Path(__file__).resolve().parent.parent

# The pages write the Greek letters and the multiplication sign; the Python side spells them out.
ALPHA = "\N{GREEK SMALL LETTER ALPHA}"
GAMMA = "\N{GREEK SMALL LETTER GAMMA}"
TIMES = "\N{MULTIPLICATION SIGN}"

# Number words the prose uses, as the values they stand for.
WORDS = {
    "a fifth": Fraction(1, 5),
    "three": Fraction(3),
    "ten": Fraction(10),
    "eleven": Fraction(11),
    "twenty": Fraction(20),
}


class Claim(NamedTuple):
    """One derived number on a page: where it is, how it is written, and how the package computes it."""

    what: str  # what the number is, for the test id
    path: str  # relative to the repository root
    snippet: str  # exact text around the number (whitespace runs collapsed on both sides)
    written: str  # the number as written: "0.77", ".65", "4/7", "[.2, .15, 0]", "1,024" or a word of WORDS
    decimals: int | None  # decimals the page rounds to; None: the written value is exact
    compute: Callable[[], object]  # the value in the units written (a list for a written list)
    relation: str = "="  # "=": written is computed, rounded; "<" / ">": computed lies below / above written


# --- The worked example of Verify, Correct and Why it is exact: p = [.4, .35, .25], q = [.2, .2, .6] --------------

P = [Fraction("0.4"), Fraction("0.35"), Fraction("0.25")]
Q = [Fraction("0.2"), Fraction("0.2"), Fraction("0.6")]


@cache
def _one_draft_round() -> tuple[tuple[Fraction, ...], tuple[Fraction, ...]]:
    """Per token, the exact mass a one-draft round emits as an accepted draft, and as a correction.

    From ``theory.exact_round_distribution`` with gamma = 1: an accepted draft x is followed by a bonus, so its
    outcomes are (x, y); a rejection ends the round with the correction alone, (y,).
    """
    accepted, corrected = [Fraction(0)] * len(P), [Fraction(0)] * len(P)
    for tokens, weight in theory.exact_round_distribution(lambda _c: P, lambda _c: Q, 1).items():
        (accepted if len(tokens) == 2 else corrected)[tokens[0]] += weight
    return tuple(accepted), tuple(corrected)


def _accepted_mass() -> list[Fraction]:
    return list(_one_draft_round()[0])


def _correction_mass() -> list[Fraction]:
    return list(_one_draft_round()[1])


def _rejection() -> Fraction:
    return sum(_correction_mass(), Fraction(0))


def _residual() -> list[Fraction]:
    return [x / _rejection() for x in _correction_mass()]


def _exact_tv(a: Sequence[Fraction], b: Sequence[Fraction]) -> Fraction:
    """Total variation in Fractions (``distributions.total_variation`` sums floats)."""
    return sum((abs(x - y) for x, y in zip(a, b, strict=True)), Fraction(0)) / 2


def _broken_law(variant: str) -> list[Fraction]:
    return web_exactness.teaching_broken_law(variant, P, Q)


def _broken_tv(variant: str) -> Fraction:
    return _exact_tv(_broken_law(variant), P)


# --- Other pages' settings ------------------------------------------------------------------------------------------


def _tree_acceptance(k: int) -> Fraction:
    """A_k on the Token trees page's synthetic pair at alpha = 0.7, candidates drawn with replacement."""
    pair = models.agreement_pair(0.7)
    return multidraft.multidraft_acceptance(pair.target.probs([]), pair.draft.probs([]), k)


def _grammar_successors(word: str) -> int:
    """Words the Playground's target can emit after ``word`` (the draft must guess among them)."""
    pair = models.quality_pair(1.0)
    return sum(x > 0 for x in pair.target.probs([models.QUALITY_WORDS.index(word)]))


def _cost_speedup(batch: int, context: int) -> float:
    """The Cost page's defaults: Llama-3.1-8B over Llama-3.2-1B in 16 bits on one H100, alpha 0.8, gamma 4."""
    m = costs.MODELS
    return costs.speculative_cost(
        m["llama-3.1-8b"], m["llama-3.2-1b"], costs.HARDWARE["h100"], alpha=0.8, gamma=4, batch=batch, context=context
    ).speedup


def _heads_checked_deep() -> int:
    """Most checks of the heads drafter's third or fourth position at the Drafters widget's defaults.

    The defaults of ``drafters.compare`` (and the page's template): the repetitive passage, gamma 4, 160 tokens, seed 0.
    """
    pair = web_draft.ngram_pair(1.0, 0, 1.0)
    prompt = pair.encode(web_drafters.PASSAGES["repetitive"])
    heads = drafters.IndependentHeadsDrafter(pair.draft)
    tally = web_drafters.play(pair, prompt, 4, 160, 0, drafter=heads)
    return max(tally.checked[2:4])


def _playground_theory(quality: float, gamma: int, name: str) -> float:
    """The Playground's theory for a draft quality and gamma at its default cost c 0.05 (a fresh run, no rounds)."""
    value: float = web_playground.run(quality=quality, gamma=gamma, cost=0.05, rounds=0)["metrics"][name]
    return value


H100, LLAMA_8B = costs.HARDWARE["h100"], costs.MODELS["llama-3.1-8b"]

CLAIMS = [
    # Playground ---------------------------------------------------------------------------------------------------
    Claim(
        "draft acceptance rate at alpha 0.9, gamma 4",
        "docs/playground.md",
        r"at \(\alpha = 0.9\) and \(\gamma = 4\) it is 0.77",
        "0.77",
        2,
        lambda: theory.draft_acceptance_rate(0.9, 4),
    ),
    Claim(
        "draft acceptance rate at alpha 0.8, gamma 4",
        "docs/playground.md",
        r"\(\alpha = 0.8\) it is 0.59",
        "0.59",
        2,
        lambda: theory.draft_acceptance_rate(0.8, 4),
    ),
    Claim(
        "words after 'the'",
        "docs/playground.md",
        'after "the" the draft has eleven plausible words to get right',
        "eleven",
        None,
        lambda: _grammar_successors("the"),
    ),
    Claim(
        "words after 'sees'",
        "docs/playground.md",
        'after "sees" only three',
        "three",
        None,
        lambda: _grammar_successors("sees"),
    ),
    Claim(
        "runs outside a one-standard-deviation band, one in",
        "docs/playground.md",
        "about one run in three lands outside it",
        "three",
        0,
        lambda: 1 / stats.chi_square_sf(1.0, 1),  # P(|Z| > 1) = P(chi-square with 1 df > 1)
    ),
    Claim(
        "runs outside twice that band, one in",
        "docs/playground.md",
        "fewer than one in twenty outside twice it",
        "twenty",
        None,
        lambda: 1 / stats.chi_square_sf(4.0, 1),
        ">",
    ),
    Claim(
        "experiment 2: speedup of a near-random draft at gamma 4",
        "docs/playground.md",
        f"their speedup sinks to about 1.3{TIMES} (the theory under each says where it settles)",
        "1.3",
        1,
        lambda: _playground_theory(0.05, 4, "speedup-theory"),
    ),
    Claim(
        "experiment 3: tokens per pass of a weak draft at gamma 8",
        "docs/playground.md",
        "tokens per pass stays about 2 and the speedup under cost c falls below",
        "2",
        0,
        lambda: _playground_theory(0.3, 8, "tokens-per-pass-theory"),
    ),
    # Sampling settings ----------------------------------------------------------------------------------------------
    Claim(
        "two-standard-error coverage, seeds in 20",
        "docs/sampling.md",
        "within that band of the exact one for about 19 seeds in 20",
        "19",
        0,
        lambda: 20 * (1 - stats.chi_square_sf(4.0, 1)),  # P(|Z| < 2) = P(chi-square with 1 df < 4)
    ),
    Claim(
        "the adaptive rules' cap",
        "docs/tuning.md",
        "the confidence, dynamic and oracle rules may draft up to 16 tokens a round",
        "16",
        None,
        lambda: inspect.signature(web_tuning.compare).parameters["max_gamma"].default,
    ),
    Claim(
        "the least trend the vLLM verdict reports",
        "docs/tuning.md",
        "the fitted change is at least 0.01 per position",
        "0.01",
        2,
        lambda: vllm_metrics.MIN_SLOPE,
    ),
    # Draft ------------------------------------------------------------------------------------------------------------
    Claim(
        "four draft steps at c 0.05, in target passes",
        "docs/draft.md",
        r"at \(c = 0.05\), four draft steps add a fifth of a target pass to every round",
        "a fifth",
        2,
        lambda: theory.expected_tokens(0.8, 4) / theory.speedup(0.8, 4, 0.05) - 1,  # (gamma c + 1) - 1
    ),
    Claim(
        "P(all accepted) at alpha 0.8, gamma 4",
        "docs/draft.md",
        r"At \(\alpha = 0.8\) it is \(0.41\) for \(\gamma = 4\)",
        "0.41",
        2,
        lambda: theory.accepted_count_distribution(0.8, 4)[-1],
    ),
    Claim(
        "P(all accepted) at alpha 0.8, gamma 8",
        "docs/draft.md",
        r"and \(0.17\) for \(\gamma = 8\)",
        "0.17",
        2,
        lambda: theory.accepted_count_distribution(0.8, 8)[-1],
    ),
    Claim(
        "tokens-per-pass ceiling at alpha 0.8",
        "docs/draft.md",
        r"\(1 / (1 - \alpha)\), which is 5 tokens at \(\alpha = 0.8\)",
        "5",
        0,
        lambda: theory.expected_tokens(0.8, 64),  # the limit, at the package's largest gamma
    ),
    Claim(
        "P(8-token draft kept whole) at alpha 0.6, percent",
        "docs/draft.md",
        r"At \(\alpha = 0.6\), an 8-token draft is kept whole less than 2% of the time",
        "2",
        None,
        lambda: 100 * theory.accepted_count_distribution(0.6, 8)[-1],
        "<",
    ),
    Claim(
        "drafts discarded at alpha 0.6, gamma 8",
        "docs/draft.md",
        "and on average 5.5 of its tokens are discarded after the first rejection",
        "5.5",
        1,
        lambda: theory.expected_discarded(0.6, 8),
    ),
    # Verify -----------------------------------------------------------------------------------------------------------
    Claim(
        "example acceptance probabilities",
        "docs/verify.md",
        r"are \(\min(1, p/q) = [1, 1, .417]\)",
        "[1, 1, .417]",
        3,
        lambda: [a / q for a, q in zip(_accepted_mass(), Q, strict=True)],
    ),
    Claim(
        "example beta",
        "docs/verify.md",
        r"So \(\beta = .2 + .2 + .25 = .65\)",
        ".65",
        None,
        lambda: sum(_accepted_mass()),
    ),
    Claim(
        "example rejection probability",
        "docs/verify.md",
        r"a draft token is rejected with probability \(.35\)",
        ".35",
        None,
        _rejection,
    ),
    Claim(
        "example residual",
        "docs/verify.md",
        r"\(\operatorname{norm}(\max(0, p - q)) = [4/7, 3/7, 0]\)",
        "[4/7, 3/7, 0]",
        None,
        _residual,
    ),
    Claim(
        "draft acceptance rate at alpha 0.8, gamma 4",
        "docs/verify.md",
        r"At \(\alpha = 0.8\) and \(\gamma = 4\), this gives \(0.59\)",
        "0.59",
        2,
        lambda: theory.draft_acceptance_rate(0.8, 4),
    ),
    Claim(
        "mean acceptance length at alpha 0.8, gamma 4",
        "docs/verify.md",
        r"pass, is \(3.36\) at the same settings",
        "3.36",
        2,
        lambda: theory.expected_tokens(0.8, 4),
    ),
    # Correct ----------------------------------------------------------------------------------------------------------
    Claim(
        "example accepted mass",
        "docs/correct.md",
        r"Accepted mass: \(\min(p, q) = [.2, .2, .25]\)",
        "[.2, .2, .25]",
        None,
        _accepted_mass,
    ),
    Claim(
        "example beta",
        "docs/correct.md",
        r"so \(\beta = .65\) and a draft is rejected",
        ".65",
        None,
        lambda: sum(_accepted_mass()),
    ),
    Claim(
        "example rejection probability",
        "docs/correct.md",
        r"and a draft is rejected with probability \(.35\)",
        ".35",
        None,
        _rejection,
    ),
    Claim(
        "example shortfall",
        "docs/correct.md",
        r"Shortfall: \(\max(0, p - q) = [.2, .15, 0]\)",
        "[.2, .15, 0]",
        None,
        _correction_mass,
    ),
    Claim(
        "example shortfall total",
        "docs/correct.md",
        r"which sums to \(.35 = 1 - \beta\)",
        ".35",
        None,
        _rejection,
    ),
    Claim(
        "example residual",
        "docs/correct.md",
        r"Residual: \([.2, .15, 0] / .35 = [4/7, 3/7, 0]\)",
        "[4/7, 3/7, 0]",
        None,
        _residual,
    ),
    Claim(
        "example fox through the accepted route",
        "docs/correct.md",
        r"\(.6 \times \frac{.25}{.6} = .25\)",
        ".25",
        None,
        lambda: _accepted_mass()[2],
    ),
    Claim(
        "example cat through a correction",
        "docs/correct.md",
        r"\(.35 \times 4/7 = .2\)",
        ".2",
        None,
        lambda: _correction_mass()[0],
    ),
    Claim(
        "example dog through a correction",
        "docs/correct.md",
        r"\(.35 \times 3/7 = .15\)",
        ".15",
        None,
        lambda: _correction_mass()[1],
    ),
    Claim(
        "example preset beta",
        "docs/correct.md",
        r"\(\beta = .65\). Corrections happen in 35% of rounds",
        ".65",
        None,
        lambda: sum(_accepted_mass()),
    ),
    Claim(
        "example preset corrections, percent",
        "docs/correct.md",
        "Corrections happen in 35% of rounds",
        "35",
        None,
        lambda: 100 * _rejection(),
    ),
    # Bonus ------------------------------------------------------------------------------------------------------------
    Claim(
        "bonus share at alpha 0.8, gamma 4",
        "docs/bonus.md",
        r"At \(\alpha = 0.8\) and \(\gamma = 4\), that is 0.41 of the 3.36 tokens",
        "0.41",
        2,
        lambda: theory.accepted_count_distribution(0.8, 4)[-1],
    ),
    Claim(
        "tokens per pass at alpha 0.8, gamma 4",
        "docs/bonus.md",
        "that is 0.41 of the 3.36 tokens a pass yields on average",
        "3.36",
        2,
        lambda: theory.expected_tokens(0.8, 4),
    ),
    Claim(
        "tokens-per-pass ceiling at alpha 0.6",
        "docs/bonus.md",
        r"creep toward \(1/(1 - \alpha) = 2.5\) and never reach it",
        "2.5",
        1,
        lambda: theory.expected_tokens(0.6, 64),  # the limit, at the package's largest gamma
    ),
    # Why it is exact --------------------------------------------------------------------------------------------------
    Claim(
        "correction drawn from p: law",
        "docs/exactness.md",
        r"On the example that is \([.34, .3225, .3375]\)",
        "[.34, .3225, .3375]",
        None,
        lambda: _broken_law("correct-from-p"),
    ),
    Claim(
        "correction drawn from p: TV",
        "docs/exactness.md",
        r"\([.34, .3225, .3375]\), a TV of .0875 from \(p\)",
        ".0875",
        None,
        lambda: _broken_tv("correct-from-p"),
    ),
    Claim(
        "accept with q/p: TV",
        "docs/exactness.md",
        "TV .35 on the example: no closer",
        ".35",
        None,
        lambda: _broken_tv("q-over-p"),
    ),
    Claim(
        "residual not normalised: TV",
        "docs/exactness.md",
        "hides the bug.) TV .13 on the example",
        ".13",
        None,
        lambda: _broken_tv("unnormalized"),
    ),
    Claim(
        "temperature on one side: TV",
        "docs/exactness.md",
        "and the output is off by TV .091",
        ".091",
        3,
        lambda: _broken_tv("draft-temperature"),
    ),
    Claim(
        "greedy draft declared as soft q: law",
        "docs/exactness.md",
        r"The output is \([1/3, 1/4, 5/12]\)",
        "[1/3, 1/4, 5/12]",
        None,
        lambda: _broken_law("greedy-soft"),
    ),
    Claim(
        "greedy draft declared as soft q: TV",
        "docs/exactness.md",
        r"a TV of \(1/6\) from \(p\)",
        "1/6",
        None,
        lambda: _broken_tv("greedy-soft"),
    ),
    # Token trees ------------------------------------------------------------------------------------------------------
    Claim(
        "A_1 at alpha 0.7",
        "docs/trees.md",
        r"the package computes \(A_1 = 0.70\)",
        "0.70",
        2,
        lambda: _tree_acceptance(1),
    ),
    Claim("A_2 at alpha 0.7", "docs/trees.md", r"\(A_2 = 0.817\)", "0.817", 3, lambda: _tree_acceptance(2)),
    Claim("A_4 at alpha 0.7", "docs/trees.md", r"\(A_4 = 0.914\)", "0.914", 3, lambda: _tree_acceptance(4)),
    Claim(
        "depth-3 tree, k 1",
        "docs/trees.md",
        "so a depth-3 tree gives 2.53, 3.03 and 3.51 tokens per pass",
        "2.53",
        2,
        lambda: multidraft.tree_expected_tokens(float(_tree_acceptance(1)), 3),
    ),
    Claim(
        "depth-3 tree, k 2",
        "docs/trees.md",
        "gives 2.53, 3.03 and 3.51 tokens",
        "3.03",
        2,
        lambda: multidraft.tree_expected_tokens(float(_tree_acceptance(2)), 3),
    ),
    Claim(
        "depth-3 tree, k 4",
        "docs/trees.md",
        "3.03 and 3.51 tokens per pass",
        "3.51",
        2,
        lambda: multidraft.tree_expected_tokens(float(_tree_acceptance(4)), 3),
    ),
    # Tuning -----------------------------------------------------------------------------------------------------------
    Claim(
        "draft acceptance rate at alpha 0.8, gamma 4",
        "docs/tuning.md",
        f"at {ALPHA} = 0.8 and {GAMMA} = 4 it is about 0.59",
        "0.59",
        2,
        lambda: theory.draft_acceptance_rate(0.8, 4),
    ),
    # What a pass costs ------------------------------------------------------------------------------------------------
    Claim(
        "bytes read per token, 8B, GB",
        "docs/cost.md",
        "a 16-bit Llama-3.1-8B reads about 16 GB per token",
        "16",
        0,
        lambda: costs.pass_cost(LLAMA_8B, H100, tokens=1, context=128, batch=1).bytes / 1e9,
    ),
    Claim(
        "arithmetic per token, 8B, GFLOP",
        "docs/cost.md",
        "and does only about 16 GFLOP of arithmetic with it",
        "16",
        0,
        lambda: costs.pass_cost(LLAMA_8B, H100, tokens=1, context=128, batch=1).flops / 1e9,
    ),
    Claim(
        "H100 FLOPs per byte read",
        "docs/cost.md",
        "An H100 SXM can do about 295 FLOPs in the time it reads one byte",
        "295",
        0,
        lambda: H100.flops / H100.bandwidth,
    ),
    Claim(
        "ridge point, 8B on an H100",
        "docs/cost.md",
        "about 295 for an 8B model in 16 bits on an H100 at a short context",
        "295",
        0,
        lambda: costs.ridge_tokens(LLAMA_8B, H100, context=1, batch=1),  # 295.5 at the page's shortest, 128
    ),
    Claim(
        "smallest speedup over batches at context 1,024",
        "docs/cost.md",
        f"At the default context of 1,024 tokens the speedup shrinks as the batch grows but stays above 1{TIMES}",
        "1",
        None,
        lambda: min(_cost_speedup(b, 1024) for b in web_cost.BATCHES),
        ">",
    ),
    Claim(
        "last batch that pays at context 128",
        "docs/cost.md",
        f"the speedup falls below 1{TIMES} between batch 128 and 256",
        "128",
        None,
        lambda: max(b for b in web_cost.BATCHES if _cost_speedup(b, 128) >= 1),
    ),
    Claim(
        "first batch that loses at context 128",
        "docs/cost.md",
        f"the speedup falls below 1{TIMES} between batch 128 and 256",
        "256",
        None,
        lambda: min(b for b in web_cost.BATCHES if _cost_speedup(b, 128) < 1),
    ),
    Claim(
        "70B weights in 16 bits, GB",
        "docs/cost.md",
        "in 16-bit weights it does not fit (about 141 GB of weights against 80 GB)",
        "141",
        0,
        lambda: costs.MODELS["llama-3.1-70b"].parameters * 2 / 1e9,
    ),
    # Where drafts come from -------------------------------------------------------------------------------------------
    Claim(
        "heads' checks at positions 3 and 4",
        "docs/drafters.md",
        "(at the defaults, the heads' third and fourth positions fewer than ten times each)",
        "ten",
        None,
        _heads_checked_deep,
        "<",
    ),
    Claim(
        "typical acceptance distance on the example",
        "docs/drafters.md",
        r"at distance 0.35 from \(p\) (a doctest of `drafters.typical_distance`)",
        "0.35",
        2,
        lambda: drafters.typical_distance([0.4, 0.35, 0.25], [0.2, 0.2, 0.6]),
    ),
    # Widgets' literal strings -----------------------------------------------------------------------------------------
    Claim(
        "draft acceptance rate at alpha 0.9, gamma 4",
        "site_assets/js/widgets/playground.js",
        f"At {GAMMA} = 4, {ALPHA} = 0.90 gives a draft acceptance rate of 0.77.",
        "0.77",
        2,
        lambda: theory.draft_acceptance_rate(0.9, 4),
    ),
    Claim(
        "EAGLE head for the 8B, billions of parameters",
        "site_assets/js/widgets/presets.js",
        '["eagle-8b", "EAGLE-style head for the 8B (0.42B)"]',
        "0.42",
        2,
        lambda: costs.MODELS["eagle-8b"].parameters / 1e9,
    ),
    Claim(
        "EAGLE head for the 70B, billions of parameters",
        "site_assets/js/widgets/presets.js",
        '["eagle-70b", "EAGLE-style head for the 70B (1.40B)"]',
        "1.40",
        2,
        lambda: costs.MODELS["eagle-70b"].parameters / 1e9,
    ),
    # The calculator's other sources start at the figures its default alpha 0.8 and gamma 4 (ui/url.js) give.
    Claim(
        "calculator's default draft acceptance rate",
        "site_assets/js/widgets/tuning-calculator.js",
        "step: 0.01, value: 0.59, format: fixed(2),",
        "0.59",
        2,
        lambda: theory.draft_acceptance_rate(0.8, 4),
    ),
    Claim(
        "calculator's default mean acceptance length",
        "site_assets/js/widgets/tuning-calculator.js",
        "step: 0.01, value: 3.36, hidden: true,",
        "3.36",
        2,
        lambda: theory.expected_tokens(0.8, 4),
    ),
]


def _claim_id(claim: Claim) -> str:
    return f"{Path(claim.path).name}: {claim.what}"


def _collapse(text: str) -> str:
    return " ".join(text.split())


@cache
def _page(path: str) -> str:
    return _collapse((ROOT / path).read_text(encoding="utf-8"))


def _parse(written: str) -> list[Fraction]:
    """The written number as exact values: one, or one per entry of a written list."""
    if written in WORDS:
        return [WORDS[written]]
    if written.startswith("["):
        return [Fraction(x.strip()) for x in written[1:-1].split(",")]
    return [Fraction(written.replace(",", ""))]


def _exact(value: object) -> list[Fraction]:
    """The computed value as exact Fractions (a float is the binary fraction it is), one per written entry."""
    values = value if isinstance(value, list) else [value]
    out = []
    for x in values:
        if isinstance(x, bool) or not isinstance(x, int | float | Fraction):
            raise TypeError(f"a claim must compute numbers, got {x!r}")
        out.append(Fraction(x))
    return out


def test_ids_are_unique() -> None:
    ids = [_claim_id(c) for c in CLAIMS]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


@pytest.mark.parametrize("claim", CLAIMS, ids=_claim_id)
def test_prose_number_matches_package(claim: Claim) -> None:
    snippet = _collapse(claim.snippet)
    assert claim.written in snippet, f"the table's written number {claim.written!r} is not in its snippet"
    assert snippet in _page(claim.path), f"{claim.path} no longer says {snippet!r}: the prose or its number changed"

    expected = _parse(claim.written)
    value = claim.compute()
    computed = _exact(value)
    assert len(computed) == len(expected), f"{claim.path}: {claim.written} has {len(expected)} entries, not {value}"
    for written, exact in zip(expected, computed, strict=True):
        if claim.relation == "<":
            ok, shown, how = exact < written, exact, "below"
        elif claim.relation == ">":
            ok, shown, how = exact > written, exact, "above"
        elif claim.decimals is None:
            ok, shown, how = exact == written, exact, "exactly"
        else:
            shown = round(exact, claim.decimals)
            ok, how = shown == written, f"rounded (half to even) to {claim.decimals} decimals"
        assert ok, (
            f"{claim.path} writes {claim.written} ({claim.what}) in {snippet!r}; the package computes {value!r}, "
            f"and the page needs it {how} {float(written)!r}, but that gives {float(shown)!r}"
        )
