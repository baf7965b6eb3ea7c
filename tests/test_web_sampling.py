"""The Sampling settings page's handler (web/sampling.py): alpha against temperature, and the declared-q pitfall."""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction
from typing import Any

import pytest

from specdec_core import models, web
from specdec_core.distributions import acceptance_rate, shape
from specdec_core.web import sampling

PROMPT = "It is a truth universally acknowledged, that a single man in possession of a good fortune"
#: A correct sampler fails a test of this module about once in a billion seeds (see each tolerance).
DELTA = 1e-9


def run(**args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(web.call("sampling.explore", json.dumps({"prompt": PROMPT, **args})))
    return result


def _argmax(row: list[float]) -> int:
    best = max(row)
    return row.index(best)  # the lowest id among the largest, as temperature 0 picks


def _contexts() -> list[list[int]]:
    pair = models.ngram_pair()
    ids = pair.encode(PROMPT)
    return [ids[:i] for i in range(max(1, len(ids) - sampling.MAX_CONTEXTS + 1), len(ids) + 1)]


def _mean_tv_bound(row: list[float], n: int) -> float:
    """E[TV(shares of n draws, row)] <= (1/2) sum_x sqrt(row(x) (1 - row(x)) / n) (Jensen, cell by cell), and one
    draw moves the TV by at most 1/n, so McDiarmid gives P(TV > that + t) <= exp(-2 n t^2) = DELTA for
    t = sqrt(ln(1 / DELTA) / (2 n))."""
    mean = 0.5 * math.fsum(math.sqrt(x * (1.0 - x) / n) for x in row)
    return mean + math.sqrt(math.log(1.0 / DELTA) / (2.0 * n))


def test_temperature_zero_accepts_exactly_where_the_argmaxes_agree() -> None:
    """At temperature 0 both models are one-hots on their argmax, so beta is 1 where the argmaxes agree and 0
    elsewhere, whatever top-k and top-p do (they keep the argmax). The measured alpha is then no estimate: every
    draft is the draft's argmax and is accepted exactly when it is also the target's, so it equals the share of
    agreeing contexts for every seed, and its standard error is 0."""
    contexts = _contexts()
    pair = models.ngram_pair()
    agree = [_argmax(pair.target.probs(c)) == _argmax(pair.draft.probs(c)) for c in contexts]
    assert 0 < sum(agree) < len(agree)  # both cases occur on this prompt
    key = tuple(tuple(c) for c in contexts)
    for top_k, top_p in [(0, 1.0), (50, 1.0), (5, 0.5)]:
        assert sampling.betas(key, (0.0, top_k, top_p))["same"] == [1.0 if a else 0.0 for a in agree]
    for seed in (0, 1):
        m = run(temperature=0.0, top_k=50, top_p=1.0, seed=seed, rounds=len(contexts) * 3, samples=50)["metrics"]
        assert m["alpha"] == m["argmax-agree"] == sum(agree) / len(agree)
        assert m["alpha-exact"] == pytest.approx(m["alpha"], abs=1e-12)
        assert m["alpha-se"] == 0.0


@pytest.mark.parametrize("temperature", [0.5, 1.5])
def test_measured_alpha_agrees_with_the_enumerated_alpha(temperature: float) -> None:
    """alpha-exact is the mean over the contexts of beta = sum_x min(p(x), q(x)) with both rows shaped alike,
    recomputed here from the models. The measured alpha is the mean of N = 1,200 independent accept indicators
    whose expectations average to alpha-exact, so by Hoeffding |measured - exact| <= sqrt(ln(2 / DELTA) / (2 N))
    = .094 except with probability DELTA; the reported standard error is sqrt(sum beta (1 - beta)) / N."""
    settings = {"temperature": temperature, "top_k": 50, "top_p": 1.0}
    contexts = _contexts()
    pair = models.ngram_pair(**settings)
    betas = [acceptance_rate(pair.target.probs(c), pair.draft.probs(c)) for c in contexts]
    m = run(**settings, seed=3, rounds=1200, samples=50)["metrics"]
    n = m["rounds"]
    assert n == 1200 // len(contexts) * len(contexts)
    assert m["alpha-exact"] == pytest.approx(math.fsum(betas) / len(betas), abs=1e-12)
    assert abs(m["alpha"] - m["alpha-exact"]) <= math.sqrt(math.log(2 / DELTA) / (2 * n))
    per_context = n // len(contexts)
    expected_se = math.sqrt(per_context * math.fsum(b * (1 - b) for b in betas)) / n
    assert m["alpha-se"] == pytest.approx(expected_se, rel=1e-9)
    # The curve's point at this temperature is the same enumeration.
    curve = sampling.curves(tuple(tuple(c) for c in contexts), 50, 1.0)
    assert curve["same"][sampling.TEMPERATURES.index(temperature)] == pytest.approx(m["alpha-exact"], abs=1e-12)


def test_the_draft_at_other_settings_changes_alpha_and_its_own_settings_are_the_plain_pair() -> None:
    """With the request at temperature 1 and no top-k or top-p, the draft's own settings are the request's, so
    alpha-own equals alpha-exact. The greedy draft declared as its one-hot has beta = p(argmax q) (recomputed here),
    and sharpening the target moves alpha-own while the draft's row stays the same."""
    plain = run(temperature=1.0, top_k=0, top_p=1.0, rounds=16, samples=50)["metrics"]
    assert plain["alpha-own"] == pytest.approx(plain["alpha-exact"], abs=1e-12)
    contexts = _contexts()
    pair = models.ngram_pair(temperature=0.5, top_k=50)
    greedy = [pair.target.probs(c)[_argmax(pair.draft.probs(c))] for c in contexts]
    sharp = run(temperature=0.5, top_k=50, top_p=1.0, rounds=16, samples=50)["metrics"]
    assert sharp["alpha-greedy"] == pytest.approx(math.fsum(greedy) / len(greedy), abs=1e-12)
    assert abs(sharp["alpha-own"] - sharp["alpha-exact"]) > 0.02


def _pitfall_law(p: list[float], q: list[float]) -> list[Fraction]:
    """The pitfall's emitted token, derived here by hand: the draft proposes a = argmax q; the verifier accepts it
    with min(1, p(a) / q(a)) as if a were drawn from q; otherwise the correction comes from normalize(max(0, p - q))."""
    p_sum, q_sum = sum(map(Fraction, p), Fraction(0)), sum(map(Fraction, q), Fraction(0))
    pf, qf = [Fraction(x) / p_sum for x in p], [Fraction(x) / q_sum for x in q]
    a = _argmax(q)
    keep = min(Fraction(1), pf[a] / qf[a])
    excess = [max(Fraction(0), x - y) for x, y in zip(pf, qf, strict=True)]
    excess_sum = sum(excess, Fraction(0))
    law = [(1 - keep) * e / excess_sum for e in excess]
    law[a] += keep
    return law


def test_the_declared_q_pitfall_is_far_from_the_target_and_the_fix_is_at_noise_level() -> None:
    """At the prompt's last context, temperature 1, top-k 50, n = 2,000 one-token rounds each.

    Pitfall (argmax proposed, softmax declared): its exact output law, derived independently above, is a TV of
    about .4 from p. Its sample's TV is at least that minus TV(sample, law), which exceeds _mean_tv_bound(law, n)
    (about .1 here) with probability below DELTA: so it stays far above zero and far above the noise level. Fix (the
    one-hot declared, run through the engine): the output law is p exactly (enumerated: exact-tv 0) and its sample's
    TV stays below _mean_tv_bound(p, n), with the pooled chi-square's verdict "consistent".
    """
    n, settings = 2000, (1.0, 50, 1.0)
    pair = web.draft.ngram_pair(*settings)
    last = _contexts()[-1]
    p, q = pair.target.probs(last), pair.draft.probs(last)
    law = _pitfall_law(p, q)
    exact_tv = sum((abs(a - Fraction(b)) for a, b in zip(law, p, strict=True)), Fraction(0)) / 2
    broken_law, broken_counts = sampling.pitfall(pair, last, "softmax", n, random.Random(5))
    assert broken_law == law
    broken = sampling.fit(broken_counts, p)
    floor = float(exact_tv) - _mean_tv_bound([float(x) for x in law], n)
    assert floor > 0.25
    assert broken["tv-distance"] >= floor
    assert broken["tv-distance"] > 5 * broken["tv-noise"]
    assert broken["exact"] == 0 and broken["p-value"] < 1e-9
    fixed_law, fixed_counts = sampling.pitfall(pair, last, "sampled", n, random.Random(5))
    total = sum(map(Fraction, p), Fraction(0))
    assert fixed_law == [Fraction(x) / total for x in p]
    fixed = sampling.fit(fixed_counts, p)
    assert fixed["samples"] == n
    assert fixed["tv-distance"] <= _mean_tv_bound(p, n)
    assert fixed["exact"] == 1


def test_the_page_reports_the_pitfall_and_the_fix() -> None:
    """The handler's pitfall metrics are the functions above at the prompt's last context: the exact TV is far from
    0 for the pitfall and 0 for the fix, and the sample's verdict follows (sizes as in the test above)."""
    broken = run(seed=5, rounds=16, samples=2000, declared="softmax")["metrics"]
    assert broken["exact-tv"] > 0.3 and broken["exact"] == 0
    fixed = run(seed=5, rounds=16, samples=400, declared="sampled")["metrics"]
    assert fixed["exact-tv"] == 0.0 and fixed["exact"] == 1 and fixed["samples"] == 400


def test_at_temperature_zero_the_pitfall_disappears() -> None:
    """At temperature 0 the declared softmax is itself the one-hot the draft samples from: the pitfall's law is p."""
    m = run(temperature=0.0, top_k=50, top_p=1.0, rounds=16, samples=200, declared="softmax")["metrics"]
    assert m["exact-tv"] == 0.0 and m["tv-distance"] == 0.0 and m["exact"] == 1


def test_the_pitfall_chart_names_only_tokens_the_target_or_the_draft_can_emit() -> None:
    """At temperature 0 the target row is one-hot: the chart shows that token (and "others"), not six byte tokens
    of probability 0 ("<0x00>", "<0x01>", ...) as its likeliest."""
    bars = run(temperature=0.0, rounds=16, samples=200, declared="softmax")["figures"]["pitfall"]["data"]
    labels, target = bars[0]["x"], bars[0]["y"]
    assert labels[-1] == "others" and 2 <= len(labels) <= 3, labels
    assert target[0] == 1.0 and not any(label.startswith("<0x") for label in labels), labels


def test_is_deterministic_with_a_seed() -> None:
    args = {"rounds": 64, "samples": 300}
    assert run(**args, seed=2) == run(**args, seed=2)
    assert run(**args, seed=2)["metrics"]["alpha"] != run(**args, seed=9)["metrics"]["alpha"]


@pytest.mark.parametrize(("declared", "temperature"), [("softmax", 0.0), ("sampled", 1.25)])
def test_results_are_json_safe_and_shaped_for_the_page(declared: str, temperature: float) -> None:
    args = {"prompt": PROMPT, "temperature": temperature, "declared": declared, "rounds": 32, "samples": 200}
    text = web.call("sampling.explore", json.dumps(args))
    result = json.loads(text, parse_constant=lambda token: pytest.fail(f"non-finite {token}"))
    assert set(result["figures"]) == {"alpha", "contexts", "pitfall"}
    m = result["metrics"]
    for name in ("alpha", "alpha-exact", "tv-distance", "tv-noise", "exact"):
        assert isinstance(m[name], int | float) and not isinstance(m[name], bool)
    assert 0.0 <= m["alpha"] <= 1.0 and 0.0 <= m["alpha-exact"] <= 1.0
    pitfall = result["figures"]["pitfall"]["data"]
    assert [sum(trace["y"]) for trace in pitfall] == pytest.approx([1.0, 1.0, 1.0], abs=1e-9)
    assert result["declared"] == declared and result["description"] == sampling.DECLARED[declared]


@pytest.mark.numpy
def test_figures_validate_with_plotly() -> None:
    import plotly.graph_objects as go  # native only

    for declared in sampling.DECLARED:
        for fig in run(temperature=0.5, declared=declared, rounds=32, samples=100)["figures"].values():
            go.Figure(fig)


def test_the_empty_prompt_is_the_start_of_a_paragraph() -> None:
    m = run(prompt="", rounds=10, samples=50)["metrics"]
    assert m["contexts"] == 1 and m["rounds"] == 10


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ({"temperature": 2.5}, ValueError, "temperature must be a number between 0 and 2"),
        ({"temperature": "1"}, TypeError, "temperature must be a number"),
        ({"top_k": -1}, ValueError, "top_k must be between 0 and 1024"),
        ({"top_k": 1.5}, TypeError, "top_k must be an int"),
        ({"top_p": 0.0}, ValueError, "top_p must be a number between 0.05 and 1"),
        ({"seed": -1}, ValueError, "seed"),
        ({"rounds": 10**6}, ValueError, "rounds must be between 1 and 4000"),
        ({"samples": 0}, ValueError, "samples must be between 1 and 20000"),
        ({"declared": "logits"}, ValueError, "declared must be one of softmax, sampled"),
        ({"prompt": 3}, TypeError, "prompt must be a string"),
    ],
)
def test_refuses_bad_input_by_name(args: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        run(**args)


def test_shaping_matches_the_models_own() -> None:
    """The page shapes unshaped rows with distributions.shape; the models shaped at construction must agree."""
    contexts = _contexts()[-3:]
    shaped = models.ngram_pair(temperature=0.7, top_k=30, top_p=0.8)
    plain = models.ngram_pair()
    for c in contexts:
        assert shape(plain.target.probs(c), temperature=0.7, top_k=30, top_p=0.8) == shaped.target.probs(c)
