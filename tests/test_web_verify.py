"""Handlers of the Draft and Verify pages: the n-gram pair one round at a time, and the acceptance-rate charts.

Each handler is checked against an independent run of the package's own steps (same seed, same calls), so the
numbers a reader sees are the algorithm's, not a re-implementation's.
"""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest

from specdec_core import acceptance_rate, models, residual, steps, theory, web

PROMPT = "It is a truth universally acknowledged, that a single man"


def call(name: str, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(web.call(name, json.dumps(args)))
    return result


def reference_draft(
    seed: int, gamma: int, prompt: str = PROMPT, **shaping: Any
) -> tuple[models.Pair, list[int], list[int], list[list[float]], random.Random]:
    pair = models.ngram_pair(**shaping)
    context = pair.encode(prompt)
    rng = random.Random(seed)
    tokens, q_rows = steps.draft(pair.draft.probs, context, gamma, rng)
    return pair, context, tokens, q_rows, rng


# --- Draft ------------------------------------------------------------------------------------------------------


def test_draft_is_deterministic_with_a_seed() -> None:
    first = call("steps.draft_ngram", prompt=PROMPT, gamma=6, seed=3)
    assert call("steps.draft_ngram", prompt=PROMPT, gamma=6, seed=3) == first
    drafts = {call("steps.draft_ngram", prompt=PROMPT, gamma=6, seed=s)["draft_text"] for s in range(6)}
    assert len(drafts) > 1, "different seeds should draft different continuations"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_draft_words_and_probabilities_come_from_the_steps(seed: int) -> None:
    result = call("steps.draft_ngram", prompt=PROMPT, gamma=5, temperature=0.8, seed=seed)
    pair, context, tokens, q_rows, _ = reference_draft(seed, 5, temperature=0.8)
    assert [pos["word"] for pos in result["positions"]] == [pair.vocab[t] for t in tokens]
    assert result["draft_text"] == pair.decode(tokens)
    for i, (pos, token) in enumerate(zip(result["positions"], tokens, strict=True)):
        p_row = pair.target.probs(context + tokens[:i])
        assert pos["q"] == pytest.approx(q_rows[i][token], abs=1e-12)
        assert pos["p"] == pytest.approx(p_row[token], abs=1e-12)
        assert pos["accept"] == pytest.approx(min(1.0, p_row[token] / q_rows[i][token]), abs=1e-12)
        assert pos["beta"] == pytest.approx(acceptance_rate(p_row, q_rows[i]), abs=1e-12)


def test_draft_alternatives_are_the_top_of_q_and_include_the_drafted_word() -> None:
    for seed in range(5):
        result = call("steps.draft_ngram", prompt=PROMPT, gamma=4, seed=seed, alternatives=5)
        for pos in result["positions"]:
            qs = [a["q"] for a in pos["alternatives"][:5]]
            assert qs == sorted(qs, reverse=True)
            assert pos["word"] in [a["word"] for a in pos["alternatives"]]
            # A word from q's tail is appended after the five favourites, never instead of one.
            assert len(pos["alternatives"]) == (5 if pos["word"] in [a["word"] for a in pos["alternatives"][:5]] else 6)


def test_draft_metrics_follow_from_the_positions() -> None:
    """all-accepted-prob = prod_i min(1, p_i/q_i); accept-rate = mean beta_i; alpha-to-gamma = that mean ** gamma."""
    result = call("steps.draft_ngram", prompt=PROMPT, gamma=4, seed=11)
    positions = result["positions"]
    metrics = result["metrics"]
    assert metrics["draft-steps"] == 4
    assert metrics["all-accepted-prob"] == pytest.approx(math.prod(p["accept"] for p in positions), rel=1e-9)
    mean_beta = sum(p["beta"] for p in positions) / 4
    assert metrics["accept-rate"] == pytest.approx(mean_beta, rel=1e-9)
    assert metrics["alpha-to-gamma"] == pytest.approx(mean_beta**4, rel=1e-9)


def test_temperature_zero_drafts_the_draft_models_favourite() -> None:
    result = call("steps.draft_ngram", prompt=PROMPT, gamma=3, temperature=0.0, seed=5)
    for pos in result["positions"]:
        assert pos["q"] == 1.0
        assert pos["word"] == pos["alternatives"][0]["word"]


def test_unknown_words_reach_the_models_as_unk() -> None:
    result = call("steps.draft_ngram", prompt="Mr. Darcy bought a zeppelin", gamma=2, seed=0)
    known = {w["word"]: w["known"] for w in result["prompt_words"]}
    assert known["zeppelin"] is False and known["darcy"] is True
    assert result["context_text"].endswith("<unk>")


def test_an_empty_prompt_starts_a_paragraph() -> None:
    result = call("steps.draft_ngram", prompt="", gamma=3, seed=2)
    pair, _, tokens, _, _ = reference_draft(2, 3, prompt="")
    assert result["draft_text"] == pair.decode(tokens)
    assert result["prompt_words"] == []


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"gamma": 0}, ValueError),
        ({"gamma": 9}, ValueError),
        ({"gamma": 2.5}, TypeError),
        ({"seed": -1}, ValueError),
        ({"prompt": "word " * 100}, ValueError),
        ({"prompt": 42}, TypeError),
        ({"temperature": -1.0}, ValueError),
        ({"top_p": 0.0}, ValueError),
    ],
)
def test_bad_arguments_are_refused_by_name(args: dict[str, Any], error: type[Exception]) -> None:
    for name in ("steps.draft_ngram", "steps.verify_ngram"):
        with pytest.raises(error):
            web.call(name, json.dumps({"prompt": PROMPT, "gamma": 3, "seed": 0, **args}))


