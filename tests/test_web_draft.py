"""The Draft page's handlers (web/draft.py): Step 1 on the n-gram pair, and alpha^gamma against the speedup.

Each handler is checked against an independent run of the package's own steps (same seed, same calls), so the
numbers a reader sees are the algorithm's, not a re-implementation's.
"""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest

from specdec_core import acceptance_rate, models, steps, theory, web

PROMPT = "It is a truth universally acknowledged, that a single man"


def call(name: str, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(web.call(name, json.dumps(args)))
    return result


def reference_draft(seed: int, gamma: int, prompt: str = PROMPT, **shaping: Any) -> tuple[Any, ...]:
    pair = models.ngram_pair(**shaping)
    context = pair.encode(prompt)
    rng = random.Random(seed)
    tokens, q_rows = steps.draft(pair.draft.probs, context, gamma, rng)
    return pair, context, tokens, q_rows, rng


def test_draft_is_deterministic_with_a_seed() -> None:
    first = call("draft.ngram", prompt=PROMPT, gamma=6, seed=3)
    assert call("draft.ngram", prompt=PROMPT, gamma=6, seed=3) == first
    drafts = {call("draft.ngram", prompt=PROMPT, gamma=6, seed=s)["draft_text"] for s in range(6)}
    assert len(drafts) > 1, "different seeds should draft different continuations"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_draft_words_and_probabilities_come_from_the_steps(seed: int) -> None:
    result = call("draft.ngram", prompt=PROMPT, gamma=5, temperature=0.8, seed=seed)
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
        result = call("draft.ngram", prompt=PROMPT, gamma=4, seed=seed, alternatives=5)
        for pos in result["positions"]:
            qs = [a["q"] for a in pos["alternatives"][:5]]
            assert qs == sorted(qs, reverse=True)
            words = [a["word"] for a in pos["alternatives"]]
            assert pos["word"] in words
            # A word from q's tail is appended after the five favourites, never instead of one.
            assert len(words) == (5 if pos["word"] in words[:5] else 6)


def test_mean_beta_is_reported_as_beta_not_as_an_accept_rate() -> None:
    """The vocabulary: beta_i = sum_x min(p_i, q_i) at one position; their mean over the draft is metric ``beta``.

    ``accept-rate`` means accepted / drafted over a run, which one draft with no verdicts cannot have.
    all-accepted-prob = prod_i min(1, p_i/q_i); alpha-to-gamma = (mean beta) ** gamma.
    """
    result = call("draft.ngram", prompt=PROMPT, gamma=4, seed=11)
    positions, metrics = result["positions"], result["metrics"]
    assert set(metrics) == {"draft-steps", "beta", "all-accepted-prob", "alpha-to-gamma"}
    assert metrics["draft-steps"] == 4
    mean_beta = sum(p["beta"] for p in positions) / 4
    assert metrics["beta"] == pytest.approx(mean_beta, rel=1e-9)
    assert metrics["all-accepted-prob"] == pytest.approx(math.prod(p["accept"] for p in positions), rel=1e-9)
    assert metrics["alpha-to-gamma"] == pytest.approx(mean_beta**4, rel=1e-9)


def test_temperature_zero_drafts_the_draft_models_favourite() -> None:
    """The favourite is then the only word the draft can draw: its one candidate (no words of q = 0 listed)."""
    result = call("draft.ngram", prompt=PROMPT, gamma=3, temperature=0.0, seed=5)
    for pos in result["positions"]:
        assert pos["q"] == 1.0
        assert [a["word"] for a in pos["alternatives"]] == [pos["word"]]


@pytest.mark.parametrize("sampling", [{"top_k": 3}, {"top_p": 0.05}, {"temperature": 0.25}])
def test_candidates_are_words_the_draft_can_draw(sampling: dict[str, Any]) -> None:
    """Each position lists the draft's five likeliest words that it can draw (q > 0), likeliest first, then the
    drafted word if it is not among them: computed here from the draft's own q rows, sorted independently."""
    result = call("draft.ngram", prompt=PROMPT, gamma=6, seed=2, **sampling)
    pair, _, tokens, q_rows, _ = reference_draft(2, 6, **sampling)
    for pos, token, q_row in zip(result["positions"], tokens, q_rows, strict=True):
        likeliest = sorted(range(len(q_row)), key=lambda t: (-q_row[t], t))[:5]
        drawable = [t for t in likeliest if q_row[t] > 0]
        expected = drawable + ([] if token in drawable else [token])
        assert [a["word"] for a in pos["alternatives"]] == [pair.vocab[t] for t in expected]
        assert all(a["q"] > 0 for a in pos["alternatives"])
    if "top_k" in sampling:  # top-k 3 leaves three drawable words: the two of q = 0 that filled the five are gone
        assert all(len(pos["alternatives"]) == 3 for pos in result["positions"])


def test_every_word_reaches_the_models_as_pieces_never_unk() -> None:
    prompt = "Mr. Darcy bought a zeppelin"
    result = call("draft.ngram", prompt=prompt, gamma=2, seed=0)
    pieces = result["prompt_pieces"]
    assert "".join(pieces).replace("\u2581", " ") == prompt  # "▁" marks the leading space
    assert "▁Darcy" in pieces and "<unk>" not in pieces and result["prompt_tokens"] == len(pieces)
    assert result["context_text"] == prompt


def test_a_trailing_space_does_not_end_the_prompt_on_a_lone_space_piece() -> None:
    with_space = call("draft.ngram", prompt="Mr. Darcy looked at her and ", gamma=2, seed=3)
    without = call("draft.ngram", prompt="Mr. Darcy looked at her and", gamma=2, seed=3)
    assert with_space["prompt_pieces"] == without["prompt_pieces"]
    assert with_space["positions"] == without["positions"]


def test_an_empty_prompt_starts_a_paragraph() -> None:
    result = call("draft.ngram", prompt="", gamma=3, seed=2)
    pair, _, tokens, _, _ = reference_draft(2, 3, prompt="")
    assert result["draft_text"] == pair.decode(tokens)
    assert result["prompt_pieces"] == [] and result["prompt_tokens"] == 0


@pytest.mark.parametrize(
    ("args", "error", "name"),
    [
        ({"gamma": 0}, ValueError, "gamma"),
        ({"gamma": 9}, ValueError, "gamma"),
        ({"gamma": 2.5}, TypeError, "gamma"),
        ({"gamma": 10**400}, ValueError, "gamma"),
        ({"seed": -1}, ValueError, "seed"),
        ({"prompt": "word " * 100}, ValueError, "prompt"),
        ({"prompt": 42}, TypeError, "prompt"),
        ({"temperature": -1.0}, ValueError, "temperature"),
        ({"temperature": math.nan}, ValueError, "temperature"),
        ({"temperature": math.inf}, ValueError, "temperature"),
        ({"temperature": "1"}, TypeError, "temperature"),
        ({"top_k": 10**30}, ValueError, "top_k"),
        ({"top_k": 1.5}, TypeError, "top_k"),
        ({"top_p": 0.0}, ValueError, "top_p"),
        ({"top_p": math.nan}, ValueError, "top_p"),
    ],
)
def test_bad_arguments_are_refused_by_name(args: dict[str, Any], error: type[Exception], name: str) -> None:
    """Both n-gram handlers share the draft step's checks: the error is the right type and names the argument."""
    for handler in ("draft.ngram", "verify.ngram"):
        with pytest.raises(error, match=name):
            web.call(handler, json.dumps({"prompt": PROMPT, "gamma": 3, "seed": 0, **args}))


def test_risk_bars_are_alpha_to_the_gamma_and_the_best_gamma_is_theorys() -> None:
    result = call("draft.risk", alpha=0.7, cost=0.2)
    bars = result["figure"]["data"][0]
    assert bars["y"] == pytest.approx([0.7**g for g in range(1, 9)], abs=1e-12)
    best = theory.optimal_gamma(0.7, 0.2, max_gamma=8)
    assert result["metrics"]["optimal-gamma"] == best
    assert result["metrics"]["speedup"] == pytest.approx(theory.speedup(0.7, best, 0.2), abs=1e-12)
    assert result["metrics"]["all-accepted-prob"] == pytest.approx(0.7**best, abs=1e-12)


@pytest.mark.parametrize("args", [{"alpha": 0.0, "cost": 0.05}, {"alpha": 0.8, "cost": 1.0}])
def test_risk_at_best_gamma_zero_shows_no_all_accepted_probability(args: dict[str, float]) -> None:
    """Nothing pays, so nothing is drafted: the probability that every draft passes has no draft to speak of (it
    read 1.000 beside "Best gamma 0")."""
    result = call("draft.risk", **args)
    assert result["metrics"]["optimal-gamma"] == 0
    assert result["metrics"]["speedup"] == 1.0
    assert result["metrics"]["all-accepted-prob"] is None


@pytest.mark.parametrize(("args", "name"), [({"alpha": math.nan}, "alpha"), ({"cost": math.inf}, "cost")])
def test_risk_refuses_non_finite_numbers_by_name(args: dict[str, Any], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        web.call("draft.risk", json.dumps({"alpha": 0.8, "cost": 0.05, **args}))
