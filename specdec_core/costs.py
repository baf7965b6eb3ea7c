"""What a forward pass costs on real hardware, and the speedup speculative decoding gets from it at a batch size.

A roofline model (Williams, Waterman and Patterson, "Roofline", CACM 2009) of a decoder's forward pass over
``tokens`` tokens (every sequence's tokens of the batch together) at context length ``context``:

    time = max(bytes read / memory bandwidth, 2 * parameters * tokens / peak FLOP/s)

- bytes read = the weights (parameters * bytes per parameter) plus the KV cache of every sequence in the batch;
- KV cache = layers * 2 (keys and values) * KV heads * head dim * bytes per value * context * batch;
- 2 FLOPs per parameter per token: one multiply and one add of each weight in the matrix products.

Per emitted token of one sequence, at batch B (the batch decodes in lockstep, so a sequence waits for the pass):

- plain decoding: t_target(B tokens);
- speculative decoding: (gamma * t_draft(B tokens) + t_target(B * (gamma + 1) tokens)) / E[tokens per pass],
  with E[tokens per pass] = (1 - alpha^(gamma+1)) / (1 - alpha) from ``theory.expected_tokens``
  (Leviathan et al. 2023, Eq. 1);
- their ratio is the speedup. Verifying gamma + 1 tokens reads the same weights and KV cache as generating one,
  so while a pass is memory-bound it costs about the same; past the *ridge point* (the tokens per pass at which
  the arithmetic takes as long as the reads) it grows with the tokens, and speculation pays for every draft it
  throws away.

Simplifications (the numbers are a model's, not a measurement's):

- no attention FLOPs beyond the 2 * parameters * tokens of the weights: attention only adds bytes (the KV reads);
- no kernel launch overheads, no framework time, no sampling time, no communication between devices (the
  multi-GPU preset simply sums bandwidth, FLOP/s and memory, as perfect tensor parallelism would);
- perfect overlap of reads and arithmetic (the max above), at the spec sheet's peak rates, which real kernels
  reach only in part;
- every parameter is read once per pass, embedding table included (a lookup reads only a few rows: this
  overcounts the Llama models by one embedding table, about 6.5% of the 8B);
- the KV cache is stored in 16 bits whatever the weights' precision; the context is the same for every sequence;
- the draft and the target share the device; the draft's KV cache counts too.

Non-goals: prefill, paged memory, tree verification, anything measured. ``benchmarks/`` measures; this computes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from .distributions import check_alpha, check_gamma
from .theory import expected_tokens

__all__ = [
    "HARDWARE",
    "MODELS",
    "Hardware",
    "Model",
    "PassCost",
    "SpeculativeCost",
    "eagle3_head_parameters",
    "head_mismatch",
    "kv_cache_bytes",
    "llama_parameters",
    "memory_needed",
    "pass_cost",
    "ridge_tokens",
    "speculative_cost",
]

GB = 1e9
TB = 1e12
#: Bytes per value of the KV cache (16-bit keys and values).
KV_BYTES = 2
#: Largest context, batch and tokens per pass the checks accept: far beyond any page control, well inside floats.
MAX_CONTEXT = 1 << 20
MAX_BATCH = 1 << 16
MAX_TOKENS = MAX_BATCH * 65


@dataclass(frozen=True)
class Hardware:
    """A device (or a group of devices working as one) with its spec sheet's peak rates and its memory."""

    key: str
    name: str
    bandwidth: float  # bytes/s, peak memory bandwidth
    flops: float  # FLOP/s, peak dense 16-bit matrix throughput
    memory: float  # bytes
    source: str  # where each number comes from


@dataclass(frozen=True)
class Model:
    """A decoder's shape: what a pass reads (``parameters``) and what one token's KV cache holds per layer."""

    key: str
    name: str
    parameters: int  # the weights one pass reads
    layers: int
    kv_heads: int
    head_dim: int
    source: str
    head_of: str | None = None  # an EAGLE-style head: the key of the target whose hidden states it reads


