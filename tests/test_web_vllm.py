"""tuning.vllm: the Tuning page's analysis of pasted vLLM counters, as the widget receives it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from specdec_core import vllm_metrics, web
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
