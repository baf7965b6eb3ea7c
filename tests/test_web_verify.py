"""The Verify page's handlers (web/verify.py): one position, one real round of the n-gram pair, and the rates.

The round is checked against an independent run of the package's own steps (same seed, same calls), so the
numbers a reader sees are the algorithm's, not a re-implementation's.
"""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction
from typing import Any

import pytest

from specdec_core import acceptance_rate, models, residual, steps, theory, web

PROMPT = "It is a truth universally acknowledged, that a single man"
P = [0.4, 0.35, 0.25]
Q = [0.2, 0.2, 0.6]


def call(name: str, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(web.call(name, json.dumps(args)))
    return result


# One position ---------------------------------------------------------------------------------------------------


def test_pair_worked_example() -> None:
    """Our worked example, p = [.4, .35, .25], q = [.2, .2, .6]: beta = .65; residual [.2, .15, 0] / .35.

    beta is metric ``beta`` (one position's acceptance probability), not ``accept-rate`` (accepted / drafted).
    """
    result = call("verify.pair", p=P, q=Q)
    assert set(result["metrics"]) == {"beta", "reject-rate", "tv-distance"}
    assert result["metrics"]["beta"] == pytest.approx(0.65, abs=1e-12)
    assert result["metrics"]["reject-rate"] == pytest.approx(0.35, abs=1e-12)
    assert result["residual"] == pytest.approx([float(Fraction(4, 7)), float(Fraction(3, 7)), 0.0], abs=1e-12)


def test_pair_blend_moves_the_draft_toward_the_target() -> None:
    """blend = .5 gives q' = (q + p) / 2 = [.3, .275, .425]; beta and the residual follow from q'."""
    result = call("verify.pair", p=P, q=Q, blend=0.5)
    draft = [(a + b) / 2 for a, b in zip(P, Q, strict=True)]
    assert result["q"] == pytest.approx(draft, abs=1e-12)
    assert result["metrics"]["beta"] == pytest.approx(acceptance_rate(P, draft), abs=1e-12)
    assert result["residual"] == pytest.approx(residual(P, draft), abs=1e-12)


def test_pair_full_blend_accepts_everything() -> None:
    result = call("verify.pair", p=P, q=Q, blend=1)
    assert result["metrics"]["beta"] == pytest.approx(1.0, abs=1e-12)
    assert result["metrics"]["tv-distance"] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ({"blend": 2}, ValueError, "blend"),
        ({"blend": math.nan}, ValueError, "blend"),
        ({"blend": "0.5"}, TypeError, "blend"),
        ({"q": [0.5, 0.5]}, ValueError, "same length"),
        ({"labels": ["a"]}, ValueError, "labels"),
        ({"p": [math.inf, 0.0, 0.0]}, ValueError, r"p\[0\]"),
        ({"q": [0.5] * 1000}, ValueError, "q must have at most"),
    ],
)
def test_pair_rejects_bad_input_by_name(args: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        web.call("verify.pair", json.dumps({"p": P, "q": Q, **args}))


# A real round ---------------------------------------------------------------------------------------------------


def test_verify_uses_the_same_draft_as_the_draft_page() -> None:
    for seed in range(4):
        draft = call("draft.ngram", prompt=PROMPT, gamma=5, seed=seed)
        verify = call("verify.ngram", prompt=PROMPT, gamma=5, seed=seed)
        assert [p["word"] for p in verify["positions"]] == [p["word"] for p in draft["positions"]]
        assert verify["metrics"]["beta"] == draft["metrics"]["beta"]  # the same mean beta, named the same


@pytest.mark.parametrize("seed", range(12))
def test_verify_decisions_follow_u_against_p_over_q(seed: int) -> None:
    """Accepted exactly when u < p/q; the first rejection ends verification and later drafts are discarded."""
    result = call("verify.ngram", prompt=PROMPT, gamma=6, temperature=1.2, seed=seed)
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


def test_one_draft_that_passes_is_spoken_of_in_the_singular() -> None:
    """gamma = 1 and accepted (seed 0 accepts here): "It passed", not "All 1 passed"."""
    summary = call("verify.ngram", prompt=PROMPT, gamma=1, seed=0)["summary"]
    assert summary.startswith("Drafted 1, accepted 1. It passed, so the bonus")


@pytest.mark.parametrize(("temperature", "top_k", "most"), [(0.0, 50, 1), (1.0, 2, 2), (1.0, 50, 3)])
def test_top_words_list_only_words_the_target_can_write(temperature: float, top_k: int, most: int) -> None:
    """A greedy row has one word, a top-2 row two: the table lists those and no zero-probability filler after them
    (at temperature 0 it read "to 1.000 · <0x00> 0 · <0x01> 0")."""
    result = call("verify.ngram", prompt=PROMPT, gamma=4, temperature=temperature, top_k=top_k, seed=0)
    tops = [row["top"] for row in result["rows"]] + [result["final"]["top"]]
    for top in tops:
        # Greedy keeps one token, top-2 two, and the full row shows its three likeliest: exactly that many.
        assert len(top) == most, top
        probs = [entry["p"] for entry in top]
        assert min(probs) > 0 and probs == sorted(probs, reverse=True), top


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 9])
def test_verify_summary_tells_the_round(seed: int) -> None:
    """The status line's sentence names the round's counts, the rejected word with its u and threshold, and the
    source of the last token."""
    result = call("verify.ngram", prompt=PROMPT, gamma=4, top_k=30, seed=seed)
    summary, final = result["summary"], result["final"]
    assert summary.startswith(f"Drafted 4, accepted {result['metrics']['accepted']}.")
    rejected = [p for p in result["positions"] if p["outcome"] == "rejected"]
    if rejected:
        first = rejected[0]
        assert f"Rejected “{first['word']}” at position {first['index'] + 1} (u = {first['u']:.3f}" in summary
        assert f"The correction “{final['word']}”" in summary
    else:
        assert f"the bonus “{final['word']}”" in summary
    emitted = result["metrics"]["tokens-emitted"]
    assert summary.endswith(f"{emitted} token{'' if emitted == 1 else 's'} for one target pass.")