def llama_parameters(
    *, vocab: int, hidden: int, intermediate: int, layers: int, heads: int, kv_heads: int, head_dim: int, tied: bool
) -> int:
    """Parameters of a Llama-architecture decoder from its config.json fields.

    Per layer: q and o projections (hidden x heads * head_dim each), k and v (hidden x kv_heads * head_dim each),
    the SwiGLU MLP (three hidden x intermediate matrices) and two RMSNorm weights; then the final norm, the
    embedding table and, unless ``tied``, a separate LM head.

    >>> llama_parameters(vocab=128256, hidden=4096, intermediate=14336, layers=32, heads=32, kv_heads=8,
    ...                  head_dim=128, tied=False)  # Llama-3.1-8B: "8.03B" on its model card
    8030261248
    """
    attention = 2 * hidden * heads * head_dim + 2 * hidden * kv_heads * head_dim
    per_layer = attention + 3 * hidden * intermediate + 2 * hidden
    embeddings = vocab * hidden * (1 if tied else 2)
    return layers * per_layer + hidden + embeddings


def eagle3_head_parameters(
    *, hidden: int, intermediate: int, heads: int, kv_heads: int, head_dim: int, draft_vocab: int
) -> int:
    """Weights an EAGLE-3 style draft head reads per draft step (Li et al. 2025, "EAGLE-3", arXiv:2503.01840).

    One decoder layer whose attention takes the token embedding and a hidden state side by side (2 * hidden
    inputs to q, k and v), a fully connected layer fusing three of the target's hidden states (3 * hidden ->
    hidden), and an LM head over a reduced draft vocabulary. The embedding table is the target's: a lookup,
    not counted. The layout follows the EAGLE-3 Llama draft checkpoints (``fc``, ``layers.0``, ``lm_head``) as
    SGLang and vLLM load them (``llama_eagle3.py``).

    >>> eagle3_head_parameters(hidden=4096, intermediate=14336, heads=32, kv_heads=8, head_dim=128,
    ...                        draft_vocab=32000)
    424689664
    """
    attention = 2 * hidden * (heads * head_dim + 2 * kv_heads * head_dim) + heads * head_dim * hidden
    layer = attention + 3 * hidden * intermediate + 3 * hidden  # input, hidden and post-attention norms
    return 3 * hidden * hidden + layer + hidden + draft_vocab * hidden


# --- Presets -----------------------------------------------------------------------------------------------------
# Each number carries its source. Peak FLOP/s are dense (without 2:4 sparsity), 16-bit tensor-core rates.

_H100 = "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM column (https://www.nvidia.com/en-us/data-center/h100/)"
_NV_SPARSE = "the datasheet's 1,979 TFLOP/s is with sparsity; dense is half"

HARDWARE: dict[str, Hardware] = {
    "h100": Hardware(
        "h100",
        "H100 SXM (80 GB)",
        3.35 * TB,
        989e12,
        80 * GB,
        f"{_H100}: GPU memory 80 GB, bandwidth 3.35 TB/s, BF16 Tensor Core 1,979 TFLOP/s ({_NV_SPARSE}: 989).",
    ),
    "8xh100": Hardware(
        "8xh100",
        "8 \N{MULTIPLICATION SIGN} H100 SXM, tensor parallel",
        8 * 3.35 * TB,
        8 * 989e12,
        8 * 80 * GB,
        f"Eight of the H100 SXM above ({_H100}), bandwidth, FLOP/s and memory summed: tensor parallelism with "
        "no communication cost, an upper bound.",
    ),
    "a100": Hardware(
        "a100",
        "A100 SXM (80 GB)",
        2.039 * TB,
        312e12,
        80 * GB,
        "NVIDIA A100 Tensor Core GPU datasheet, A100 80GB SXM column "
        "(https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
        "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf): GPU memory 80 GB HBM2e, bandwidth 2,039 GB/s, "
        "BFLOAT16 Tensor Core 312 TFLOP/s (624 with sparsity).",
    ),
    "rtx4090": Hardware(
        "rtx4090",
        "GeForce RTX 4090 (24 GB)",
        1.008 * TB,
        165.2e12,
        24 * GB,
        "NVIDIA Ada Lovelace GPU architecture whitepaper, appendix table for the GeForce RTX 4090 "
        "(https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf): 24 GB "
        "GDDR6X, 1,008 GB/s, peak BF16 Tensor TFLOPS with FP32 accumulate 165.2 (330.4 with sparsity).",
    ),
    "m1max": Hardware(
        "m1max",
        "Apple M1 Max laptop (32-core GPU, 64 GB)",
        400 * GB,
        10.4e12,
        64 * GB,
        "Apple newsroom, 'Introducing M1 Pro and M1 Max' (18 October 2021, https://www.apple.com/newsroom/2021/"
        "10/introducing-m1-pro-and-m1-max-the-most-powerful-chips-apple-has-ever-built/): up to 400 GB/s and "
        "64 GB of unified memory. 10.4 TFLOP/s is the figure Apple gave for the 32-core GPU at its 18 October 2021 "
        "event, as the press reported it (it is not in the press release); it is a 32-bit rate, used here for "
        "16 bits, which third-party listings give the same rate on this GPU.",
    ),
}

