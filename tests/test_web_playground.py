"""The Playground's handler, ``playground.run``: a run carried in its state, exact theory and the exactness check.

Every call goes through ``web.call`` (JSON in, JSON out), the way the worker and the build hook call it, so the
state the tests hand back has made the same JSON round trip as the page's.
"""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core import engine, web
from specdec_core.models import QUALITY_WORDS, quality_pair
from specdec_core.policies import FixedPolicy
from specdec_core.theory import draft_acceptance_rate, expected_tokens
from specdec_core.web import playground
from specdec_core.web.args import _numbers_like, check_like

KINDS = {"accepted", "rejected", "correction", "discarded", "bonus"}


def run(**args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(web.call("playground.run", json.dumps(args)))
    return result


def chunked(total: int, chunk: int, **settings: Any) -> dict[str, Any]:
    """Play ``total`` rounds in calls of ``chunk`` rounds, handing the state back as the page does."""
    result = run(**settings, rounds=0)
    played = 0
    while played < total:
        n = min(chunk, total - played)
        result = run(**settings, rounds=n, state=result["state"])
        played += n
    return result


def test_preview_before_any_round_has_no_measured_rates_and_no_verdict() -> None:
    result = run(quality=0.85, gamma=4, cost=0.05, seed=0, rounds=0)
    metrics = result["metrics"]
    assert metrics["rounds"] == 0 and metrics["tokens-emitted"] == 0
    assert "accept-rate" not in metrics and "alpha" not in metrics and "exact" not in metrics
    assert result["verdict"]["state"] == "thin"
    assert 0.0 < metrics["accept-rate-theory"] < metrics["alpha-theory"] < 1.0
    assert result["stream"] == [] and result["explanation"] is None


def test_chunked_run_equals_one_long_call() -> None:
    """Many short calls advance one run: 300 rounds in chunks of 7 are the 300 rounds of a single call."""
    settings = {"quality": 0.7, "gamma": 3, "cost": 0.1, "seed": 11}
    many = chunked(300, 7, **settings)
    once = run(**settings, rounds=300)
    assert many["metrics"] == once["metrics"]
    assert many["state"] == once["state"]
    assert many["figures"] == once["figures"]
    assert many["stream"][-1] == once["stream"][-1]


def test_last_rounds_metrics_are_the_rounds_since_the_window_began() -> None:
    """The "last rounds" rates cover the last WINDOW rounds only: they equal the differences of the whole-run
    counters between the round before the window and now (every round emits its accepted drafts plus one token)."""
    settings = {"gamma": 4, "cost": 0.05, "seed": 5}
    before = run(quality=0.95, **settings, rounds=150)
    after = run(quality=0.05, **settings, rounds=playground.WINDOW, state=before["state"])
    m0, m1 = before["metrics"], after["metrics"]
    emitted, drafted = m1["tokens-emitted"] - m0["tokens-emitted"], m1["drafted"] - m0["drafted"]
    assert m1["recent-rounds"] == playground.WINDOW
    assert m1["tokens-per-pass-recent"] == pytest.approx(emitted / playground.WINDOW, abs=1e-12)
    assert m1["accept-rate-recent"] == pytest.approx((m1["accepted"] - m0["accepted"]) / drafted, abs=1e-12)
    assert m1["speedup-recent"] == pytest.approx(emitted / (playground.WINDOW + 0.05 * drafted), abs=1e-12)
    # The point of the view: after the switch to a near-random draft, the window has moved and the whole run has not.
    assert m1["speedup-recent"] < m1["speedup"] - 1
    assert m1["tokens-per-pass-recent-theory"] < m1["tokens-per-pass-theory"]
    # The window's theory is the whole run's expected acceptances since the window began, per round.
    expected_before = (m0["tokens-per-pass-theory"] - 1.0) * 150
    expected_after = (m1["tokens-per-pass-theory"] - 1.0) * (150 + playground.WINDOW)
    recent_theory = 1.0 + (expected_after - expected_before) / playground.WINDOW
    assert m1["tokens-per-pass-recent-theory"] == pytest.approx(recent_theory, abs=1e-9)
    assert "speedup-recent" not in run(quality=0.95, **settings)["metrics"]  # no rounds, no last rounds


def test_the_handler_keeps_nothing_between_calls() -> None:
    """The same state sent twice (as after a Retry restarts the worker) gives the same answer: all the run's
    state travels in the call."""
    first = run(quality=0.6, gamma=5, seed=3, rounds=120)
    a = run(quality=0.6, gamma=5, rounds=40, state=first["state"])
    run(quality=0.2, gamma=2, seed=9, rounds=75)  # another run in between changes nothing
    b = run(quality=0.6, gamma=5, rounds=40, state=first["state"])
    assert a == b


def test_the_run_is_the_engines_run_from_the_seed() -> None:
    """The emitted words are those of ``engine.generate_speculative`` with the same seed and start word (given a
    budget of gamma + 1 more tokens, so that it never shortens one of the first 24 rounds)."""
    result = run(quality=0.5, gamma=3, seed=9, rounds=24)
    pair = quality_pair(0.5)
    start = QUALITY_WORDS.index(".")
    emitted = result["metrics"]["tokens-emitted"]
    trace = engine.generate_speculative(
        pair, FixedPolicy(3), max_tokens=emitted + 4, rng=random.Random(9), context=[start]
    )
    assert [r.gamma for r in trace.rounds[:24]] == [3] * 24
    shown = [w for r in result["stream"] for w, kind in r["tokens"] if kind in {"accepted", "correction", "bonus"}]
    assert shown == [QUALITY_WORDS[t] for t in trace.tokens[:emitted]]


def test_settings_change_mid_run_continues_the_run_and_is_marked() -> None:
    """Dropping the quality without a reset goes on with the same run; the window chart marks the change."""
    good = run(quality=0.95, gamma=4, seed=5, rounds=100)
    bad = run(quality=0.05, gamma=4, rounds=100, state=good["state"])
    assert bad["metrics"]["rounds"] == 200
    assert bad["metrics"]["accept-rate"] < good["metrics"]["accept-rate"]
    assert bad["stream"][-1]["round"] == 200
    shapes = bad["figures"]["window"]["layout"]["shapes"]
    assert [shape["x0"] for shape in shapes] == [100]
    assert (
        bad["figures"]["window"]["layout"]["annotations"][0]["text"] == "quality 0.05, \N{GREEK SMALL LETTER GAMMA} 4"
    )


def test_the_accepted_chart_counts_from_0_to_the_longest_gamma_played() -> None:
    """A run's state made at gamma 8 (Reset, with the slider still there) and played at gamma 1 only draws the
    counts 0 and 1: the state had taken 8 as played, and the chart showed 2 to 8 as empty bars with markers at 0."""
    settings = {"quality": 0.5, "cost": 0.05, "seed": 3}
    made = run(**settings, gamma=8, rounds=0)
    assert made["figures"]["accepted"]["data"][0]["x"] == [str(k) for k in range(9)]  # the preview: gamma 8's counts
    played = run(**settings, gamma=1, rounds=50, state=made["state"])
    assert [t["x"] for t in played["figures"]["accepted"]["data"]] == [["0", "1"]] * 2
    longer = run(**settings, gamma=3, rounds=5, state=played["state"])
    back = run(**settings, gamma=1, rounds=5, state=longer["state"])
    assert back["figures"]["accepted"]["data"][0]["x"] == ["0", "1", "2", "3"]  # gamma 3 was played in this run


def test_two_changes_close_together_get_one_label_not_two_printed_over_each_other() -> None:
    """Both changes keep their dashed line; only the newer is labelled when they lie within a third of the axis."""
    first = run(quality=0.85, gamma=4, seed=5, rounds=100)
    second = run(quality=0.85, gamma=8, rounds=5, state=first["state"])
    third = run(quality=0.3, gamma=8, rounds=100, state=second["state"])
    window = third["figures"]["window"]["layout"]
    assert [shape["x0"] for shape in window["shapes"]] == [100, 105]
    labels = [(a["x"], a["text"]) for a in window["annotations"]]
    assert labels == [(105, "quality 0.3, \N{GREEK SMALL LETTER GAMMA} 8")]


def test_same_seed_same_run_other_seed_other_run() -> None:
    a = run(quality=0.8, gamma=4, seed=1, rounds=50)
    b = run(quality=0.8, gamma=4, seed=1, rounds=50)
    c = run(quality=0.8, gamma=4, seed=2, rounds=50)
    assert a["stream"] == b["stream"]
    assert a["stream"] != c["stream"]


def test_stream_reads_accepted_then_rejected_correction_discarded_or_bonus() -> None:
    result = run(quality=0.4, gamma=6, seed=4, rounds=40)
    assert [r["round"] for r in result["stream"]] == list(range(17, 41))  # this call's last 24 rounds
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
    m = run(quality=0.6, gamma=4, seed=8, rounds=500)["metrics"]
    assert m["tokens-emitted"] == m["accepted"] + m["rounds"]
    assert m["drafted"] == 4 * m["rounds"] == m["accepted"] + m["rejected"] + m["discarded"]
    assert m["rejected"] + m["bonuses"] == m["rounds"]
    assert m["tokens-per-pass"] == pytest.approx(m["tokens-emitted"] / m["rounds"], abs=1e-12)
    assert m["speedup"] == pytest.approx(m["tokens-emitted"] / (m["rounds"] + 0.05 * m["drafted"]), abs=1e-12)


def test_alpha_counts_only_the_drafts_the_target_checked() -> None:
    """The draft acceptance rate divides by every draft; alpha only by the checked ones (accepted + rejected),
    since drafts after a rejection are never checked. So alpha >= the draft acceptance rate, equal only when
    nothing was discarded."""
    m = run(quality=0.85, gamma=4, seed=2, rounds=400)["metrics"]
    assert m["alpha"] == pytest.approx(m["accepted"] / (m["accepted"] + m["rejected"]), abs=1e-12)
    assert m["accept-rate"] == pytest.approx(m["accepted"] / m["drafted"], abs=1e-12)
    assert m["discarded"] > 0 and m["alpha"] > m["accept-rate"]
    assert m["alpha-theory"] > m["accept-rate-theory"]
    perfect = run(quality=1.0, gamma=4, seed=0, rounds=50)["metrics"]
    assert perfect["alpha"] == perfect["accept-rate"] == perfect["alpha-theory"] == 1.0


def test_explanation_of_a_one_draft_round_reads_as_english() -> None:
    """At gamma 1 a round whose draft passes "accepted it", not "all 1 accepted"."""
    said = [run(quality=1.0, gamma=1, seed=seed, rounds=1)["explanation"] for seed in range(3)]
    assert all("drafted 1 (" in text and ", accepted it, bonus " in text for text in said), said


def test_explanation_says_what_the_round_did() -> None:
    for seed in range(6):
        result = run(quality=0.5, gamma=4, seed=seed, rounds=1)
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
    m = run(quality=1.0, gamma=4, seed=0, rounds=50)["metrics"]
    assert m["accept-rate"] == 1.0 and m["accept-rate-theory"] == pytest.approx(1.0, abs=1e-9)
    assert m["tokens-per-pass"] == 5.0


def test_iid_limit_theory_matches_the_closed_form() -> None:
    """The preview uses exact per-context acceptance; its effective alpha reproduces Eq. 1 and the vLLM rate."""
    m = run(quality=0.85, gamma=4, seed=0, rounds=0)["metrics"]
    alpha = m["alpha-effective"]
    assert m["tokens-per-pass-theory"] == pytest.approx(expected_tokens(alpha, 4), abs=1e-9)
    assert m["accept-rate-theory"] == pytest.approx(draft_acceptance_rate(alpha, 4), abs=1e-9)


@pytest.mark.parametrize(("quality", "gamma"), [(0.85, 4), (0.2, 8), (0.6, 2)])
def test_accept_rate_agrees_with_its_exact_theory(quality: float, gamma: int) -> None:
    """|measured - theory| <= 4 sd, where sd = sqrt(sum of per-round Var[accepted | start]) / drafted.

    The differences accepted_r - E[accepted_r | start_r] form a martingale-difference sequence, so their sum has
    exactly that variance; 4 sd fails a correct engine with probability below 1/16 at worst (Chebyshev), far less
    under the normal approximation the sum follows (6e-5).
    """
    m = run(quality=quality, gamma=gamma, seed=21, rounds=1500)["metrics"]
    assert abs(m["accept-rate"] - m["accept-rate-theory"]) <= 4 * m["accept-rate-sd"]
    assert 0 < m["accept-rate-sd"] <= gamma / (2 * math.sqrt(1500)) / gamma + 1e-9


def test_output_is_consistent_with_the_target_even_with_a_random_draft() -> None:
    """Quality 0.05 over 2,000 rounds: the per-context chi-square does not reject (seeded), TV sits near noise."""
    m = run(quality=0.05, gamma=4, seed=2, rounds=2000)["metrics"]
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
    result = run(quality=0.85, gamma=4, seed=0, rounds=5)
    assert result["verdict"]["state"] == "thin"
    assert "too few tokens yet" in result["verdict"]["text"]
    assert "exact" not in result["metrics"]


def test_figures_follow_the_run() -> None:
    before = run(quality=0.85, gamma=4, seed=0, rounds=0)
    after = run(quality=0.85, gamma=4, rounds=80, state=before["state"])
    assert set(after["figures"]) == {"accepted", "window", "distributions", "takeaway"}
    assert len(before["figures"]["distributions"]["data"]) == 2  # target and draft; no output yet
    assert len(after["figures"]["distributions"]["data"]) == 3
    assert sum(after["figures"]["accepted"]["data"][0]["y"]) == pytest.approx(1.0, abs=1e-9)
    assert after["figures"]["window"]["data"][0]["x"][-1] == 80


def test_state_stays_bounded_however_long_the_run() -> None:
    """The state holds tallies of fixed size and charts thinned to at most POINTS points: 6,000 rounds carry no
    more than 1,000 do, give or take the digits of bigger counts."""
    short = run(quality=0.6, gamma=4, seed=1, rounds=1000)
    long = short
    for _ in range(5):
        long = run(quality=0.6, gamma=4, rounds=1000, state=long["state"])
    assert long["metrics"]["rounds"] == 6000
    state = long["state"]
    assert len(state["window"]) == playground.WINDOW
    assert len(state["points"]) < playground.POINTS and state["stride"] > 1
    assert len(json.dumps(state)) < 1.1 * len(json.dumps(short["state"]))
    assert len(long["figures"]["window"]["data"][0]["x"]) <= playground.POINTS


def test_slider_changes_the_figures_and_theory() -> None:
    low = run(quality=0.3, gamma=4, seed=0, rounds=0)
    high = run(quality=0.9, gamma=4, seed=0, rounds=0)
    assert low["metrics"]["accept-rate-theory"] < high["metrics"]["accept-rate-theory"]
    assert low["figures"]["takeaway"] != high["figures"]["takeaway"]
    assert low["figures"]["distributions"] != high["figures"]["distributions"]


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ({"gamma": 9}, ValueError, "gamma must be between 1 and 8"),
        ({"gamma": 0}, ValueError, "gamma must be between 1 and 8"),
        ({"gamma": 4.0}, TypeError, "gamma must be an int"),
        ({"quality": 1.5}, ValueError, "quality must be a number between 0 and 1"),
        ({"cost": "0.1"}, TypeError, "cost must be a number"),
        ({"rounds": 10_000}, ValueError, "rounds must be between 0 and 5000"),
        ({"seed": -1}, ValueError, "seed must be between"),
        ({"state": [1, 2]}, TypeError, "state must be the state a previous call returned"),
    ],
)
def test_bad_arguments_are_named(args: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        run(**args)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("histogram", [0] * 3, r"state\['histogram'\] must be a list of 9 items"),
        ("sums", [0.0, math.nan, 0.0], r"state\['sums'\]\[1\] must be a number between"),
        ("transitions", "x", r"state\['transitions'\] must be a list"),
        ("window", [[0, 0, 0.0]] * 51, r"state\['window'\] must be a list of at most 50"),
        ("top", 2.5, r"state\['top'\] must be an int"),
        ("run", {"format": "?"}, r"state\['run'\] is not a run this page made"),
    ],
)
def test_a_state_the_page_did_not_make_is_refused_by_name(key: str, value: Any, message: str) -> None:
    state = run(quality=0.5, gamma=2, seed=0, rounds=3)["state"]
    with pytest.raises((TypeError, ValueError), match=message):
        playground.run(quality=0.5, gamma=2, rounds=1, state={**state, key: value})