@pytest.mark.parametrize("seed", [0, 9, 21])
def test_verify_round_matches_speculative_round(seed: int) -> None:
    """The handler's round is steps.speculative_round on the draft, with p from one pass over gamma + 1 prefixes."""
    result = call("verify.ngram", prompt=PROMPT, gamma=4, top_k=30, seed=seed)
    pair = models.ngram_pair(top_k=30)
    context = pair.encode(PROMPT)
    rng = random.Random(seed)
    tokens, q_rows = steps.draft(pair.draft.probs, context, 4, rng)
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
    mean_beta = sum(acceptance_rate(p_rows[i], q_rows[i]) for i in range(4)) / 4
    assert result["metrics"]["beta"] == pytest.approx(mean_beta, abs=1e-9)
    assert "accept-rate" not in result["metrics"]


def test_first_position_is_accepted_at_rate_beta() -> None:
    """With the prompt fixed, position 1 always has the same p and q, so over seeds it is accepted with probability
    beta_1 = sum_x min(p(x), q(x)). N = 300 seeds: sd = sqrt(beta (1 - beta) / N) <= 0.029; tolerance 4 sd = 0.116.
    """
    n = 300
    results = [call("verify.ngram", prompt=PROMPT, gamma=1, seed=s) for s in range(n)]
    beta = results[0]["positions"][0]["beta"]
    assert all(r["positions"][0]["beta"] == beta for r in results)
    rate = sum(r["positions"][0]["outcome"] == "accepted" for r in results) / n
    assert abs(rate - beta) < 4 * math.sqrt(beta * (1 - beta) / n) + 1e-9


# The rates a server reports -------------------------------------------------------------------------------------


def test_rates_use_the_vocabularys_names_and_match_theory() -> None:
    """alpha = .8, gamma = 4: the draft acceptance rate (metric ``accept-rate``) is (E[tokens] - 1) / gamma =
    (3.3616 - 1) / 4 = .5904; tokens per target pass 3.3616; all four survive with probability alpha^4 = .4096."""
    result = call("verify.rates", alpha=0.8, gamma=4)
    metrics = result["metrics"]
    assert set(metrics) == {"alpha", "accept-rate", "all-accepted-prob", "tokens-per-pass"}
    assert metrics["accept-rate"] == pytest.approx(0.5904, abs=1e-12)
    assert metrics["all-accepted-prob"] == pytest.approx(0.4096, abs=1e-12)
    assert metrics["tokens-per-pass"] == pytest.approx(3.3616, abs=1e-12)
    curve = result["figure"]["data"][1]
    assert curve["y"][50] == pytest.approx(theory.draft_acceptance_rate(0.5, 4), abs=1e-12)


def test_rates_name_the_whole_draft_in_english_and_draw_the_setting_whole() -> None:
    """gamma 1 names "the one draft", not "all 1"; the dots marking the reader's alpha are not clipped at 0 or 1."""
    names = [t["name"] for t in call("verify.rates", alpha=0.0, gamma=1)["figure"]["data"]]
    assert "the one draft accepted: \N{GREEK SMALL LETTER ALPHA}<sup>\N{GREEK SMALL LETTER GAMMA}</sup>" in names
    assert not [n for n in names if "all 1" in n]
    assert any(n.startswith("all 4 accepted") for n in (t["name"] for t in call("verify.rates")["figure"]["data"]))
    dots = [t for t in call("verify.rates", alpha=0.0, gamma=1)["figure"]["data"] if t["mode"] == "markers"]
    assert len(dots) == 3 and all(t["cliponaxis"] is False and t["x"] == [0.0] for t in dots)


@pytest.mark.parametrize(
    ("args", "error", "name"),
    [
        ({"alpha": math.nan}, ValueError, "alpha"),
        ({"alpha": "x"}, TypeError, "alpha"),
        ({"gamma": 9}, ValueError, "gamma"),
    ],
)
def test_rates_refuse_bad_input_by_name(args: dict[str, Any], error: type[Exception], name: str) -> None:
    with pytest.raises(error, match=name):
        web.call("verify.rates", json.dumps({"alpha": 0.8, "gamma": 4, **args}))