_LLAMA31 = "https://huggingface.co/meta-llama/Llama-3.1-{}/blob/main/config.json"
_FIELDS = "num_hidden_layers {}, num_key_value_heads 8, hidden_size {}, num_attention_heads {}, head_dim 128"

MODELS: dict[str, Model] = {
    "llama-3.1-8b": Model(
        "llama-3.1-8b",
        "Llama-3.1-8B",
        llama_parameters(
            vocab=128256, hidden=4096, intermediate=14336, layers=32, heads=32, kv_heads=8, head_dim=128, tied=False
        ),
        32,
        8,
        128,
        f"config.json ({_LLAMA31.format('8B')}): {_FIELDS.format(32, 4096, 32)}, intermediate_size 14336, "
        "vocab_size 128256, untied embeddings; parameters counted from these shapes (8.03B, as the model card).",
    ),
    "llama-3.1-70b": Model(
        "llama-3.1-70b",
        "Llama-3.1-70B",
        llama_parameters(
            vocab=128256, hidden=8192, intermediate=28672, layers=80, heads=64, kv_heads=8, head_dim=128, tied=False
        ),
        80,
        8,
        128,
        f"config.json ({_LLAMA31.format('70B')}): {_FIELDS.format(80, 8192, 64)}, intermediate_size 28672, "
        "vocab_size 128256, untied embeddings; parameters counted from these shapes (70.6B, as the model card).",
    ),
    "llama-3.2-1b": Model(
        "llama-3.2-1b",
        "Llama-3.2-1B",
        llama_parameters(
            vocab=128256, hidden=2048, intermediate=8192, layers=16, heads=32, kv_heads=8, head_dim=64, tied=True
        ),
        16,
        8,
        64,
        "config.json (https://huggingface.co/meta-llama/Llama-3.2-1B/blob/main/config.json): num_hidden_layers 16, "
        "num_key_value_heads 8, head_dim 64, hidden_size 2048, num_attention_heads 32, intermediate_size 8192, "
        "vocab_size 128256, tie_word_embeddings true; parameters counted from these shapes (1.24B).",
    ),
    "eagle-8b": Model(
        "eagle-8b",
        "EAGLE-style one-layer head (for the 8B)",
        eagle3_head_parameters(hidden=4096, intermediate=14336, heads=32, kv_heads=8, head_dim=128, draft_vocab=32000),
        1,
        8,
        128,
        "EAGLE-3 (Li et al. 2025, arXiv:2503.01840): one decoder layer of the target's width over the fused "
        "hidden states of three target layers; shapes of the Llama-3.1-8B head (hidden_size 4096, "
        "intermediate_size 14336, num_key_value_heads 8, head_dim 128, one layer, a 32,000-token draft vocabulary), "
        "as in its checkpoint's config.json (https://huggingface.co/yuhuili/EAGLE3-LLaMA3.1-Instruct-8B); "
        "parameters counted from these shapes (0.42B, embedding table shared with the target).",
        head_of="llama-3.1-8b",
    ),
    "eagle-70b": Model(
        "eagle-70b",
        "EAGLE-style one-layer head (for the 70B)",
        eagle3_head_parameters(hidden=8192, intermediate=28672, heads=64, kv_heads=8, head_dim=128, draft_vocab=32000),
        1,
        8,
        128,
        "EAGLE-3 (Li et al. 2025, arXiv:2503.01840): the 8B head's layout at Llama-3.1-70B's width (hidden_size "
        "8192, intermediate_size 28672, num_key_value_heads 8, head_dim 128, from the 70B's config.json above), "
        "one layer, a 32,000-token draft vocabulary; our scaling, not a published checkpoint's config; parameters "
        "counted from these shapes (1.40B).",
        head_of="llama-3.1-70b",
    ),
}


