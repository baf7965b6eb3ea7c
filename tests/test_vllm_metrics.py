"""vllm_metrics: vLLM's counters read from /metrics dumps and log lines, the i.i.d. fit, the depth test, gamma.

The dumps below are written for these tests in the format vLLM v1 exports (prometheus_client's text format: labels
sorted, a ``_created`` timestamp beside each counter, ``# HELP`` / ``# TYPE`` lines, other metrics around them).
The worked example of the issue runs through everything: 1,000 drafts of 4 tokens, 2,360 accepted,
800 / 640 / 512 / 408 accepted at positions 0..3, so

- draft acceptance rate = 2360 / 4000 = 0.59;
- tokens per target pass = 1 + 2360 / 1000 = 3.36;
- alpha (MLE) = 2360 / (2360 + rejections), rejections = 1000 - 408 = 592: 2360 / 2952 = 295 / 369 = 0.7995,
  which is 0.80 to two decimals (alpha at depth 1..3 is exactly 0.8; at depth 4 it is 408 / 512 = 0.797).
"""

from __future__ import annotations

import math
import random
import re
from fractions import Fraction

import pytest

from specdec_core import costs, theory
from specdec_core.vllm_metrics import (
    Counts,
    alpha_mle,
    analyse,
    best_gamma,
    depth_test,
    iid_tokens,
    paper_round_cost,
    parse_log,
    profile_tokens,
    read_counts,
    roofline_round_cost,
)

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
HAND = Counts(1000, 4000, 2360, (800, 640, 512, 408), "one dump")


def dump(
    engines: dict[str, tuple[int, int, int, list[int]]], extra: str = "", positions: list[int] | None = None
) -> str:
    """A /metrics page as vLLM v1 writes it, for engines -> (drafts, draft tokens, accepted, per position)."""
    lines = [
        "# HELP vllm:num_requests_running Number of requests in model execution batches.",
        "# TYPE vllm:num_requests_running gauge",
        *(f'vllm:num_requests_running{{engine="{e}",model_name="{MODEL}"}} 3.0' for e in engines),
        "# HELP python_gc_objects_collected_total Objects collected during gc",
        "# TYPE python_gc_objects_collected_total counter",
        'python_gc_objects_collected_total{generation="0"} 12345.0',
    ]
    names = ["num_drafts", "num_draft_tokens", "num_accepted_tokens"]
    for i, name in enumerate(names):
        lines += [f"# HELP vllm:spec_decode_{name}_total Count.", f"# TYPE vllm:spec_decode_{name}_total counter"]
        lines += [
            f'vllm:spec_decode_{name}_total{{engine="{e}",model_name="{MODEL}"}} {v[i]}.0{extra}'
            for e, v in engines.items()
        ]
        lines += [f"# TYPE vllm:spec_decode_{name}_created gauge"]
        lines += [
            f'vllm:spec_decode_{name}_created{{engine="{e}",model_name="{MODEL}"}} 1.7646612034519e+09' for e in engines
        ]
    lines += ["# TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter"]
    for e, v in engines.items():
        labels = f'engine="{e}",model_name="{MODEL}"'
        for j, n in zip(positions or range(len(v[3])), v[3], strict=True):
            lines.append(f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{{labels},position="{j}"}} {n}.0')
            lines.append(f'vllm:spec_decode_num_accepted_tokens_per_pos_created{{{labels},position="{j}"}} 1.76e+09')
    lines += ['vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="x"} 2602.0', ""]
    return "\n".join(lines)


ONE = {"0": (1000, 4000, 2360, [800, 640, 512, 408])}


def log_line(accepted: int, drafted: int, rates: str, length: str, percent: str) -> str:
    """vLLM's periodic line, with the logger's prefix."""
    return (
        f"INFO 12-01 09:30:00 [metrics.py:96] SpecDecoding metrics: Mean acceptance length: {length}, Accepted "
        f"throughput: 236.00 tokens/s, Drafted throughput: 400.00 tokens/s, Accepted: {accepted} tokens, Drafted: "
        f"{drafted} tokens, Per-position acceptance rate: {rates}, Avg Draft acceptance rate: {percent}%"
    )


