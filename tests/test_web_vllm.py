"""tuning.vllm: the Tuning page's analysis of pasted vLLM counters, as the widget receives it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from specdec_core import costs, theory, vllm_metrics, web
from specdec_core.costs import HARDWARE, MODELS
from specdec_core.web.vllm import example


def run(**args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(web.call("tuning.vllm", json.dumps(args)))
    return result


def test_the_example_dumps_give_a_falling_profile_and_a_shorter_gamma() -> None:
    """The Example button's two dumps: their difference is analysed, the numbers are the package's own."""
    texts = example()
    result = run(metrics=texts["metrics"], later=texts["later"], cost=0.05)
    analysis = vllm_metrics.analyse(vllm_metrics.read_counts(texts["metrics"], texts["later"]), 0.05, 32)
    assert result["status"] == "ok"
    m = result["metrics"]
    assert m["accept-rate"] == pytest.approx(analysis.accept_rate, abs=1e-12)
    assert m["tokens-per-pass"] == pytest.approx(analysis.tokens_per_pass, abs=1e-12)
    assert m["alpha"] == pytest.approx(analysis.alpha, abs=1e-12)
    assert (m["optimal-gamma"], m["optimal-gamma-iid"], m["gamma"]) == (5, 6, 5)
    assert result["verdict"]["kind"] == "falls"
    assert result["verdict"]["text"].startswith("Acceptance falls with depth")
    assert "p < 0.0001" in result["verdict"]["evidence"] and "p < 0.01" in result["verdict"]["evidence"]
    assert "summed over 2 engines" in result["summary"] and "between the two dumps" in result["summary"]
    assert [row["accepted"] for row in result["rows"]] == list(analysis.counts.per_position)
    assert set(result["figures"]) == {"positions", "gamma"}


def dump(per_position: list[int], drafts: int) -> str:
    """One /metrics dump of a server drafting len(per_position) tokens a round, every draft full length."""
    name = "vllm:spec_decode_num"
    lines = [f"{name}_drafts_total {drafts}", f"{name}_draft_tokens_total {drafts * len(per_position)}"]
    lines.append(f"{name}_accepted_tokens_total {sum(per_position)}")
    lines += [f'{name}_accepted_tokens_per_pos_total{{position="{j}"}} {n}' for j, n in enumerate(per_position)]
    return "\n".join(lines)


@pytest.mark.parametrize("gamma", [33, 40, 64])
def test_a_server_drafting_more_than_32_tokens_is_analysed(gamma: int) -> None:
    """The recommendation's search reaches the server's own gamma: 33 positions and more raised an IndexError."""
    result = run(metrics=dump([int(100_000 * 0.9 ** (j + 1)) for j in range(gamma)], 100_000))
    assert result["status"] == "ok" and result["metrics"]["gamma"] == gamma
    assert len(result["rows"]) == gamma
    assert max(max(t["x"]) for t in result["figures"]["gamma"]["data"] if t.get("x")) >= gamma


def test_a_best_gamma_at_the_searchs_end_is_not_called_the_fastest_without_a_word() -> None:
    """Every draft accepted at gamma 4: the speedup still rises where the search stops, two past the measured gamma
    (it had recommended 32 from four measured positions), and the text says so and how to go on."""
    result = run(metrics=dump([50_000] * 4, 50_000), cost=0.01)
    assert result["metrics"]["optimal-gamma"] == 4 + vllm_metrics.EXTRAPOLATE == 6
    assert "The search stops at \N{GREEK SMALL LETTER GAMMA} = 6, 2 past yours" in result["recommendation"]
    assert '"num_speculative_tokens": 6 in --speculative-config, and paste the new counters' in result["recommendation"]
    falling = run(metrics=dump([80_000, 40_000, 12_000, 2_400], 100_000))  # 0.8, then 0.5, 0.3, 0.2
    assert falling["metrics"]["optimal-gamma"] < 6
    assert "The search stops at" not in falling["recommendation"]


def test_one_measured_position_recommends_at_most_two_more() -> None:  # and its summary says "1 token"
    """gamma 1 (one MTP layer, say), 0.85 accepted: there is no trend to carry on, and the i.i.d. best (10 at
    c = 0.05) would extrapolate a single rate nine positions out. The recommendation stops at gamma 3; the i.i.d.
    fit's own best is still named."""
    result = run(metrics=dump([85_000], 100_000))
    assert result["summary"].startswith("100,000 drafts of up to 1 token (")
    assert result["metrics"]["optimal-gamma"] == 3
    assert result["metrics"]["optimal-gamma-iid"] == theory.optimal_gamma(0.85, 0.05) > 3
    roof = run(metrics=dump([85_000], 100_000), costmodel="roofline", batch=1)
    assert roof["metrics"]["optimal-gamma"] <= 3