# --- The roofline ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PassCost:
    """One forward pass on the roofline: what it reads and computes, and how long that takes."""

    tokens: int
    bytes: float  # weights + KV cache read
    flops: float  # 2 * parameters * tokens
    memory_time: float  # seconds: bytes / bandwidth
    compute_time: float  # seconds: flops / peak
    time: float  # seconds: the larger of the two

    @property
    def bound(self) -> Literal["memory", "compute"]:
        """Which roof the pass sits under (a tie counts as memory-bound: the arithmetic is not yet the limit)."""
        return "compute" if self.compute_time > self.memory_time else "memory"

    @property
    def intensity(self) -> float:
        """Arithmetic intensity, FLOPs per byte read."""
        return self.flops / self.bytes


def kv_cache_bytes(model: Model, context: int, batch: int) -> float:
    """Bytes of the KV cache of ``batch`` sequences of ``context`` tokens each.

    layers * 2 (K and V) * KV heads * head dim * 2 bytes * context * batch. For Llama-3.1-8B, one token holds
    32 * 2 * 8 * 128 * 2 = 131,072 bytes (128 KiB):

    >>> kv_cache_bytes(MODELS["llama-3.1-8b"], context=1, batch=1)
    131072.0
    """
    _check_model(model, "model")
    c, b = _check_count(context, "context", MAX_CONTEXT), _check_count(batch, "batch", MAX_BATCH)
    return float(model.layers * 2 * model.kv_heads * model.head_dim * KV_BYTES * c * b)


# --8<-- [start:pass_cost]
def pass_cost(
    model: Model, hardware: Hardware, *, tokens: int, context: int, batch: int, weight_bytes: float = 2.0
) -> PassCost:
    """One forward pass over ``tokens`` tokens of ``batch`` sequences at ``context`` tokens of context.

    >>> h100, llama = HARDWARE["h100"], MODELS["llama-3.1-8b"]
    >>> plain = pass_cost(llama, h100, tokens=1, context=128, batch=1)
    >>> plain.bound, round(plain.time * 1e3, 3)  # 16.08 GB / 3.35 TB/s
    ('memory', 4.799)
    """
    _check_model(model, "model")
    _check_hardware(hardware, "hardware")
    t = _check_count(tokens, "tokens", MAX_TOKENS)
    w = _check_weight_bytes(weight_bytes)
    read = model.parameters * w + kv_cache_bytes(model, context, batch)
    flops = 2.0 * model.parameters * t
    memory_time, compute_time = read / hardware.bandwidth, flops / hardware.flops
    return PassCost(t, read, flops, memory_time, compute_time, max(memory_time, compute_time))


# --8<-- [end:pass_cost]


def head_mismatch(target: Model, draft: Model) -> str:
    """A sentence (with its leading space) when ``draft`` is an EAGLE-style head made for another target, else "".

    A head reads its own target's hidden states, so beside another target it prices a head of that shape only.

    >>> target, small = MODELS["llama-3.1-70b"], MODELS["llama-3.1-8b"]
    >>> head_mismatch(target, MODELS["eagle-70b"]), head_mismatch(small, MODELS["llama-3.2-1b"])
    ('', '')
    >>> head_mismatch(target, MODELS["eagle-8b"]).split(":")[0]
    " The EAGLE-style one-layer head (for the 8B) reads Llama-3.1-8B's hidden states"
    """
    if draft.head_of is None or draft.head_of == target.key:
        return ""
    return (
        f" The {draft.name} reads {MODELS[draft.head_of].name}'s hidden states: with {target.name} it stands for a "
        "head of that shape, not one that exists."
    )


def ridge_tokens(model: Model, hardware: Hardware, *, context: int, batch: int, weight_bytes: float = 2.0) -> float:
    """Tokens per pass at which the pass turns compute-bound: 2 * parameters * T / peak = bytes / bandwidth.

    T = peak * bytes / (2 * parameters * bandwidth). With 16-bit weights and a short context that is about
    peak / bandwidth, the hardware's own ridge in FLOPs per byte (the 2 FLOPs and 2 bytes per parameter cancel);
    the KV cache of a long context raises it, because it adds bytes and (here) no FLOPs.

    >>> round(ridge_tokens(MODELS["llama-3.1-8b"], HARDWARE["h100"], context=1, batch=1), 1)
    295.2
    """
    one = pass_cost(model, hardware, tokens=1, context=context, batch=batch, weight_bytes=weight_bytes)
    return one.memory_time / one.compute_time


