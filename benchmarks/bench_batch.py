"""The numpy batch engine: a round at serving scale, and the Monte Carlo. Nothing is asserted.

(a) ``batch.speculative_round`` at B = 64, gamma = 4, V = 32,000 against a straightforward vectorised round that
computes the residual normalize(max(0, p - q)) at every draft position up front and samples a correction
token at each of them, as vLLM's v0 rejection sampler did (``_get_recovered_probs`` over [batch, k, vocab]),
before keeping the one at the first rejection. Both read the same uniforms in the same order, so their outputs
agree token for token (the table reports the share of equal rows as a sanity check). The baseline is shown
with a textbook full-vocabulary cumulative sum, and again with the batch engine's own two-level sampler, so the
two savings (residual only where a rejection happened; no full cumulative sum) can be told apart.

(b) ``batch.simulate`` at V = 16, gamma = 4: emitted tokens per second.

Run alone with ``.venv/bin/python benchmarks/bench_batch.py``; ``benchmarks/run.py`` calls ``main()``.
"""

from __future__ import annotations

import platform
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray

from specdec_core import batch
from specdec_core.batch import simulate, speculative_round

REPEATS = 7
B, GAMMA, VOCAB = 64, 4, 32_000
SIM_VOCAB, SIM_GAMMA, SIM_ROUNDS = 16, 4, 1_000_000
NOISE = 0.5  # standard deviation of the draft's logit noise

Row = dict[str, Any]


def _median_seconds(fn: Callable[[], object], repeats: int = REPEATS) -> float:
    fn()  # warm-up: first-touch page faults and caches are not what we measure
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _softmax(logits: NDArray[np.float64]) -> NDArray[np.float64]:
    z = np.exp(logits - logits.max(axis=-1, keepdims=True))
    out: NDArray[np.float64] = z / z.sum(axis=-1, keepdims=True)
    return out


def make_inputs(dtype: type[np.floating[Any]], seed: int = 0) -> tuple[Any, Any, Any]:
    """Peaked target rows and a draft that is a noisy copy of the target (alpha about 0.8 per position), so
    rounds end in a mix of corrections and bonuses."""
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((B, GAMMA + 1, VOCAB)) * 3.0  # [B, gamma + 1, V]
    target = _softmax(logits).astype(dtype)
    target /= target.sum(axis=-1, keepdims=True)  # renormalise in the working dtype
    noisy = logits[:, :GAMMA] + rng.standard_normal((B, GAMMA, VOCAB)) * NOISE  # [B, gamma, V]
    draft = _softmax(noisy).astype(dtype)
    draft /= draft.sum(axis=-1, keepdims=True)
    cdf = np.cumsum(draft, axis=-1, dtype=np.float64)  # [B, gamma, V]
    u = rng.random((B, GAMMA, 1)) * cdf[..., -1:]
    tokens = np.minimum((cdf <= u).sum(axis=-1), VOCAB - 1)  # [B, gamma], drafted from the draft rows
    return target, draft, tokens


def _full_cumsum_sample(weights: NDArray[Any], u: NDArray[np.float64]) -> NDArray[np.int64]:
    """Textbook inverse CDF over the whole row: first token whose running sum exceeds u * total."""
    cdf = np.cumsum(weights, axis=-1, dtype=np.float64)  # [..., V]
    idx = (cdf <= (u * cdf[..., -1])[..., None]).sum(axis=-1)  # [...]
    return np.minimum(idx, weights.shape[-1] - 1).astype(np.int64)


def _two_level_sample(weights: NDArray[Any], u: NDArray[np.float64]) -> NDArray[np.int64]:
    flat = weights.reshape(-1, weights.shape[-1])
    return batch._sample_rows(flat, u.reshape(-1)).reshape(u.shape)


def baseline_round(
    target_probs: Any,  # [B, gamma + 1, V]
    draft_probs: Any,  # [B, gamma, V]
    draft_tokens: Any,  # [B, gamma]
    rng: np.random.Generator,
    *,
    validate: bool = True,
    sampler: Callable[[NDArray[Any], NDArray[np.float64]], NDArray[np.int64]] = _full_cumsum_sample,
) -> NDArray[np.int64]:
    """Residual at every position up front (the vLLM v0 approach), same uniforms and output as the batch engine."""
    target, draft, tokens = batch._check_round_inputs(target_probs, draft_probs, draft_tokens, validate)
    n, gamma = tokens.shape
    uniforms = rng.random((n, gamma + 1))  # [B, gamma + 1]
    rows, cols = np.arange(n)[:, None], np.arange(gamma)[None, :]
    p_tok = target[rows, cols, tokens]  # [B, gamma]
    q_tok = draft[rows, cols, tokens]  # [B, gamma]
    ok = (uniforms[:, :gamma] * q_tok < p_tok) & (q_tok > 0)  # [B, gamma]
    accepted = np.logical_and.accumulate(ok, axis=1).sum(axis=1)  # [B]
    residual = np.maximum(target[:, :gamma] - draft, 0.0)  # [B, gamma, V] at every position
    mass = residual.sum(axis=-1, keepdims=True)  # [B, gamma, 1]
    residual = np.where(mass > 0, residual / np.where(mass > 0, mass, 1.0), target[:, :gamma])
    recovered = sampler(residual, np.repeat(uniforms[:, gamma : gamma + 1], gamma, axis=1))  # [B, gamma]
    bonus = sampler(target[:, gamma], uniforms[:, gamma])  # [B]
    out = np.full((n, gamma + 1), -1, dtype=np.int64)  # [B, gamma + 1]
    out[:, :gamma] = np.where(cols < accepted[:, None], tokens, -1)
    final = np.where(accepted < gamma, recovered[np.arange(n), np.minimum(accepted, gamma - 1)], bonus)
    out[np.arange(n), accepted] = final
    return out


