"""The Cost page's handlers (web/cost.py): the roofline priced for the reader's settings, and the race."""

from __future__ import annotations

import json
from typing import Any

import pytest

from specdec_core import costs, web
from specdec_core.web.cost import BATCHES

DEFAULTS: dict[str, Any] = dict(web.EXAMPLES["cost.model"])


def call(name: str, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(web.call(name, json.dumps(DEFAULTS | args)))
    return result


def test_metrics_are_the_cost_model_numbers() -> None:
    m = call("cost.model", batch=64, context=4096)["metrics"]
    want = costs.speculative_cost(
        costs.MODELS["llama-3.1-8b"],
        costs.MODELS["llama-3.2-1b"],
        costs.HARDWARE["h100"],
        alpha=0.8,
        gamma=4,
        batch=64,
        context=4096,
    )
    assert m["speedup"] == pytest.approx(want.speedup, rel=1e-9)
    assert m["plain-pass-ms"] == pytest.approx(want.plain.time * 1e3, rel=1e-9)
    assert m["verify-pass-ms"] == pytest.approx(want.verify.time * 1e3, rel=1e-9)
    assert m["verify-tokens"] == 64 * 5
    ridge = costs.ridge_tokens(costs.MODELS["llama-3.1-8b"], costs.HARDWARE["h100"], context=4096, batch=64)
    assert m["ridge-tokens"] == pytest.approx(ridge, rel=1e-9)


def test_batch_size_moves_the_speedup_across_break_even() -> None:
    """At the shortest context the defaults pay at batch 1 and lose at batch 1024, and the page says which roof."""
    small, large = call("cost.model", batch=1, context=128), call("cost.model", batch=1024, context=128)
    assert small["metrics"]["speedup"] > 1 > large["metrics"]["speedup"]
    assert small["bound"]["verify"] == "memory" and small["metrics"]["compute-bound"] == 0
    assert large["bound"]["verify"] == "compute" and large["metrics"]["compute-bound"] == 1


def test_speedup_curve_holds_every_batch_and_marks_the_chosen_one() -> None:
    result = call("cost.model", batch=64)
    curve, even, you = result["figures"]["batch"]["data"][:3]
    assert len(curve["y"]) == len(BATCHES)
    assert curve["y"][BATCHES.index(64)] == pytest.approx(result["metrics"]["speedup"], rel=1e-8)
    assert set(even["y"]) == {1.0}
    assert you["y"] == [curve["y"][BATCHES.index(64)]]


def test_70b_on_one_h100_does_not_fit_and_on_eight_it_does() -> None:
    one = call("cost.model", target="llama-3.1-70b", draft="eagle-70b")
    eight = call("cost.model", target="llama-3.1-70b", draft="eagle-70b", hardware="8xh100")
    assert one["metrics"]["memory-fits"] == 0 and one["memory"]["needed-gb"] > 140
    assert eight["metrics"]["memory-fits"] == 1
    assert "does not fit in memory" in [t["name"] for t in one["figures"]["batch"]["data"]]


def test_an_eagle_head_beside_another_target_is_said_to_be_one() -> None:
    """The 8B's head beside the 70B target is a head of that shape, priced all the same; a matching pair: nothing."""
    mismatched = call("cost.model", target="llama-3.1-70b", draft="eagle-8b", hardware="8xh100")["head-note"]
    assert mismatched.startswith("The EAGLE-style one-layer head (for the 8B) reads Llama-3.1-8B's hidden states")
    assert call("cost.model", target="llama-3.1-70b", draft="eagle-70b", hardware="8xh100")["head-note"] == ""
    assert call("cost.model", target="llama-3.1-70b", draft="llama-3.2-1b", hardware="8xh100")["head-note"] == ""


def test_presets_carry_their_sources_to_the_page() -> None:
    presets = call("cost.model", hardware="rtx4090", draft="eagle-8b")["presets"]
    assert [p["role"] for p in presets] == ["Hardware", "Target", "Draft"]
    assert presets[0]["source"] == costs.HARDWARE["rtx4090"].source
    assert presets[2]["source"] == costs.MODELS["eagle-8b"].source


def test_roofline_points_sit_on_or_under_the_roof() -> None:
    """log10 coordinates: each pass's attained FLOP/s is at most min(peak, bandwidth * intensity)."""
    hw = costs.HARDWARE["h100"]
    fig = call("cost.model", batch=256)["figures"]["roofline"]
    for trace in fig["data"][2:]:
        intensity, attained = 10 ** trace["x"][0], 10 ** trace["y"][0] * 1e12
        assert attained <= min(hw.flops, hw.bandwidth * intensity) * (1 + 1e-6)


@pytest.mark.parametrize(("arg", "value"), [("batch", 3), ("context", 100), ("weights", 12), ("target", "gpt")])
def test_values_off_the_controls_name_the_argument(arg: str, value: object) -> None:
    with pytest.raises(ValueError, match=arg):
        call("cost.model", **{arg: value})


def test_race_lanes_come_from_the_engine_and_the_cost_model() -> None:
    """Each lane emits every token once; the speculative lane's clock adds gamma draft steps and one
    verification per round, and its emitted tokens are the engine's accepted drafts plus one final token."""
    result = call("cost.race", tokens=24, seed=3)
    c = costs.speculative_cost(
        costs.MODELS["llama-3.1-8b"],
        costs.MODELS["llama-3.2-1b"],
        costs.HARDWARE["h100"],
        alpha=0.8,
        gamma=4,
        batch=1,
        context=1024,
    )
    plain, spec = result["plain"], result["speculative"]
    assert len(plain["steps"]) == 24
    assert plain["total"] == pytest.approx(24 * c.plain.time * 1e3, rel=1e-9)
    emitted = [tok for step in spec["steps"] if step["kind"] == "verify" for tok in step["emits"]]
    assert len(emitted) == 24
    verifies = [s for s in spec["steps"] if s["kind"] == "verify"]
    drafts = [s for s in spec["steps"] if s["kind"] == "draft"]
    assert result["metrics"]["race-rounds"] == len(verifies)
    assert spec["total"] == pytest.approx((len(drafts) * c.draft.time + len(verifies) * c.verify.time) * 1e3, rel=1e-9)
    for step in verifies:
        kinds = [k for _, k in step["emits"]]
        assert kinds[-1] in {"correction", "bonus"} and set(kinds[:-1]) <= {"accepted"}
    # The steps follow one another on the clock.
    ends = [s["end"] for s in spec["steps"]]
    assert [s["start"] for s in spec["steps"][1:]] == pytest.approx(ends[:-1], rel=1e-9)


def test_race_is_reproducible_by_seed() -> None:
    assert call("cost.race", seed=5) == call("cost.race", seed=5)


def test_race_at_full_agreement_takes_the_bonus_every_round() -> None:
    spec = call("cost.race", alpha=1.0, gamma=4, tokens=20)["speculative"]
    verifies = [s for s in spec["steps"] if s["kind"] == "verify"]
    assert [len(s["emits"]) for s in verifies] == [5, 5, 5, 5]
    assert all(s["emits"][-1][1] == "bonus" for s in verifies)