@dataclass(frozen=True)
class SpeculativeCost:
    """Plain against speculative decoding at one batch size: the passes, per-token times and the speedup."""

    plain: PassCost  # the target over batch tokens
    draft: PassCost  # one draft step over batch tokens
    verify: PassCost  # the target over batch * (gamma + 1) tokens
    gamma: int
    tokens_per_pass: float  # E[tokens per target pass], Leviathan et al. 2023, Eq. 1

    @property
    def round_time(self) -> float:
        """Seconds of one speculative round: gamma draft steps and one verification pass."""
        return self.gamma * self.draft.time + self.verify.time

    @property
    def plain_per_token(self) -> float:
        """Seconds per emitted token of one sequence, plain decoding: one target pass."""
        return self.plain.time

    @property
    def speculative_per_token(self) -> float:
        """Seconds per emitted token of one sequence, speculative decoding: a round over its expected tokens."""
        return self.round_time / self.tokens_per_pass

    @property
    def speedup(self) -> float:
        """Plain time / speculative time for the same tokens, under this cost model."""
        return self.plain_per_token / self.speculative_per_token


# --8<-- [start:speculative_cost]
def speculative_cost(
    target: Model,
    draft: Model,
    hardware: Hardware,
    *,
    alpha: float,
    gamma: int,
    batch: int,
    context: int,
    weight_bytes: float = 2.0,
) -> SpeculativeCost:
    """Per-token cost of plain and speculative decoding at ``batch`` sequences of ``context`` tokens.

    Our defaults (an 8B target and a 1B draft in 16 bits on one H100, alpha = 0.8, gamma = 4, 128 tokens of
    context): at batch 1 every pass is memory-bound and the round of 4 draft steps plus one verification reads
    about 1.6 target passes' worth of bytes for 3.36 tokens; at batch 1024 the verification pass of 5,120 tokens
    is far past the ridge, and speculation loses.

    >>> h100, llama, small = HARDWARE["h100"], MODELS["llama-3.1-8b"], MODELS["llama-3.2-1b"]
    >>> [round(speculative_cost(llama, small, h100, alpha=0.8, gamma=4, batch=b, context=128).speedup, 2)
    ...  for b in (1, 1024)]
    [2.08, 0.6]
    """
    a, g = check_alpha(alpha), check_gamma(gamma)
    b = _check_count(batch, "batch", MAX_BATCH)
    _check_model(draft, "draft")
    # Every pass of a round reads the KV cache of all ``batch`` sequences; only the tokens it computes differ.
    plain = pass_cost(target, hardware, tokens=b, context=context, batch=b, weight_bytes=weight_bytes)
    step = pass_cost(draft, hardware, tokens=b, context=context, batch=b, weight_bytes=weight_bytes)
    verify = pass_cost(target, hardware, tokens=b * (g + 1), context=context, batch=b, weight_bytes=weight_bytes)
    return SpeculativeCost(plain, step, verify, g, expected_tokens(a, g))


# --8<-- [end:speculative_cost]


def memory_needed(target: Model, draft: Model | None, *, context: int, batch: int, weight_bytes: float = 2.0) -> float:
    """Bytes the weights and KV caches of the target (and the draft, if any) take at this batch and context.

    >>> round(memory_needed(MODELS["llama-3.1-70b"], None, context=128, batch=1) / 1e9, 1)  # > one H100's 80 GB
    141.1
    """
    w = _check_weight_bytes(weight_bytes)
    _check_model(target, "target")
    models = [target] if draft is None else [target, draft]
    if draft is not None:
        _check_model(draft, "draft")
    return sum(m.parameters * w + kv_cache_bytes(m, context, batch) for m in models)


# --- Checks ------------------------------------------------------------------------------------------------------


def _check_count(value: object, name: str, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if not 1 <= value <= high:
        raise ValueError(f"{name} must be between 1 and {high} (got {value})")
    return value


def _check_weight_bytes(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"weight_bytes must be a number, got {type(value).__name__}")
    if not (0.0 < value <= 4.0 and math.isfinite(value)):
        raise ValueError(f"weight_bytes must be a number of bytes per parameter in (0, 4] (got {value})")
    return float(value)


def _check_model(value: object, name: str) -> None:
    if not isinstance(value, Model):
        raise TypeError(f"{name} must be a costs.Model, got {type(value).__name__}")


def _check_hardware(value: object, name: str) -> None:
    if not isinstance(value, Hardware):
        raise TypeError(f"{name} must be a costs.Hardware, got {type(value).__name__}")