def test_a_trend_too_small_to_matter_is_not_called_a_fall() -> None:
    """A hundred million drafts whose acceptance drops 0.0005 a position: the test finds it (p < 0.0001), but the
    verdict calls it too small to matter and keeps the i.i.d. model; a drop of 0.05 a position is a fall."""
    conditional = [0.8, 0.7995, 0.799, 0.7985]
    reach, counts = 10**8, []
    for rate in conditional:
        reach = round(reach * rate)
        counts.append(reach)
    slight = run(metrics=dump(counts, 10**8))
    assert slight["verdict"]["kind"] == "slight"
    assert slight["verdict"]["text"].startswith("A trend too small to matter")
    assert "p < 0.0001" in slight["verdict"]["evidence"]
    falls = run(metrics=dump([80_000, 60_000, 42_000, 27_300], 100_000))  # 0.80, 0.75, 0.70, 0.65
    assert falls["verdict"]["kind"] == "falls"


def test_the_recommendation_names_vllms_knob_only_when_it_should_change() -> None:
    """A different gamma comes with the setting that makes it; the measured gamma already best comes with none."""
    change = run(metrics=dump([int(100_000 * 0.8 ** (j + 1)) for j in range(2)], 100_000))
    assert change["metrics"]["optimal-gamma"] != 2
    assert '"num_speculative_tokens":' in change["recommendation"]
    same = run(metrics=dump([int(100_000 * 0.8 ** (j + 1)) for j in range(8)], 100_000))
    assert same["metrics"]["optimal-gamma"] == 8
    assert "num_speculative_tokens" not in same["recommendation"]


def test_a_handful_of_tokens_is_not_called_proof_of_no_trend() -> None:
    """One draft (1.00 at position 1, 0.00 at position 2) is no evidence either way: the sentence says the test saw
    2 verified tokens, and counts are spelt in the singular where they are one."""
    result = run(metrics=dump([1, 0, 0, 0, 0], 1))
    assert result["verdict"]["kind"] == "flat"
    assert "as far as 2 verified tokens can tell" in result["verdict"]["text"]
    assert "From 1 draft, 2 verified draft tokens" in result["verdict"]["evidence"]
    many = run(metrics=dump([int(100_000 * 0.8 ** (j + 1)) for j in range(4)], 100_000), later="")
    assert "can tell" not in many["verdict"]["text"] and "100,000 drafts" in many["verdict"]["evidence"]


@pytest.mark.parametrize(
    ("target", "draft", "said"),
    [
        ("llama-3.1-70b", "eagle-8b", True),
        ("llama-3.1-8b", "eagle-8b", False),
        ("llama-3.1-8b", "eagle-70b", True),
        ("llama-3.1-70b", "llama-3.2-1b", False),
    ],
)
def test_an_eagle_head_priced_beside_another_target_is_said_to_be_one(target: str, draft: str, said: bool) -> None:
    """A head reads one target's hidden states: beside another target the roofline prices a head of that shape."""
    args = web.EXAMPLES["tuning.vllm"] | {"costmodel": "roofline", "target": target, "draft": draft}
    text = run(**args)["roofline"]["text"]
    assert ("stands for a head of that shape, not one that exists" in text) is said, text


def test_a_negative_count_in_a_log_line_is_named_as_one() -> None:
    line = (
        "SpecDecoding metrics: Mean acceptance length: 0.5, Accepted: -5 tokens, Drafted: 0 tokens, "
        "Per-position acceptance rate: 0.5"
    )
    assert run(metrics=line)["message"] == "metrics: the log line has 'Accepted: -5 tokens', a negative count"


def test_the_hand_example_log_line_reads_alpha_080_and_no_trend() -> None:
    result = run(**web.EXAMPLES["tuning.vllm"])
    m = result["metrics"]
    assert (m["accept-rate"], m["tokens-per-pass"], round(m["alpha"], 2)) == (0.59, 3.36, 0.8)
    assert result["verdict"]["kind"] == "flat"
    assert "rebuilt from the log line" in result["verdict"]["evidence"]


def test_text_it_cannot_read_comes_back_as_a_message() -> None:
    result = run(metrics="this is not a metrics page", later="", cost=0.05)
    assert result["status"] == "error"
    assert "not Prometheus text" in result["message"]
    assert result["metrics"] == {}
    assert "figures" not in result


def test_an_empty_area_asks_for_text_and_carries_the_example() -> None:
    result = run(metrics="", later="", cost=0.05)
    assert result["status"] == "empty"
    assert result["example"]["metrics"].startswith("# HELP")
    assert "vllm:spec_decode_num_drafts_total" in result["example"]["later"]


def test_a_later_dump_alone_is_a_message_not_a_guess() -> None:
    result = run(metrics="", later=example()["later"], cost=0.05)
    assert (result["status"], result["message"]) == ("error", vllm_metrics_message("", example()["later"]))


def vllm_metrics_message(metrics: str, later: str) -> str:
    with pytest.raises(ValueError) as caught:
        vllm_metrics.read_counts(metrics, later)
    return str(caught.value)