HAND_LINE = log_line(2360, 4000, "0.800, 0.640, 0.512, 0.408", "3.36", "59.0")


# --- Reading /metrics ---------------------------------------------------------------------------------------------


def test_one_engine_dump_reads_the_four_counters() -> None:
    counts = read_counts(dump(ONE))
    assert (counts.drafts, counts.draft_tokens, counts.accepted) == (1000, 4000, 2360)
    assert counts.per_position == (800, 640, 512, 408)
    assert (counts.source, counts.series, counts.exact) == ("one dump", 1, True)


def test_two_engines_are_summed() -> None:
    engines = {"0": (600, 2400, 1430, [490, 390, 310, 240]), "1": (400, 1600, 930, [310, 250, 202, 168])}
    counts = read_counts(dump(engines))
    assert (counts.drafts, counts.draft_tokens, counts.accepted, counts.series) == (1000, 4000, 2360, 2)
    assert counts.per_position == (800, 640, 512, 408)


def test_extra_labels_help_type_and_created_samples_are_ignored() -> None:
    text = dump(ONE).replace('engine="0"', 'engine="0",pod="vllm-7d9f",note="a \\"quoted\\" value, with a comma"')
    assert read_counts(text) == read_counts(dump(ONE))


def test_a_bare_counter_name_counts_like_its_total_sample() -> None:
    text = dump(ONE).replace("vllm:spec_decode_num_drafts_total{", "vllm:spec_decode_num_drafts{")
    assert read_counts(text).drafts == 1000


def test_two_dumps_are_differenced_series_by_series() -> None:
    before = {"0": (300, 1200, 700, [240, 190, 150, 120]), "1": (200, 800, 500, [170, 140, 110, 80])}
    after = {"0": (900, 3600, 2130, [720, 575, 460, 375]), "1": (800, 3200, 1930, [670, 535, 430, 295])}
    counts = read_counts(dump(before), dump(after))
    assert (counts.drafts, counts.draft_tokens, counts.accepted) == (1200, 4800, 2860)
    assert counts.per_position == (
        720 + 670 - 240 - 170,
        575 + 535 - 190 - 140,
        460 + 430 - 150 - 110,
        375 + 295 - 120 - 80,
    )
    assert counts.source == "difference of two dumps"


def test_an_all_zero_earlier_dump_of_a_fresh_server_is_fine() -> None:
    zero = {"0": (0, 0, 0, [0, 0, 0, 0])}
    assert read_counts(dump(zero), dump(ONE)).per_position == (800, 640, 512, 408)


# --- Reading the log line -----------------------------------------------------------------------------------------


def test_the_log_line_gives_the_hand_example() -> None:
    counts = read_counts(HAND_LINE)
    assert (counts.drafts, counts.draft_tokens, counts.accepted) == (1000, 4000, 2360)
    assert counts.per_position == (800, 640, 512, 408)
    assert (counts.source, counts.exact, counts.notes) == ("log", False, ())


def test_several_log_lines_are_summed_and_other_log_lines_skipped() -> None:
    text = "\n".join(["INFO engine started", HAND_LINE, "INFO 200 OK", HAND_LINE])
    counts = parse_log(text)
    assert (counts.drafts, counts.accepted, counts.per_position, counts.series) == (
        2000,
        4720,
        (1600, 1280, 1024, 816),
        2,
    )


def test_a_log_line_without_throughputs_reads_too() -> None:
    line = (
        "SpecDecoding metrics: Mean acceptance length: 3.36, Accepted: 2360 tokens, Drafted: 4000 tokens, "
        "Per-position acceptance rate: 0.800, 0.640, 0.512, 0.408, Avg Draft acceptance rate: 59.0%"
    )
    assert read_counts(line).per_position == (800, 640, 512, 408)


def test_short_drafts_in_a_log_line_are_rebuilt_and_said() -> None:
    """3,700 draft tokens over 1,000 drafts of up to 4: drafted / 4 = 925 contradicts the rates, which say
    2360 / n = 2.360 +- 0.002, so n is 999.2..1000.8 -> 1000, and a note says it was rebuilt."""
    counts = read_counts(log_line(2360, 3700, "0.800, 0.640, 0.512, 0.408", "3.36", "63.8"))
    assert counts.drafts == 1000
    assert "rebuilt" in counts.notes[0]
    assert any("draft slots were empty" in note for note in analyse(counts).notes)


