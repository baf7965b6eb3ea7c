"""The roofline cost model: passes worked by hand, the defaults' speedup across batch sizes, memory, bad input."""

from __future__ import annotations

import math

import pytest

from specdec_core import costs, theory
from specdec_core.costs import HARDWARE, MODELS, Hardware, Model

# A toy device and model whose numbers make the arithmetic easy to follow by hand.
TOY_HW = Hardware("toy", "toy", bandwidth=1e12, flops=100e12, memory=50e9, source="made up for the test")
TOY = Model("toy", "toy", parameters=1_000_000_000, layers=10, kv_heads=4, head_dim=100, source="made up")
LLAMA_8B, LLAMA_1B, H100 = MODELS["llama-3.1-8b"], MODELS["llama-3.2-1b"], HARDWARE["h100"]


def test_kv_cache_bytes_by_hand() -> None:
    """10 layers * 2 (K, V) * 4 heads * 100 dims * 2 bytes = 16,000 bytes per token; * 500 tokens * 3 sequences."""
    assert costs.kv_cache_bytes(TOY, context=500, batch=3) == 16_000 * 500 * 3


def test_memory_bound_pass_by_hand() -> None:
    """One token, 1,000 tokens of context, 16-bit weights.

    bytes = 1e9 * 2 + 16,000 * 1,000 = 2.016e9 -> 2.016 ms at 1 TB/s; FLOPs = 2 * 1e9 * 1 = 2e9 -> 0.02 ms at
    100 TFLOP/s. The reads dominate: memory-bound, 2.016 ms, intensity 2e9 / 2.016e9 FLOP/byte.
    """
    one = costs.pass_cost(TOY, TOY_HW, tokens=1, context=1000, batch=1)
    assert one.bytes == pytest.approx(2.016e9, rel=1e-12)
    assert one.flops == 2e9
    assert one.time == pytest.approx(2.016e-3, rel=1e-12)
    assert one.compute_time == pytest.approx(2e-5, rel=1e-12)
    assert one.bound == "memory"
    assert one.intensity == pytest.approx(2e9 / 2.016e9, rel=1e-12)


def test_compute_bound_pass_by_hand() -> None:
    """400 tokens over 4 sequences of 1,000 tokens: bytes = 2e9 + 16,000 * 1,000 * 4 = 2.064e9 -> 2.064 ms;
    FLOPs = 2 * 1e9 * 400 = 8e11 -> 8 ms. Compute-bound: 8 ms."""
    big = costs.pass_cost(TOY, TOY_HW, tokens=400, context=1000, batch=4)
    assert big.memory_time == pytest.approx(2.064e-3, rel=1e-12)
    assert big.time == pytest.approx(8e-3, rel=1e-12)
    assert big.bound == "compute"


def test_ridge_by_hand() -> None:
    """The ridge at one sequence of 1,000 tokens: T = peak * bytes / (2 * params * bandwidth)
    = 100e12 * 2.016e9 / (2e9 * 1e12) = 100.8 tokens. Just below it the pass is memory-bound, just above it
    compute-bound, and at T the two times are equal."""
    ridge = costs.ridge_tokens(TOY, TOY_HW, context=1000, batch=1)
    assert ridge == pytest.approx(100.8, rel=1e-12)
    below = costs.pass_cost(TOY, TOY_HW, tokens=100, context=1000, batch=1)
    above = costs.pass_cost(TOY, TOY_HW, tokens=101, context=1000, batch=1)
    assert (below.bound, above.bound) == ("memory", "compute")
    assert below.time == pytest.approx(2.016e-3, rel=1e-12)  # flat roof: 100 tokens cost what 1 does
    assert above.time == pytest.approx(2 * 1e9 * 101 / 100e12, rel=1e-12)


def test_long_context_raises_the_ridge() -> None:
    """The KV cache adds bytes and no FLOPs here, so a longer context moves the ridge up (MagicDec's point)."""
    short = costs.ridge_tokens(LLAMA_8B, H100, context=128, batch=64)
    long = costs.ridge_tokens(LLAMA_8B, H100, context=32768, batch=64)
    assert long > 10 * short


def test_verification_costs_one_pass_while_memory_bound() -> None:
    """At batch 1 the verification pass of gamma + 1 = 5 tokens costs exactly what one plain token costs."""
    cost = costs.speculative_cost(LLAMA_8B, LLAMA_1B, H100, alpha=0.8, gamma=4, batch=1, context=1024)
    assert cost.verify.bound == "memory"
    assert cost.verify.time == cost.plain.time
    assert cost.tokens_per_pass == theory.expected_tokens(0.8, 4)


