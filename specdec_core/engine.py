"""Generation loops: speculative decoding with a draft-length policy, and the plain autoregressive baseline.

Both return a ``Trace``: the rounds (``steps.Round``), one ``Event`` per token that was drafted or emitted,
and counters. One speculative round is:

1. **draft**   ask the policy for a cap, then draft token by token from the draft model while the policy
               says go on (each token is a *draft step*);
2. **verify**  ONE target pass: the target's rows for every drafted prefix, gamma + 1 of them, the last one
               being the bonus distribution. A real target computes them in parallel; here we call
               ``target.probs`` per prefix and count the lot as one pass;
3. **correct** or **bonus**: ``steps.speculative_round_from_uniforms`` finishes the round.

Randomness. All of it comes from ``rng.random()``, in a fixed order: per draft token, first the uniform that
samples it, then the uniform that will verify it; after drafting, one uniform for the correction or bonus.
Drawing the verify uniform early changes nothing for ordinary policies (the uniforms are independent) and lets
the oracle policy peek at the verdict. Seeded runs are therefore reproducible, and a test can enumerate runs
exactly by feeding chosen uniforms.

Stopping and truncation. Generation stops after ``max_tokens`` emitted tokens or right after the pair's end
token. The last round may produce tokens beyond that point; they are dropped, keep their event with
``emitted=False``, and are counted in ``truncated`` rather than in accepted / corrections / bonuses. So, always:

    emitted == accepted + corrections + bonuses == len(tokens)
    emitted + truncated == total tokens the rounds produced
    drafted == draft_steps == accepted drafts (kept or truncated) + rejected + discarded

Non-goals: batching (``batch.py``), wall-clock timing (``benchmarks/``), KV caches.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from .distributions import check_gamma, sample, validate_probs
from .models import ModelPair
from .policies import DraftPolicy
from .steps import Round, speculative_round_from_uniforms, verify

__all__ = [
    "Counters",
    "Event",
    "EventKind",
    "Trace",
    "generate_autoregressive",
    "generate_speculative",
]

EventKind = Literal["accepted", "rejected", "discarded", "correction", "bonus", "plain"]


@dataclass(frozen=True)
class Event:
    """One token's fate.

    ``position`` is the index in the generated sequence the token was proposed for (a rejected token and the
    correction that replaces it share a position). ``round`` is the round index (-1 for autoregressive
    tokens). ``emitted`` is False for rejected and discarded tokens and for tokens cut by truncation.
    """

    position: int
    token: int
    word: str
    kind: EventKind
    round: int
    emitted: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Counters:
    """Totals over a generation; see the module docstring for the identities they satisfy."""

    target_passes: int = 0
    draft_steps: int = 0
    drafted: int = 0
    accepted: int = 0
    rejected: int = 0
    discarded: int = 0
    corrections: int = 0
    bonuses: int = 0
    emitted: int = 0
    truncated: int = 0

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class Trace:
    """Everything a generation did. ``stopped`` says why it ended: the token ``budget`` or the ``end`` token."""

    mode: Literal["speculative", "autoregressive"]
    policy: str
    tokens: list[int] = field(default_factory=list)
    text: str = ""
    rounds: list[Round] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    counters: Counters = field(default_factory=Counters)
    stopped: Literal["budget", "end"] = "budget"

    @property
    def tokens_per_pass(self) -> float:
        """Emitted tokens per target pass (1.0 for autoregressive decoding; 0.0 before any pass)."""
        passes = self.counters.target_passes
        return self.counters.emitted / passes if passes else 0.0

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-safe data: lists, dicts, strings, ints and finite floats (a non-finite float becomes None)."""
        data = {
            "mode": self.mode,
            "policy": self.policy,
            "tokens": list(self.tokens),
            "text": self.text,
            "stopped": self.stopped,
            "tokens_per_pass": self.tokens_per_pass,
            "counters": self.counters.to_dict(),
            "rounds": [r.to_dict() for r in self.rounds],
            "events": [e.to_dict() for e in self.events],
        }
        safe: dict[str, Any] = _json_safe(data)
        return safe


def _json_safe(value: Any) -> Any:
    # A ratio p/q overflows to inf only if q(x) is subnormal, but JSON must never carry it.
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def _check_args(pair: ModelPair, max_tokens: int, rng: random.Random, context: Sequence[int]) -> list[int]:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise TypeError(f"max_tokens must be an int, got {type(max_tokens).__name__}")
    if max_tokens < 0:
        raise ValueError(f"max_tokens must be >= 0 (got {max_tokens})")
    if not isinstance(rng, random.Random):
        raise TypeError(f"rng must be a random.Random, got {type(rng).__name__}")
    size = len(pair.vocab)
    if size == 0:
        raise ValueError("vocab must not be empty")
    out: list[int] = []
    for i, token in enumerate(context):
        if isinstance(token, bool) or not isinstance(token, int):
            raise TypeError(f"context[{i}] must be an int, got {type(token).__name__}")
        if not 0 <= token < size:
            raise ValueError(f"context[{i}] must be a token id in 0..{size - 1} (got {token})")
        out.append(token)
    return out