# --- Bad input ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("metrics", "later", "message"),
    [
        ("", "", "metrics is empty"),
        ("   \n ", "", "metrics is empty"),
        ("The server said hello and nothing else", "", "line 1 is not Prometheus text"),
        ('{"drafts": 1000}', "", "line 1 is not Prometheus text"),
        ("hello world", "", "'world' is not a number"),
        ("# HELP x y\nvllm:num_requests_running 3.0\n", "", "holds no vLLM speculative-decoding counters"),
        (dump(ONE).replace("num_drafts_total", "num_gone_total"), "", "lacks vllm:spec_decode_num_drafts_total"),
        (
            "\n".join(line for line in dump(ONE).splitlines() if "per_pos" not in line),
            "",
            "lacks vllm:spec_decode_num_accepted_tokens_per_pos_total",
        ),
        (dump({"0": (1000, 4000, 1952, [800, 640, 512])}, positions=[0, 1, 3]), "", "has gaps: positions 0, 1, 3"),
        (dump({"0": (1000, 4000, 1952, [800, 640, 512])}, positions=[1, 2, 3]), "", "0 missing"),
        (dump(ONE), dump({"0": (900, 3600, 2000, [700, 600, 400, 300])}), "went backwards"),
        (dump({"0": (0, 0, 0, [0, 0, 0, 0])}), "", "no drafts"),
        (dump(ONE), dump(ONE), "no drafts"),
        (dump(ONE), dump({"1": ONE["0"]}), "dump only"),
        (dump(ONE) + dump(ONE), "", "repeats the series"),
        (dump(ONE).replace(" 1000.0", " 1000.5"), "", "not a count"),
        (dump(ONE).replace(" 1000.0", " NaN"), "", "not a count"),
        (dump(ONE).replace(" 1000.0", " -1000.0"), "", "not a count"),
        (dump({"0": (1000, 4000, 2000, [800, 640, 512, 408])}), "", "sum to 2360, not to the 2000"),
        (dump({"0": (1000, 4000, 2360, [640, 800, 512, 408])}), "", "rise with position"),
        (dump({"0": (1000, 2000, 2360, [800, 640, 512, 408])}), "", "2000 draft tokens is impossible"),
        (dump(ONE) + dump(ONE).replace(MODEL, "other/model"), "", "several models"),
        (HAND_LINE, dump(ONE), "a log line already covers one interval"),
        (dump(ONE), HAND_LINE, "the second area takes a later /metrics dump"),
        (HAND_LINE.replace("Per-position acceptance rate", "Per-pos"), "", "no 'Per-position acceptance rate'"),
        # Formats of earlier vLLMs: said to be so, with the rate they do hold sent to the calculator.
        (
            "\n".join(line for line in dump(ONE).splitlines() if "num_drafts" not in line and "per_pos" not in line),
            "",
            "the V0 engine, before 0.10.0, or an early V1), and the depth analysis needs them; vLLM 0.11.0 exports "
            "all four. Its draft acceptance rate, accepted / draft tokens = 0.590, goes into the calculator above.",
        ),
        (
            "INFO 09-12 10:00:00 metrics.py:455] Speculative metrics: Draft acceptance rate: 0.604, System "
            "efficiency: 0.703, Number of speculative tokens: 3, Number of accepted tokens: 1811",
            "",
            "vLLM's V0 engine (before 0.10.0), with no per-draft or per-position counts, which the depth analysis "
            "needs. Its draft acceptance rate, 0.604, goes into the calculator above",
        ),
        (
            "INFO 03-20 10:00:00 [loggers.py:80] SpecDecoding metrics: Draft acceptance rate: 60.4%, Accepted: "
            "1811 tokens, Drafted: 3000 tokens",
            "",
            "an earlier vLLM's line lacks and the depth analysis needs (vLLM 0.11.0 logs it). Its draft acceptance "
            "rate, 1811 / 3000 = 0.604, goes into the calculator above",
        ),
        (dump(ONE) + HAND_LINE, "", "holds both log lines and /metrics samples"),
        (
            dump({"0": (1000, 4000, 1952, [800, 640, 512])}).replace('position="1"', 'position="01"'),
            "",
            "has position '01'; vLLM writes positions without leading zeros ('1')",
        ),
        (
            log_line(2360, 4000 * 65 // 4, ", ".join(["0.500"] * 65), "3.36", "nan"),
            "",
            "gives 65 per-position rates, more than the 64 draft positions this page reads",
        ),
        (HAND_LINE.replace("59.0%", "72.0%"), "", "says 72.0% accepted"),
        (HAND_LINE.replace("length: 3.36", "length: 2.50"), "", "disagree"),
        (HAND_LINE.replace("Drafted: 4000", "Drafted: 0"), "", "no drafted tokens"),
    ],
)
def test_bad_input_gets_a_message_naming_the_problem(metrics: str, later: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        read_counts(metrics, later)


def test_a_wrong_type_is_a_type_error_naming_the_argument() -> None:
    with pytest.raises(TypeError, match="later must be a string"):
        read_counts(dump(ONE), None)  # type: ignore[arg-type]


def test_too_long_a_text_is_refused_before_it_is_read() -> None:
    with pytest.raises(ValueError, match="metrics must be at most"):
        read_counts("#" * 5_000_001)


# --- The analysis -------------------------------------------------------------------------------------------------


def test_hand_example_rates_alpha_and_profile() -> None:
    """The module docstring's arithmetic, exactly: alpha = 295 / 369; per position 0.8, 0.64, 0.512, 0.408."""
    a = analyse(HAND)
    assert a.accept_rate == 0.59
    assert a.tokens_per_pass == 3.36
    assert Fraction(a.alpha).limit_denominator(1000) == Fraction(295, 369)
    assert round(a.alpha, 2) == 0.80
    assert a.per_position == (0.8, 0.64, 0.512, 0.408)
    assert a.conditional == (0.8, 0.8, 0.8, 408 / 512)


def test_hand_example_has_no_trend_with_depth() -> None:
    """Alpha at depth 1..4 is 0.8, 0.8, 0.8, 0.797: nothing near a 1% trend."""
    test = analyse(HAND).depth
    assert test.verdict == "flat"
    assert test.p_value is not None and test.p_value > 0.5
    assert test.trials == (1000, 800, 640, 512) and test.successes == (800, 640, 512, 408)


def test_two_positions_reduce_to_the_two_proportion_z_test() -> None:
    """With two depths Cochran-Armitage is the pooled two-proportion z test: 80 / 100 then 40 / 80, pooled 2/3,
    z = (0.5 - 0.8) / sqrt(2/3 * 1/3 * (1/100 + 1/80)) = -4.2426."""
    test = depth_test(Counts(100, 200, 120, (80, 40), "one dump"))
    expected = (0.5 - 0.8) / math.sqrt(2 / 3 * 1 / 3 * (1 / 100 + 1 / 80))
    assert test.z == pytest.approx(expected, rel=1e-12)
    assert test.verdict == "falls"
    assert test.p_value == pytest.approx(math.erfc(abs(expected) / math.sqrt(2)), rel=1e-12)


def test_one_position_cannot_be_tested() -> None:
    assert depth_test(Counts(100, 100, 70, (70,), "one dump")).verdict == "unknown"


def test_rising_acceptance_is_reported_as_rising() -> None:
    test = depth_test(Counts(1000, 3000, 1500, (600, 510, 459), "one dump"))  # 0.60, 0.85, 0.90
    assert test.verdict == "rises" and test.slope is not None and test.slope > 0


def test_the_threshold_must_be_a_probability() -> None:
    with pytest.raises(ValueError, match="threshold must be between 0 and 1"):
        depth_test(HAND, threshold=1.5)


def _simulate(conditional: list[float], drafts: int, rng: random.Random) -> Counts:
    """Rounds whose token at depth j passes with probability conditional[j] until the first rejection."""
    per = [0] * len(conditional)
    for _ in range(drafts):
        for j, c in enumerate(conditional):
            if rng.random() >= c:
                break
            per[j] += 1
    return Counts(drafts, drafts * len(conditional), sum(per), tuple(per), "one dump")


def test_alpha_mle_recovers_alpha_from_iid_rounds() -> None:
    """20,000 i.i.d. rounds at alpha = 0.7, gamma = 4: about 20,000 (1 - 0.7^4) / 0.3 = 50,600 verified tokens, so
    the MLE's standard deviation is sqrt(0.7 * 0.3 / 50,600) = 0.0020; the tolerance is 5 of them, 0.01 (seeded)."""
    counts = _simulate([0.7] * 4, 20_000, random.Random(1))
    assert abs(alpha_mle(counts) - 0.7) < 0.01


def test_the_depth_test_holds_its_level_and_finds_a_real_decay() -> None:
    """Under i.i.d. rounds (alpha = 0.7, gamma = 4, 500 drafts) the test should say "falls" or "rises" in about 1% of
    runs: in 200 seeded runs the count is about Binomial(200, 0.01), mean 2, and P(count >= 9) < 0.001. A decay
    from 0.85 to 0.55 over four depths, at the same size, is found in every one of 50 runs (its z is about -8)."""
    rng = random.Random(7)
    alarms = sum(depth_test(_simulate([0.7] * 4, 500, rng)).verdict != "flat" for _ in range(200))
    assert alarms <= 8
    found = [depth_test(_simulate([0.85, 0.75, 0.65, 0.55], 500, rng)).verdict for _ in range(50)]
    assert found == ["falls"] * 50


def test_profile_tokens_are_measured_up_to_gamma() -> None:
    """Cutting the hand example's rounds to g drafts: 1, 1.8, 2.44, 2.952, then 3.36 = tokens per pass at gamma 4."""
    a = analyse(HAND)
    assert a.profile[:5] == pytest.approx([1.0, 1.8, 2.44, 2.952, 3.36], abs=1e-12)
    assert a.profile[4] == pytest.approx(a.tokens_per_pass, abs=1e-12)


def test_a_geometric_profile_extends_exactly_like_the_iid_model() -> None:
    """N_j = n / 2^(j+1) exactly: alpha = 1/2 at every depth, slope 0, so both models agree at every gamma."""
    counts = Counts(1600, 6400, 1500, (800, 400, 200, 100), "one dump")
    test = depth_test(counts)
    assert alpha_mle(counts) == 0.5 and test.slope == 0.0
    assert profile_tokens(counts, test, 12) == pytest.approx(iid_tokens(0.5, 12), abs=1e-12)


def test_the_extrapolated_profile_never_beats_the_best_measured_depth() -> None:
    counts = Counts(1000, 3000, 1500, (600, 510, 459), "one dump")  # rising: 0.60, 0.85, 0.90
    tokens = profile_tokens(counts, depth_test(counts), 32)
    steps = [(tokens[g + 1] - tokens[g]) / (tokens[g] - tokens[g - 1]) for g in range(3, 32)]
    assert max(steps) <= 0.9 + 1e-12


@pytest.mark.parametrize(("alpha", "cost"), [(0.8, 0.05), (0.6, 0.1), (0.95, 0.01), (0.2, 0.5), (0.5, 0.0)])
def test_best_gamma_under_the_iid_fit_is_theorys_optimal_gamma(alpha: float, cost: float) -> None:
    assert best_gamma(iid_tokens(alpha, 32), paper_round_cost(cost)) == theory.optimal_gamma(alpha, cost, 32)


def test_best_gamma_takes_any_round_cost() -> None:
    """The hook for a roofline model: a round whose cost jumps past gamma = 3 makes 3 the best."""
    tokens = iid_tokens(0.9, 8)
    assert best_gamma(tokens, lambda g: 1.0 + 0.01 * g + (5.0 if g > 3 else 0.0)) == 3


def test_a_decaying_drafter_is_told_to_draft_shorter_than_the_iid_fit() -> None:
    counts = _simulate([0.82, 0.74, 0.66, 0.58, 0.5, 0.42], 4000, random.Random(3))
    a = analyse(counts, cost=0.05)
    assert a.depth.verdict == "falls"
    assert a.best_profile < a.best_iid


H100, LLAMA_8B, LLAMA_1B = costs.HARDWARE["h100"], costs.MODELS["llama-3.1-8b"], costs.MODELS["llama-3.2-1b"]


def test_the_roofline_round_cost_and_best_gamma_match_a_hand_computation() -> None:
    """Batch 256, 1,024 tokens of context, 16-bit weights on one H100 (3.35 TB/s, 989 TFLOP/s dense):

    - plain pass: reads 2 * 8,030,261,248 bytes of weights + 131,072 bytes of KV per token * 1,024 * 256;
    - a draft step: 2 * 1,235,814,400 + 32,768 * 1,024 * 256 bytes (its 512 GFLOP take 0.64 ms, under the reads);
    - verification: the plain pass's bytes, or 2 * 8,030,261,248 * 256 (gamma + 1) FLOPs, whichever takes longer.

    alpha = 0.8 gives speedups 1.476, 1.696, 1.674 at gamma = 1, 2, 3: the best gamma is 2.
    """
    batch = 256
    plain = (2 * 8_030_261_248 + 131_072 * 1024 * batch) / 3.35e12
    draft = (2 * 1_235_814_400 + 32_768 * 1024 * batch) / 3.35e12
    assert 2 * 1_235_814_400 * batch / 989e12 < draft  # the draft step is memory-bound

    def by_hand(gamma: int) -> float:
        return (gamma * draft + max(plain, 2 * 8_030_261_248 * batch * (gamma + 1) / 989e12)) / plain

    cost = roofline_round_cost(LLAMA_8B, LLAMA_1B, H100, batch=batch, context=1024)
    for gamma in range(33):
        assert cost(gamma) == pytest.approx(by_hand(gamma), rel=1e-12)
    assert cost(0) == 1.0
    speedups = [t / by_hand(g) for g, t in enumerate(iid_tokens(0.8, 32))]
    assert [round(s, 3) for s in speedups[1:4]] == [1.476, 1.696, 1.674]
    assert best_gamma(iid_tokens(0.8, 32), cost) == 2


@pytest.mark.parametrize("alpha", [0.5, 0.7, 0.8, 0.9])
def test_batch_one_drafts_at_least_as_long_as_a_compute_bound_batch(alpha: float) -> None:
    """At batch 1 every pass is memory-bound (verifying gamma + 1 tokens costs one pass); at batch 1,024 the
    verification pass is compute-bound from gamma = 2 on (the ridge is 2,822 tokens), so each extra draft costs
    arithmetic: the best gamma can only shrink, for the i.i.d. fit and for a decaying measured profile alike."""
    counts = Counts(1000, 4000, 2360, (800, 600, 420, 280), "one dump")
    profile = profile_tokens(counts, depth_test(counts), 32)
    ridge = costs.ridge_tokens(LLAMA_8B, H100, context=1024, batch=1024)
    assert 2 * 1024 < ridge < 3 * 1024
    for tokens in (iid_tokens(alpha, 32), profile):
        small = best_gamma(tokens, roofline_round_cost(LLAMA_8B, LLAMA_1B, H100, batch=1, context=1024))
        large = best_gamma(tokens, roofline_round_cost(LLAMA_8B, LLAMA_1B, H100, batch=1024, context=1024))
        assert small >= large
    iid = iid_tokens(alpha, 32)
    at_one = best_gamma(iid, roofline_round_cost(LLAMA_8B, LLAMA_1B, H100, batch=1, context=1024))
    at_large = best_gamma(iid, roofline_round_cost(LLAMA_8B, LLAMA_1B, H100, batch=1024, context=1024))
    assert at_one > at_large  # strictly: the compute-bound pass changes the answer at every alpha here


def test_the_roofline_round_cost_names_a_bad_argument() -> None:
    with pytest.raises(ValueError, match="batch"):
        roofline_round_cost(LLAMA_8B, LLAMA_1B, H100, batch=0, context=1024)
    with pytest.raises(TypeError, match="draft"):
        roofline_round_cost(LLAMA_8B, "llama-3.2-1b", H100, batch=1, context=1024)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="gamma"):
        roofline_round_cost(LLAMA_8B, LLAMA_1B, H100, batch=1, context=1024)(-1)