def test_a_wrong_type_is_still_an_error_naming_the_argument() -> None:
    with pytest.raises(TypeError, match="metrics must be a string"):
        web.HANDLERS["tuning.vllm"](metrics=5)
    with pytest.raises(ValueError, match="cost must be"):
        web.HANDLERS["tuning.vllm"](metrics="", cost=-1)


def test_a_higher_draft_cost_never_recommends_a_longer_gamma() -> None:
    texts = example()
    gammas = [
        run(metrics=texts["metrics"], later=texts["later"], cost=c)["metrics"]["optimal-gamma"]
        for c in (0.01, 0.05, 0.2, 1.0)
    ]
    assert gammas == sorted(gammas, reverse=True)


def test_the_roofline_recommends_the_packages_gamma_and_links_the_cost_page() -> None:
    """The example dumps priced on the roofline (the Cost page's defaults, batch 1 and 256): the tiles and the advice
    follow the chosen cost model, the numbers are vllm_metrics' own, and the result survives a strict JSON round
    trip (no NaN or infinity) under both cost models."""
    texts = example()
    analysis = vllm_metrics.analyse(vllm_metrics.read_counts(texts["metrics"], texts["later"]), 0.05, 32)
    llama, small, h100 = MODELS["llama-3.1-8b"], MODELS["llama-3.2-1b"], HARDWARE["h100"]
    for batch in (1, 256):
        cost = vllm_metrics.roofline_round_cost(llama, small, h100, batch=batch, context=1024)
        best = vllm_metrics.best_gamma(analysis.profile, cost), vllm_metrics.best_gamma(analysis.iid, cost)
        for chosen in ("c", "roofline"):
            raw = web.call(
                "tuning.vllm",
                json.dumps({"metrics": texts["metrics"], "later": texts["later"], "costmodel": chosen, "batch": batch}),
            )
            result = json.loads(raw, parse_constant=lambda name: pytest.fail(f"{name} in the JSON"))
            m, roof = result["metrics"], result["roofline"]
            assert (roof["best-profile"], roof["best-iid"]) == best
            if chosen == "roofline":
                assert (m["optimal-gamma"], m["optimal-gamma-iid"]) == best
                assert result["recommendation"].startswith("On the roofline (Llama-3.1-8B verifying Llama-3.2-1B")
                assert m["optimal-speedup"] == pytest.approx(analysis.profile[best[0]] / cost(best[0]), rel=1e-12)
            else:
                assert (m["optimal-gamma"], m["optimal-gamma-iid"]) == (analysis.best_profile, analysis.best_iid)
                assert result["recommendation"].startswith("At draft cost c = 0.05")
            assert roof["query"] == {
                "hardware": "h100",
                "target": "llama-3.1-8b",
                "draft": "llama-3.2-1b",
                "batch": batch,
                "context": 1024,
                "alpha": round(analysis.alpha, 2),
                "gamma": best[1],
            }
    # Batch 1 is memory-bound at every gamma; at batch 256 the verification turns compute-bound past gamma = 2.
    assert [
        run(metrics=texts["metrics"], later=texts["later"], costmodel="roofline", batch=b)["roofline"]["best-profile"]
        for b in (1, 256)
    ] == [3, 2]


def test_the_roofline_warns_when_the_models_do_not_fit() -> None:
    """Batch 1,024 at 32,768 tokens of context needs terabytes of KV cache; the 70B target's weights alone take
    141 GB: both say they do not fit one H100's 80 GB, with the Cost page's figure (costs.memory_needed); the
    defaults fit."""
    texts = example()

    def roof(**args: Any) -> dict[str, Any]:
        roofline: dict[str, Any] = run(metrics=texts["metrics"], costmodel="roofline", **args)["roofline"]
        return roofline

    fits = roof()
    assert fits["memory-fits"] == 1 and "do not fit" not in fits["text"]
    for args in ({"batch": 1024, "context": 32768}, {"target": "llama-3.1-70b"}):
        settings = {"target": "llama-3.1-8b", "batch": 1, "context": 1024} | args
        need = costs.memory_needed(
            MODELS[settings["target"]], MODELS["llama-3.2-1b"], context=settings["context"], batch=settings["batch"]
        )
        assert need > HARDWARE["h100"].memory
        result = roof(**args)
        assert result["memory-fits"] == 0
        assert f"need {need / 1e9:,.1f} GB, and this hardware has 80 GB" in result["text"]


def test_bad_roofline_settings_are_errors_naming_the_argument() -> None:
    line = web.EXAMPLES["tuning.vllm"]["metrics"]
    with pytest.raises(ValueError, match="costmodel must be one of c, roofline"):
        run(metrics=line, costmodel="speed")
    with pytest.raises(ValueError, match="batch must be a power of two"):
        run(metrics=line, batch=3)
    with pytest.raises(ValueError, match="context must be between"):
        run(metrics=line, context=64)
    with pytest.raises(ValueError, match="draft must be one of"):
        run(metrics=line, draft="llama-3.1-70b")
    with pytest.raises(TypeError, match="hardware must be a string"):
        run(metrics=line, hardware=1)