class _Output:
    """The emitted sequence under construction, applying the budget and the end token."""

    def __init__(self, pair: ModelPair, max_tokens: int, trace: Trace) -> None:
        self.pair = pair
        self.max_tokens = max_tokens
        self.trace = trace
        self.done = max_tokens == 0

    def offer(self, token: int, kind: EventKind, round_index: int, position: int) -> None:
        """Emit ``token`` at ``position`` unless generation is already over: then it is truncated."""
        trace, counters = self.trace, self.trace.counters
        if self.done:
            counters.truncated += 1
            trace.events.append(Event(position, token, self.pair.vocab[token], kind, round_index, False))
            return
        trace.tokens.append(token)
        trace.events.append(Event(position, token, self.pair.vocab[token], kind, round_index, True))
        counters.emitted += 1
        if kind == "accepted":
            counters.accepted += 1
        elif kind == "correction":
            counters.corrections += 1
        elif kind == "bonus":
            counters.bonuses += 1
        if token == self.pair.end_token:
            self.done = True
            trace.stopped = "end"
        elif len(trace.tokens) >= self.max_tokens:
            self.done = True

    def note(self, token: int, kind: EventKind, round_index: int, position: int) -> None:
        """Record a token that was drafted but never emitted (rejected or discarded)."""
        self.trace.events.append(Event(position, token, self.pair.vocab[token], kind, round_index, False))


def generate_autoregressive(
    pair: ModelPair, *, max_tokens: int, rng: random.Random, context: Sequence[int] = ()
) -> Trace:
    """Plain sampling from the target, one target pass per token: the baseline and the reference.

    >>> from specdec_core.models import quality_pair
    >>> trace = generate_autoregressive(quality_pair(0.5), max_tokens=5, rng=random.Random(1))
    >>> trace.counters.target_passes, trace.counters.emitted, trace.events[0].kind
    (5, 5, 'plain')
    """
    prefix = _check_args(pair, max_tokens, rng, context)
    trace = Trace("autoregressive", "none")
    out = _Output(pair, max_tokens, trace)
    while not out.done:
        p = validate_probs(pair.target.probs(prefix + trace.tokens), "target.probs output")
        trace.counters.target_passes += 1
        out.offer(sample(p, rng.random()), "plain", -1, len(trace.tokens))
    trace.text = _text(pair, trace.tokens)
    return trace


def generate_speculative(
    pair: ModelPair,
    policy: DraftPolicy,
    *,
    max_tokens: int,
    rng: random.Random,
    context: Sequence[int] = (),
) -> Trace:
    """Speculative decoding of up to ``max_tokens`` tokens, the draft length chosen by ``policy``.

    >>> from specdec_core.models import quality_pair
    >>> from specdec_core.policies import FixedPolicy
    >>> trace = generate_speculative(quality_pair(1.0), FixedPolicy(3), max_tokens=8, rng=random.Random(0))
    >>> [r.accepted for r in trace.rounds], trace.counters.emitted, trace.counters.truncated
    ([3, 3], 8, 0)
    """
    prefix = _check_args(pair, max_tokens, rng, context)
    trace = Trace("speculative", policy.name)
    out = _Output(pair, max_tokens, trace)
    counters = trace.counters
    while not out.done:
        round_index = len(trace.rounds)
        start = prefix + trace.tokens
        cap = check_gamma(policy.start_round(), f"{policy.name}: start_round()")

        # Step 1: draft, token by token, while the policy agrees. Each token's verify uniform is drawn with it.
        drafts: list[int] = []
        q_rows: list[list[float]] = []
        uniforms: list[float] = []
        for i in range(cap):
            # Not validated here: the round validates every row once, and it is the costly part in the browser.
            q = list(pair.draft.probs(start + drafts))
            token = sample(q, rng.random())
            u = rng.random()
            drafts.append(token)
            q_rows.append(q)
            uniforms.append(u)
            counters.draft_steps += 1
            will_accept: bool | None = None
            if policy.peeks:
                # The oracle's look into the future: not a target pass of the algorithm, so not counted.
                will_accept = verify(pair.target.probs(start + drafts[:-1]), q, token, u)
            if not policy.keep_drafting(i, q, will_accept):
                break
        counters.drafted += len(drafts)

        # --8<-- [start:target_pass]
        # Step 2: one target pass scores every prefix: rows for draft positions 0..gamma-1, then the bonus row.
        p_rows = [pair.target.probs(start + drafts[:j]) for j in range(len(drafts) + 1)]  # [gamma + 1][V]
        counters.target_passes += 1
        # --8<-- [end:target_pass]

        # Steps 2-4: verify left to right, then correct or bonus, with the uniforms drawn above.
        round_ = speculative_round_from_uniforms(p_rows, q_rows, drafts, [*uniforms, rng.random()])
        trace.rounds.append(round_)
        base = len(trace.tokens)
        for pos in round_.positions:
            if pos.outcome == "accepted":
                out.offer(pos.token, "accepted", round_index, base + pos.index)
            elif pos.outcome == "rejected":
                counters.rejected += 1
                out.note(pos.token, "rejected", round_index, base + pos.index)
            else:
                counters.discarded += 1
                out.note(pos.token, "discarded", round_index, base + pos.index)
        out.offer(round_.final_token, round_.ended_with, round_index, base + round_.accepted)
        policy.after_round(round_.accepted, round_.gamma)
    trace.text = _text(pair, trace.tokens)
    return trace


def _text(pair: ModelPair, tokens: list[int]) -> str:
    decode = getattr(pair, "decode", None)
    if callable(decode):
        return str(decode(tokens))
    return " ".join(pair.vocab[t] for t in tokens)