@pytest.mark.parametrize(
    ("key", "path", "value", "message"),
    [
        ("transitions", (3, 5), True, r"state\['transitions'\]\[3\]\[5\] must be an int, got bool"),
        ("transitions", (0, 0), 2.0, r"state\['transitions'\]\[0\]\[0\] must be an int, got float"),
        ("transitions", (23, 23), 10**400, r"state\['transitions'\]\[23\]\[23\] must be a number between"),
        ("expected_histogram", (8,), -0.5, r"state\['expected_histogram'\]\[8\] must be a number between"),
        ("points", (0, 2), math.inf, r"state\['points'\]\[0\]\[2\] must be a number between"),
        ("points", (0,), [1, 0.5], r"state\['points'\]\[0\] must be a list of 3 items"),
    ],
)
def test_a_wrong_number_deep_in_the_state_is_named(key: str, path: tuple[int, ...], value: Any, message: str) -> None:
    """The state's lists are checked in bulk; a wrong item is still named by its path."""
    state = run(quality=0.5, gamma=2, seed=0, rounds=3)["state"]
    broken = json.loads(json.dumps(state))
    target = broken[key]
    for i in path[:-1]:
        target = target[i]
    target[path[-1]] = value
    with pytest.raises((TypeError, ValueError), match=message):
        playground.run(quality=0.5, gamma=2, rounds=1, state=broken)