def run_round_benchmark() -> list[Row]:
    rows: list[Row] = []
    for dtype in (np.float32, np.float64):
        target, draft, tokens = make_inputs(dtype)
        seed = 1
        mine = speculative_round(target, draft, tokens, np.random.default_rng(seed))
        theirs = baseline_round(target, draft, tokens, np.random.default_rng(seed))
        agree = float((mine == theirs).all(axis=1).mean())
        rejected = float(((mine >= 0).sum(axis=1) <= GAMMA).mean())
        alpha = float(np.minimum(target[:, :GAMMA], draft).sum(axis=-1, dtype=np.float64).mean())
        for validate in (True, False):
            args = (target, draft, tokens, np.random.default_rng(seed))
            t_base = _median_seconds(partial(baseline_round, *args, validate=validate))
            t_base2 = _median_seconds(partial(baseline_round, *args, validate=validate, sampler=_two_level_sample))
            t_mine = _median_seconds(partial(speculative_round, *args, validate=validate))
            rows.append(
                {
                    "dtype": np.dtype(dtype).name,
                    "validate": validate,
                    "baseline_ms": t_base * 1e3,
                    "baseline_two_level_ms": t_base2 * 1e3,
                    "batch_ms": t_mine * 1e3,
                    "speedup": t_base / t_mine,
                    "rows_equal": agree,
                    "rows_rejected": rejected,
                    "alpha": alpha,
                }
            )
    return rows


def run_simulate_benchmark() -> Row:
    rng = np.random.default_rng(2)
    p = rng.dirichlet(np.ones(SIM_VOCAB))  # [V]
    q = rng.dirichlet(np.ones(SIM_VOCAB))  # [V]
    alpha = float(np.minimum(p, q).sum())
    counts = simulate(p, q, SIM_GAMMA, SIM_ROUNDS, rng)
    seconds = _median_seconds(lambda: simulate(p, q, SIM_GAMMA, SIM_ROUNDS, rng))
    return {
        "alpha": alpha,
        "rounds": SIM_ROUNDS,
        "emitted": counts.emitted,
        "median_s": seconds,
        "tokens_per_s": counts.emitted / seconds,
        "rounds_per_s": SIM_ROUNDS / seconds,
    }


def run() -> list[Row]:
    """Every measurement as plain rows (the round benchmark rows, then the simulate row)."""
    return [*run_round_benchmark(), run_simulate_benchmark()]


def _table(header: list[str], body: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"]
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in body:
        lines.append("| " + " | ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) + " |")
    return "\n".join(lines)


def main() -> None:
    print(
        f"\n## Batch round, B={B}, gamma={GAMMA}, V={VOCAB:,}: median of {REPEATS} "
        f"(numpy {np.__version__}, CPython {platform.python_version()})\n"
    )
    rounds = run_round_benchmark()
    print(
        _table(
            [
                "dtype",
                "row checks",
                "baseline: residual everywhere",
                "baseline, two-level sampler",
                "batch.speculative_round",
                "speed-up vs baseline",
            ],
            [
                [
                    r["dtype"],
                    "on" if r["validate"] else "off",
                    f"{r['baseline_ms']:.2f} ms",
                    f"{r['baseline_two_level_ms']:.2f} ms",
                    f"{r['batch_ms']:.2f} ms",
                    f"{r['speedup']:.1f}x",
                ]
                for r in rounds
            ],
        )
    )
    shares = {r["dtype"]: (r["rows_equal"], r["rows_rejected"], r["alpha"]) for r in rounds}
    for d, (eq, rej, alpha) in shares.items():
        print(
            f"\n{d}: mean alpha {alpha:.2f}; {rej:.0%} of rounds ended in a correction; {eq:.0%} of rows equal "
            "to the baseline's on the same uniforms",
            end="",
        )
    print()
    sim = run_simulate_benchmark()
    print(f"\n## batch.simulate, V={SIM_VOCAB}, gamma={SIM_GAMMA}, {SIM_ROUNDS:,} rounds: median of {REPEATS}\n")
    print(
        _table(
            ["alpha", "emitted per run", "median time", "rounds/s", "emitted tokens/s"],
            [
                [
                    f"{sim['alpha']:.3f}",
                    f"{sim['emitted']:,}",
                    f"{sim['median_s'] * 1e3:.0f} ms",
                    f"{sim['rounds_per_s'] / 1e6:.2f} M",
                    f"{sim['tokens_per_s'] / 1e6:.2f} M",
                ]
            ],
        )
    )


if __name__ == "__main__":
    main()