def test_speculative_cost_by_hand() -> None:
    """Per token: (gamma * t_draft + t_verify) / E[tokens per pass], with each pass's time from pass_cost."""
    cost = costs.speculative_cost(LLAMA_8B, LLAMA_1B, H100, alpha=0.7, gamma=3, batch=16, context=2048)
    t_draft = costs.pass_cost(LLAMA_1B, H100, tokens=16, context=2048, batch=16).time
    t_verify = costs.pass_cost(LLAMA_8B, H100, tokens=64, context=2048, batch=16).time
    t_plain = costs.pass_cost(LLAMA_8B, H100, tokens=16, context=2048, batch=16).time
    per_token = (3 * t_draft + t_verify) / ((1 - 0.7**4) / (1 - 0.7))
    assert cost.speculative_per_token == pytest.approx(per_token, rel=1e-12)
    assert cost.speedup == pytest.approx(t_plain / per_token, rel=1e-12)


def test_defaults_pay_at_batch_one_and_lose_at_batch_1024() -> None:
    """The page's defaults (8B target, 1B draft, 16-bit, one H100, alpha 0.8, gamma 4) at the shortest context."""
    at = {
        b: costs.speculative_cost(LLAMA_8B, LLAMA_1B, H100, alpha=0.8, gamma=4, batch=b, context=128) for b in (1, 1024)
    }
    assert at[1].speedup > 1
    assert at[1024].speedup < 1
    assert at[1024].verify.bound == "compute"


def test_gamma_zero_is_plain_decoding() -> None:
    """No drafts: one target pass of batch tokens per emitted token, exactly plain decoding."""
    cost = costs.speculative_cost(LLAMA_8B, LLAMA_1B, H100, alpha=0.5, gamma=0, batch=8, context=512)
    assert cost.speedup == 1.0


def test_70b_in_16_bits_does_not_fit_one_h100_but_fits_eight() -> None:
    """70.55e9 parameters * 2 bytes = 141 GB of weights alone, against 80 GB; eight H100s hold 640 GB."""
    need = costs.memory_needed(MODELS["llama-3.1-70b"], MODELS["eagle-70b"], context=1024, batch=1)
    assert need > H100.memory
    assert need < HARDWARE["8xh100"].memory
    assert costs.memory_needed(LLAMA_8B, LLAMA_1B, context=1024, batch=1) < H100.memory


def test_parameter_counts_match_the_model_cards() -> None:
    """Counted from config.json shapes: 8.03B, 70.6B and 1.24B, as the model cards round them."""
    assert round(LLAMA_8B.parameters / 1e9, 2) == 8.03
    assert round(MODELS["llama-3.1-70b"].parameters / 1e9, 1) == 70.6
    assert round(LLAMA_1B.parameters / 1e9, 2) == 1.24


def test_every_preset_cites_a_source() -> None:
    for preset in [*HARDWARE.values(), *MODELS.values()]:
        assert len(preset.source) > 40, preset.key
        assert "http" in preset.source or "arXiv" in preset.source, preset.key
        assert preset.key in (HARDWARE if isinstance(preset, Hardware) else MODELS)


def test_the_tensor_parallel_preset_sums_eight_h100s() -> None:
    tp = HARDWARE["8xh100"]
    assert (tp.bandwidth, tp.flops, tp.memory) == (8 * H100.bandwidth, 8 * H100.flops, 8 * H100.memory)


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"tokens": 0}, ValueError, "tokens"),
        ({"tokens": 1.5}, TypeError, "tokens"),
        ({"context": 0}, ValueError, "context"),
        ({"context": "128"}, TypeError, "context"),
        ({"batch": True}, TypeError, "batch"),
        ({"batch": 10**9}, ValueError, "batch"),
        ({"weight_bytes": 0}, ValueError, "weight_bytes"),
        ({"weight_bytes": math.nan}, ValueError, "weight_bytes"),
        ({"weight_bytes": "2"}, TypeError, "weight_bytes"),
    ],
)
def test_bad_pass_arguments_name_the_argument(kwargs: dict[str, object], error: type[Exception], name: str) -> None:
    args: dict[str, object] = {"tokens": 1, "context": 128, "batch": 1, "weight_bytes": 2.0} | kwargs
    with pytest.raises(error, match=name):
        costs.pass_cost(LLAMA_8B, H100, **args)  # type: ignore[arg-type]


def test_bad_presets_and_rates_name_the_argument() -> None:
    with pytest.raises(TypeError, match="model"):
        costs.pass_cost("llama", H100, tokens=1, context=1, batch=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="hardware"):
        costs.pass_cost(LLAMA_8B, "h100", tokens=1, context=1, batch=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="draft"):
        costs.speculative_cost(LLAMA_8B, None, H100, alpha=0.8, gamma=4, batch=1, context=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="alpha"):
        costs.speculative_cost(LLAMA_8B, LLAMA_1B, H100, alpha=1.5, gamma=4, batch=1, context=1)
    with pytest.raises(ValueError, match="gamma"):
        costs.speculative_cost(LLAMA_8B, LLAMA_1B, H100, alpha=0.8, gamma=65, batch=1, context=1)
    with pytest.raises(TypeError, match="target"):
        costs.memory_needed(None, LLAMA_1B, context=1, batch=1)  # type: ignore[arg-type]
