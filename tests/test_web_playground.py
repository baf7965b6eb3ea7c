"""The Playground's handler, ``playground.run``: chunked runs, replay, exact theory and the exactness check.

Every call goes through ``web.call`` (JSON in, JSON out), the way the worker and the build hook call it.
"""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest

from specdec_core import web
from specdec_core.models import QUALITY_WORDS, quality_pair
from specdec_core.steps import draft, speculative_round
from specdec_core.theory import draft_acceptance_rate, expected_tokens

KINDS = {"accepted", "rejected", "correction", "discarded", "bonus"}


def run(**args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(web.call("playground.run", json.dumps(args)))
    return result


def chunked(total: int, chunk: int, session: str, **settings: Any) -> dict[str, Any]:
    """Play ``total`` rounds in calls of ``chunk`` rounds, carrying the history as the page does."""
    history: list[Any] = []
    result: dict[str, Any] = {}
    played = 0
    while played < total:
        n = min(chunk, total - played)
        result = run(**settings, rounds=n, session=session, history=history)
        history = result["history"]
        played += n
    return result


def test_preview_before_any_round_has_no_measured_rates_and_no_verdict() -> None:
    result = run(quality=0.85, gamma=4, cost=0.05, seed=0, rounds=0, session="preview")
    metrics = result["metrics"]
    assert metrics["rounds"] == 0 and metrics["tokens-emitted"] == 0
    assert "accept-rate" not in metrics and "exact" not in metrics
    assert result["verdict"]["state"] == "thin"
    assert 0.0 < metrics["accept-rate-theory"] < 1.0
    assert result["stream"] == [] and result["explanation"] is None


def test_chunked_run_equals_one_long_call() -> None:
    """Many short calls advance one run: 300 rounds in chunks of 7 are the 300 rounds of a single call."""
    settings = {"quality": 0.7, "gamma": 3, "cost": 0.1, "seed": 11}
    many = chunked(300, 7, "chunks", **settings)
    once = run(**settings, rounds=300, session="once")
    assert many["metrics"] == once["metrics"]
    assert many["stream"] == once["stream"]
    assert many["history"] == [[0.7, 3, 300]]


def test_lost_state_is_replayed_from_seed_and_history() -> None:
    """A fresh session id (as after Retry restarts the worker) replays the history to the same run."""
    settings = {"quality": 0.6, "gamma": 5, "cost": 0.05, "seed": 3}
    first = run(**settings, rounds=120, session="a")
    assert first["replayed"] is False
    again = run(**settings, rounds=0, session="other", history=first["history"])
    assert again["replayed"] is True
    assert again["metrics"] == first["metrics"] and again["stream"] == first["stream"]


def test_settings_change_mid_run_continues_the_run() -> None:
    """Dropping the quality without a reset appends a segment; the replayed run matches the live one."""
    good = run(quality=0.95, gamma=4, seed=5, rounds=100, session="mid")
    bad = run(quality=0.05, gamma=4, seed=5, rounds=100, session="mid", history=good["history"])
    assert bad["history"] == [[0.95, 4, 100], [0.05, 4, 100]]
    assert bad["metrics"]["rounds"] == 200
    assert bad["metrics"]["accept-rate"] < good["metrics"]["accept-rate"]
    replay = run(quality=0.05, gamma=4, seed=5, rounds=0, session="mid-replay", history=bad["history"])
    assert replay["metrics"] == bad["metrics"]


def test_same_seed_same_run_other_seed_other_run() -> None:
    a = run(quality=0.8, gamma=4, seed=1, rounds=50, session="s1")
    b = run(quality=0.8, gamma=4, seed=1, rounds=50, session="s2")
    c = run(quality=0.8, gamma=4, seed=2, rounds=50, session="s3")
    assert a["stream"] == b["stream"]
    assert a["stream"] != c["stream"]


def test_the_run_is_the_real_round_from_the_seed() -> None:
    """An independent loop over steps.draft and steps.speculative_round with the same rng gives the same tokens."""
    result = run(quality=0.5, gamma=3, seed=9, rounds=24, session="independent")
    pair = quality_pair(0.5)
    rng = random.Random(9)
    last = QUALITY_WORDS.index(".")
    emitted: list[list[str]] = []
    for _ in range(24):
        drafts, q_rows = draft(pair.draft.probs, [last], 3, rng)
        context = [last, *drafts]
        round_ = speculative_round([pair.target.probs(context[: j + 1]) for j in range(4)], q_rows, drafts, rng)
        emitted.append([QUALITY_WORDS[t] for t in round_.tokens])
        last = round_.tokens[-1]
    shown = [[w for w, kind in r["tokens"] if kind in {"accepted", "correction", "bonus"}] for r in result["stream"]]
    assert shown == emitted


def test_stream_reads_accepted_then_rejected_correction_discarded_or_bonus() -> None:
    result = run(quality=0.4, gamma=6, seed=4, rounds=40, session="stream")
    assert len(result["stream"]) == 24
    for r in result["stream"]:
        kinds = [kind for _, kind in r["tokens"]]
        assert set(kinds) <= KINDS
        accepted = kinds.count("accepted")
        assert kinds[:accepted] == ["accepted"] * accepted
        if "bonus" in kinds:
            assert kinds == ["accepted"] * r["gamma"] + ["bonus"]
        else:
            rest = kinds[accepted:]
            assert rest[:2] == ["rejected", "correction"]
            assert rest[2:] == ["discarded"] * (r["gamma"] - accepted - 1)


def test_counters_add_up() -> None:
    """emitted = accepted + one correction-or-bonus per round; drafted = accepted + rejected + discarded."""
    m = run(quality=0.6, gamma=4, seed=8, rounds=500, session="count")["metrics"]
    assert m["tokens-emitted"] == m["accepted"] + m["rounds"]
    assert m["drafted"] == 4 * m["rounds"] == m["accepted"] + m["rejected"] + m["discarded"]
    assert m["rejected"] + m["bonuses"] == m["rounds"]
    assert m["tokens-per-pass"] == pytest.approx(m["tokens-emitted"] / m["rounds"], abs=1e-6)
    assert m["speedup"] == pytest.approx(m["tokens-emitted"] / (m["rounds"] + 0.05 * m["drafted"]), abs=1e-6)


def test_explanation_says_what_the_round_did() -> None:
    for seed in range(6):
        result = run(quality=0.5, gamma=4, seed=seed, rounds=1, session=f"explain{seed}")
        text = result["explanation"]
        tokens = result["stream"][-1]["tokens"]
        assert text.startswith("Round 1: drafted 4")
        if tokens[-1][1] == "bonus":
            assert f'all 4 accepted, bonus "{tokens[-1][0]}"' in text
        else:
            rejected = next(w for w, k in tokens if k == "rejected")
            correction = next(w for w, k in tokens if k == "correction")
            accepted = sum(k == "accepted" for _, k in tokens)
            assert f'accepted {accepted}, rejected "{rejected}"' in text
            assert f'resampled "{correction}"' in text


def test_quality_one_accepts_everything_and_theory_says_so() -> None:
    m = run(quality=1.0, gamma=4, seed=0, rounds=50, session="perfect")["metrics"]
    assert m["accept-rate"] == 1.0 and m["accept-rate-theory"] == pytest.approx(1.0, abs=1e-9)
    assert m["tokens-per-pass"] == 5.0


def test_iid_limit_theory_matches_the_closed_form() -> None:
    """The preview uses exact per-context acceptance; its effective alpha reproduces Eq. 1 and the vLLM rate."""
    m = run(quality=0.85, gamma=4, seed=0, rounds=0, session="closed")["metrics"]
    alpha = m["alpha-effective"]
    assert m["tokens-per-pass-theory"] == pytest.approx(expected_tokens(alpha, 4), abs=1e-5)
    assert m["accept-rate-theory"] == pytest.approx(draft_acceptance_rate(alpha, 4), abs=1e-5)


@pytest.mark.parametrize(("quality", "gamma"), [(0.85, 4), (0.2, 8), (0.6, 2)])
def test_accept_rate_agrees_with_its_exact_theory(quality: float, gamma: int) -> None:
    """|measured - theory| <= 4 sd, where sd = sqrt(sum of per-round Var[accepted | start]) / drafted.

    The differences accepted_r - E[accepted_r | start_r] form a martingale-difference sequence, so their sum has
    exactly that variance; 4 sd fails a correct engine with probability below 1e-4 (Chebyshev: 1/16 at worst).
    """
    m = run(quality=quality, gamma=gamma, seed=21, rounds=1500, session=f"theory{quality}")["metrics"]
    assert abs(m["accept-rate"] - m["accept-rate-theory"]) <= 4 * m["accept-rate-sd"]
    assert 0 < m["accept-rate-sd"] <= gamma / (2 * math.sqrt(1500)) / gamma + 1e-9


def test_output_is_consistent_with_the_target_even_with_a_random_draft() -> None:
    """Quality 0.05 over 2,000 rounds: the per-context chi-square does not reject (seeded), TV sits near noise."""
    m = run(quality=0.05, gamma=4, seed=2, rounds=2000, session="random")["metrics"]
    assert m["df"] > 50
    assert m["exact"] == 1 and m["p-value"] >= 0.001
    assert m["tv-distance"] <= 4 * m["tv-noise"]
    assert m["tv-draft"] > 5 * m["tv-noise"]  # the draft itself is far from the target: the test can tell


def test_exactness_check_rejects_a_broken_output() -> None:
    """The same statistic, fed the draft's tokens instead of the output, rejects: the check has power."""
    from specdec_core.stats import chi_square_sf, grouped_chi_square

    pair = quality_pair(0.3)
    size = len(QUALITY_WORDS)
    rng = random.Random(0)
    counts = [[0] * size for _ in range(size)]
    last = size - 1
    for _ in range(3000):
        token = rng.choices(range(size), weights=pair.draft.probs([last]))[0]
        counts[last][token] += 1
        last = token
    stat, df = grouped_chi_square(counts, [pair.target.probs([t]) for t in range(size)])
    assert chi_square_sf(stat, df) < 1e-6


def test_thin_evidence_gives_no_verdict() -> None:
    result = run(quality=0.85, gamma=4, seed=0, rounds=5, session="thin")
    assert result["verdict"]["state"] == "thin"
    assert "too few tokens yet" in result["verdict"]["text"]
    assert "exact" not in result["metrics"]


def test_figures_follow_the_run() -> None:
    before = run(quality=0.85, gamma=4, seed=0, rounds=0, session="figs")
    after = run(quality=0.85, gamma=4, seed=0, rounds=80, session="figs", history=before["history"])
    assert set(after["figures"]) == {"accepted", "window", "distributions", "takeaway"}
    assert len(before["figures"]["distributions"]["data"]) == 2  # target and draft; no output yet
    assert len(after["figures"]["distributions"]["data"]) == 3
    assert sum(after["figures"]["accepted"]["data"][0]["y"]) == pytest.approx(1.0, abs=1e-9)
    assert after["figures"]["window"]["data"][0]["x"][-1] == 80


def test_slider_changes_the_figures_and_theory() -> None:
    low = run(quality=0.3, gamma=4, seed=0, rounds=0, session="low")
    high = run(quality=0.9, gamma=4, seed=0, rounds=0, session="high")
    assert low["metrics"]["accept-rate-theory"] < high["metrics"]["accept-rate-theory"]
    assert low["figures"]["takeaway"] != high["figures"]["takeaway"]
    assert low["figures"]["distributions"] != high["figures"]["distributions"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"gamma": 9}, "gamma must be between 1 and 8"),
        ({"gamma": 0}, "gamma must be between 1 and 8"),
        ({"quality": 1.5}, "quality must be between 0 and 1"),
        ({"cost": -1}, "cost must be a finite number"),
        ({"rounds": 10_000}, "rounds must be an int between 0 and 5000"),
        ({"seed": -1}, "seed must be an int"),
        ({"history": [[0.5, 4]]}, r"history\[0\] must be \[quality, gamma, rounds\]"),
    ],
)
def test_bad_arguments_are_named(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        run(**args)


def test_result_is_json_safe_at_extremes() -> None:
    for quality in (0.0, 1.0):
        for gamma in (1, 8):
            text = web.call("playground.run", json.dumps({"quality": quality, "gamma": gamma, "rounds": 300}))
            json.loads(text, parse_constant=lambda token: pytest.fail(f"non-finite {token}"))