_ITEM = st.one_of(
    st.integers(-5, 5),
    st.sampled_from([10**15, 10**15 + 1, 10**400, True, False, None, "1", math.nan, math.inf, -0.0, 1e15, 2e15]),
    st.floats(-2, 2),
)


@settings(max_examples=300, deadline=None)
@given(
    models=st.lists(st.sampled_from([0, 0.0, [0, 0.0], [0.0]]), min_size=1, max_size=6),
    data=st.data(),
)
def test_the_bulk_check_agrees_with_the_item_by_item_check(models: list[Any], data: st.DataObject) -> None:
    """``args._numbers_like`` (the bulk check) may say True only where ``check_like`` passes item by item, and must
    say True for every list of plain numbers that passes (else the state's check is slow, not wrong)."""
    value = [
        data.draw(st.lists(_ITEM, min_size=0, max_size=3) if isinstance(m, list) else _ITEM)
        if data.draw(st.booleans())
        else (data.draw(st.lists(st.integers(0, 9), min_size=len(m), max_size=len(m))) if isinstance(m, list) else 1)
        for m in models
    ]
    try:
        for item, model in zip(value, models, strict=True):
            check_like(item, model, "x")
        passes = True
    except (TypeError, ValueError):
        passes = False
    assert _numbers_like(value, models) == passes


def test_a_corrupt_random_state_is_a_value_error() -> None:
    """Numbers no Mersenne Twister state can hold must not escape as an OverflowError."""
    state = run(quality=0.5, gamma=2, seed=0, rounds=3)["state"]
    snapshot = state["run"]
    broken = {**snapshot, "rng": [snapshot["rng"][0], [10**30] * len(snapshot["rng"][1]), None]}
    with pytest.raises(ValueError, match="state"):
        playground.run(rounds=1, gamma=2, state={**state, "run": broken})


def test_result_is_json_safe_at_extremes() -> None:
    for quality in (0.0, 1.0):
        for gamma in (1, 8):
            text = web.call("playground.run", json.dumps({"quality": quality, "gamma": gamma, "rounds": 300}))
            json.loads(text, parse_constant=lambda token: pytest.fail(f"non-finite {token}"))