# --- Verify -----------------------------------------------------------------------------------------------------


def test_verify_uses_the_same_draft_as_the_draft_page() -> None:
    for seed in range(4):
        draft = call("steps.draft_ngram", prompt=PROMPT, gamma=5, seed=seed)
        verify = call("steps.verify_ngram", prompt=PROMPT, gamma=5, seed=seed)
        assert [p["word"] for p in verify["positions"]] == [p["word"] for p in draft["positions"]]


@pytest.mark.parametrize("seed", range(12))
def test_verify_decisions_follow_u_against_p_over_q(seed: int) -> None:
    """Accepted exactly when u < p/q; the first rejection ends verification and later drafts are discarded."""
    result = call("steps.verify_ngram", prompt=PROMPT, gamma=6, temperature=1.2, seed=seed)
    positions = result["positions"]
    outcomes = [p["outcome"] for p in positions]
    accepted = outcomes.count("accepted")
    assert outcomes == ["accepted"] * accepted + (["rejected"] + ["discarded"] * (5 - accepted) if accepted < 6 else [])
    for pos in positions:
        assert pos["threshold"] == min(1.0, pos["p"] / pos["q"])
        if pos["outcome"] == "discarded":
            assert pos["u"] is None
        else:
            assert (pos["u"] < pos["ratio"]) == (pos["outcome"] == "accepted")
    metrics = result["metrics"]
    assert metrics["accepted"] == accepted
    assert metrics["tokens-emitted"] == accepted + 1
    assert result["final"]["kind"] == ("bonus" if accepted == 6 else "correction")
    assert len(result["rows"]) == 7 and result["rows"][-1]["scores"] == "bonus"


@pytest.mark.parametrize("seed", [0, 9, 21])
def test_verify_round_matches_speculative_round(seed: int) -> None:
    """The handler's round is steps.speculative_round on the draft, with p from one pass over gamma + 1 prefixes."""
    result = call("steps.verify_ngram", prompt=PROMPT, gamma=4, top_k=30, seed=seed)
    pair, context, tokens, q_rows, rng = reference_draft(seed, 4, top_k=30)
    p_rows = [pair.target.probs(context + tokens[:j]) for j in range(5)]
    round_ = steps.speculative_round(p_rows, q_rows, tokens, rng)
    assert [p["outcome"] for p in result["positions"]] == [p.outcome for p in round_.positions]
    assert result["emitted_text"] == pair.decode(round_.tokens)
    assert result["final"]["word"] == pair.vocab[round_.final_token]
    at = round_.accepted
    source = residual(p_rows[at], q_rows[at]) if round_.ended_with == "correction" else p_rows[4]
    assert result["final"]["prob"] == pytest.approx(source[round_.final_token], abs=1e-12)
    assert result["metrics"]["all-accepted-prob"] == pytest.approx(
        math.prod(min(1.0, p_rows[i][t] / q_rows[i][t]) for i, t in enumerate(tokens)), rel=1e-9
    )


def test_first_position_is_accepted_at_rate_beta() -> None:
    """With the prompt fixed, position 1 always has the same p and q, so over seeds it is accepted with probability
    beta_1 = sum_x min(p(x), q(x)). N = 300 seeds: sd = sqrt(beta (1 - beta) / N) <= 0.029; tolerance 4 sd = 0.116.
    """
    n = 300
    results = [call("steps.verify_ngram", prompt=PROMPT, gamma=1, seed=s) for s in range(n)]
    beta = results[0]["positions"][0]["beta"]
    assert all(r["positions"][0]["beta"] == beta for r in results)
    rate = sum(r["positions"][0]["outcome"] == "accepted" for r in results) / n
    assert abs(rate - beta) < 4 * math.sqrt(beta * (1 - beta) / n) + 1e-9


# --- Acceptance-rate charts -------------------------------------------------------------------------------------


def test_acceptance_rates_match_theory() -> None:
    """alpha = .8, gamma = 4: accepted / drafted = (E[tokens] - 1) / gamma = (3.3616 - 1) / 4 = .5904.

    The chance that all four survive is alpha^4 = .4096.
    """
    result = call("theory.acceptance_rates", alpha=0.8, gamma=4)
    metrics = result["metrics"]
    assert metrics["draft-accept-rate"] == pytest.approx(0.5904, abs=1e-12)
    assert metrics["all-accepted-prob"] == pytest.approx(0.4096, abs=1e-12)
    assert metrics["tokens-per-pass"] == pytest.approx(3.3616, abs=1e-12)
    curve = result["figure"]["data"][1]
    assert curve["y"][50] == pytest.approx(theory.draft_acceptance_rate(0.5, 4), abs=1e-12)


def test_draft_risk_bars_are_alpha_to_the_gamma_and_the_best_gamma_is_theorys() -> None:
    result = call("theory.draft_risk", alpha=0.7, cost=0.2)
    bars = result["figure"]["data"][0]
    assert bars["y"] == pytest.approx([0.7**g for g in range(1, 9)], abs=1e-12)
    best = theory.optimal_gamma(0.7, 0.2, max_gamma=8)
    assert result["metrics"]["optimal-gamma"] == best
    assert result["metrics"]["speedup"] == pytest.approx(theory.speedup(0.7, best, 0.2), abs=1e-12)
