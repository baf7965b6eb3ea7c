"""Generation loops: speculative decoding with a draft-length policy, and the plain autoregressive baseline.

Both produce a ``Trace``: the rounds (``steps.Round``), one ``Event`` per token that was drafted or emitted,
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

Budget and truncation. Generation stops after ``max_tokens`` emitted tokens or right after the pair's end
token. A round emits its accepted drafts plus one correction or bonus token, so with n tokens left in the
budget it drafts at most n - 1 (the policy's cap is lowered to that, and the policy hears the real count): no
draft step and no target pass is spent on a token past the budget. transformers' assisted generation caps its
drafts the same way (``max_length - current length - 1`` in ``AssistedCandidateGenerator._calculate_new_tokens``).
The cap depends only on how many tokens are already out, a decision from the past like any policy's, so the
output stays exact. A round can still produce tokens after an end token: they are dropped, keep their event
with ``emitted=False``, and are counted in ``truncated`` rather than in accepted / corrections / bonuses. So,
always:

    emitted == accepted + corrections + bonuses == len(tokens)
    emitted + truncated == total tokens the rounds produced
    truncated == 0 unless an end token was emitted
    drafted == draft_steps == accepted drafts (kept or truncated) + rejected + discarded

With ``restart_at_end=True`` an end token closes a paragraph instead of the run: the rest of that round is
truncated and generation goes on from an empty context until the budget is spent (``stopped`` stays "budget").

Resumable runs. ``SpeculativeRun`` and ``AutoregressiveRun`` hold a generation in progress. ``advance(n)`` runs
whole rounds until at least n more tokens are out or the run is done, so a page can stream a long generation in
chunks and get exactly the trace that one call gives (``generate_speculative`` is ``advance(max_tokens)`` on a
fresh run). ``snapshot()`` returns the run's state as JSON-safe data and ``restore(pair, snapshot)`` rebuilds
it, so a handler that keeps no state between calls can carry a run across them. What a snapshot holds, and so
its size: the random generator's state (625 ints, about 7 kB of JSON), the policy's ``to_dict()`` (a few
numbers), the ten counters of the whole run, the budget, and the context the models will be conditioned on:
at most ``window`` tokens when a window is set, otherwise the current paragraph so far (at most
len(context) + max_tokens tokens). It never holds events, rounds or text: a restored run's trace starts empty
and records only what it runs from then on, with the positions and round indices of the whole run, and its
``totals`` add the saved counters to the trace's own. A run's memory is its trace since it was made or restored.

Other drafters and rules. ``SpeculativeRun(..., drafter=d)`` takes each draft's row q from ``d.row(context,
drafts)`` instead of ``pair.draft`` (None ends the round's drafting), and ``rule=`` replaces the exact verification
(``steps.speculative_round_from_uniforms``) with another function of the same shape; ``drafters.py`` holds prompt
lookup, independent heads and Medusa's lossy typical acceptance. Without them a run is exactly what it was.

Non-goals: batching (``batch.py``), wall-clock timing (``benchmarks/``), KV caches.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar, Literal, Protocol

from .distributions import check_gamma, sample, validate_probs
from .models import ModelPair
from .policies import DraftPolicy, make_policy
from .steps import Round, speculative_round_from_uniforms, verify


class Drafter(Protocol):
    """Where a run's drafts come from, when not from ``pair.draft`` (see ``drafters.py``).

    ``row(context, drafts)`` is the distribution q the next draft token is sampled from, given the run's context
    and this round's drafts so far, or None to stop drafting this round. Exactness holds for any such q, as long
    as the token really is drawn from it, which the engine does.
    """

    def row(self, context: Sequence[int], drafts: Sequence[int]) -> list[float] | None: ...


#: How a round is verified: (target rows [gamma + 1][V], draft rows [gamma][V], drafts [gamma], uniforms
#: [gamma + 1]) -> Round. The default, ``steps.speculative_round_from_uniforms``, is the exact rule.
RoundRule = Callable[[Sequence[Sequence[float]], Sequence[Sequence[float]], Sequence[int], Sequence[float]], Round]

__all__ = [
    "AutoregressiveRun",
    "Counters",
    "Drafter",
    "Event",
    "EventKind",
    "RoundRule",
    "SpeculativeRun",
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

    def __add__(self, other: Counters) -> Counters:
        return Counters(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})


_COUNTER_NAMES = tuple(f.name for f in fields(Counters))


@dataclass
class Trace:
    """Everything a generation did. ``stopped`` says why it ended: the token ``budget`` or the ``end`` token."""

    mode: Literal["speculative", "autoregressive"]
    policy: str
    tokens: list[int] = field(default_factory=list)
    rounds: list[Round] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    counters: Counters = field(default_factory=Counters)
    stopped: Literal["budget", "end"] = "budget"
    #: Turns tokens into text; set by the run. Decoding waits until ``text`` is read, so a run advanced one round
    #: at a time does not re-decode its whole output after every round.
    decoder: Callable[[Sequence[int]], str] | None = field(default=None, repr=False, compare=False)

    @property
    def text(self) -> str:
        """The emitted tokens as text (the pair's ``decode``, or its vocabulary joined by spaces)."""
        return self.decoder(self.tokens) if self.decoder is not None else ""

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


def _check_count(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0 (got {value})")
    return value


def _check_tokens(pair: ModelPair, tokens: Sequence[int], name: str) -> list[int]:
    size = len(pair.vocab)
    if size == 0:
        raise ValueError("vocab must not be empty")
    out: list[int] = []
    for i, token in enumerate(tokens):
        if isinstance(token, bool) or not isinstance(token, int):
            raise TypeError(f"{name}[{i}] must be an int, got {type(token).__name__}")
        if not 0 <= token < size:
            raise ValueError(f"{name}[{i}] must be a token id in 0..{size - 1} (got {token})")
        out.append(token)
    return out


class _Run:
    """What both runs share: the budget, the end token, the models' context, the counters, the random stream."""

    mode: ClassVar[Literal["speculative", "autoregressive"]]

    def __init__(
        self,
        pair: ModelPair,
        policy_name: str,
        *,
        max_tokens: int,
        rng: random.Random,
        context: Sequence[int],
        window: int | None,
        restart_at_end: bool,
    ) -> None:
        self.max_tokens = _check_count(max_tokens, "max_tokens")
        if not isinstance(rng, random.Random):
            raise TypeError(f"rng must be a random.Random, got {type(rng).__name__}")
        self.window = None if window is None else _check_count(window, "window")
        if not isinstance(restart_at_end, bool):
            raise TypeError(f"restart_at_end must be a bool, got {type(restart_at_end).__name__}")
        self.pair = pair
        self.rng = rng
        self.restart_at_end = restart_at_end
        self.trace = Trace(self.mode, policy_name, decoder=_decoder(pair))
        self._context = _check_tokens(pair, context, "context")  # what the models are conditioned on
        self._trim()
        self._saved = Counters()  # the run's counters before the snapshot it was restored from
        self._done = self.max_tokens == 0
        self._closed = self._done  # the current round emits nothing more: budget spent or end token out

    @property
    def done(self) -> bool:
        """True once the budget is spent, or the end token is out (unless ``restart_at_end``)."""
        return self._done

    @property
    def emitted(self) -> int:
        """Tokens emitted over the whole run, including before a restore."""
        return self._saved.emitted + self.trace.counters.emitted

    @property
    def totals(self) -> Counters:
        """The whole run's counters: those saved in the snapshot it was restored from plus the trace's own."""
        return self._saved + self.trace.counters

    def advance(self, n: int) -> int:
        """Run whole rounds until at least ``n`` more tokens are emitted or the run is done; return how many."""
        _check_count(n, "n")
        start = self.emitted
        while not self._done and self.emitted - start < n:
            self._closed = False
            self._step()
        return self.emitted - start

    def _step(self) -> None:
        raise NotImplementedError

    def _trim(self) -> None:
        if self.window is not None and len(self._context) > self.window:
            del self._context[: len(self._context) - self.window]

    def _offer(self, token: int, kind: EventKind, round_index: int, position: int) -> None:
        """Emit ``token`` at ``position`` unless the round is closed: then it is truncated."""
        trace, counters = self.trace, self.trace.counters
        kept = not self._closed
        trace.events.append(Event(position, token, self.pair.vocab[token], kind, round_index, kept))
        if not kept:
            counters.truncated += 1
            return
        trace.tokens.append(token)
        counters.emitted += 1
        if kind == "accepted":
            counters.accepted += 1
        elif kind == "correction":
            counters.corrections += 1
        elif kind == "bonus":
            counters.bonuses += 1
        self._context.append(token)
        self._trim()
        if token == self.pair.end_token:
            self._closed = True
            if self.restart_at_end:
                self._context.clear()  # a fresh paragraph: the models see an empty context again
            else:
                self._done = True
                trace.stopped = "end"
        if self.emitted >= self.max_tokens:
            self._closed = self._done = True

    def _note(self, token: int, kind: EventKind, round_index: int, position: int) -> None:
        """Record a token that was drafted but never emitted (rejected or discarded)."""
        self.trace.events.append(Event(position, token, self.pair.vocab[token], kind, round_index, False))

    def _state(self) -> dict[str, Any]:
        version, internal, gauss = self.rng.getstate()
        return {
            "format": _SNAPSHOT_FORMAT,
            "mode": self.mode,
            "max_tokens": self.max_tokens,
            "window": self.window,
            "restart_at_end": self.restart_at_end,
            "context": list(self._context),
            "done": self._done,
            "stopped": self.trace.stopped,
            "counters": self.totals.to_dict(),
            "rng": [version, list(internal), gauss],
        }

    def _resume(self, saved: _Saved) -> None:
        self._saved = saved.counters
        self._done = saved.done or self.emitted >= self.max_tokens
        self._closed = self._done
        self.trace.stopped = saved.stopped


class SpeculativeRun(_Run):
    """A speculative generation in progress: advance it in chunks, save it with ``snapshot``, rebuild it.

    >>> import json
    >>> from specdec_core.models import quality_pair
    >>> from specdec_core.policies import make_policy
    >>> pair = quality_pair(0.8)
    >>> run = SpeculativeRun(pair, make_policy("dynamic", gamma=3), max_tokens=60, rng=random.Random(0))
    >>> first = run.advance(25)  # whole rounds, until at least 25 tokens are out
    >>> first >= 25, run.done
    (True, False)
    >>> saved = json.dumps(run.snapshot())  # about 8 kB, whatever the run's length
    >>> rest = SpeculativeRun.restore(pair, json.loads(saved))
    >>> first + rest.advance(100), rest.done, rest.totals.emitted, len(rest.trace.tokens) == 60 - first
    (60, True, 60, True)
    """

    mode = "speculative"

    def __init__(
        self,
        pair: ModelPair,
        policy: DraftPolicy,
        *,
        max_tokens: int,
        rng: random.Random,
        context: Sequence[int] = (),
        window: int | None = None,
        restart_at_end: bool = False,
        drafter: Drafter | None = None,
        rule: RoundRule | None = None,
    ) -> None:
        if drafter is not None and not callable(getattr(drafter, "row", None)):
            raise TypeError(f"drafter must have a row(context, drafts) method, got {type(drafter).__name__}")
        if rule is not None and not callable(rule):
            raise TypeError(f"rule must be callable, got {type(rule).__name__}")
        self.drafter = drafter
        self.rule: RoundRule = rule if rule is not None else speculative_round_from_uniforms
        super().__init__(
            pair,
            policy.name,
            max_tokens=max_tokens,
            rng=rng,
            context=context,
            window=window,
            restart_at_end=restart_at_end,
        )
        self.policy = policy

    def _step(self) -> None:
        pair, policy, counters = self.pair, self.policy, self.trace.counters
        round_index = self._saved.target_passes + counters.target_passes
        start = list(self._context)
        # n tokens left allow n - 1 drafts plus the correction or bonus: nothing is drafted past the budget.
        cap = min(
            check_gamma(policy.start_round(), f"{policy.name}: start_round()"), self.max_tokens - self.emitted - 1
        )
        drafts, q_rows, uniforms = self._draft(start, cap)

        # --8<-- [start:target_pass]
        # Step 2: one target pass scores every prefix: rows for draft positions 0..gamma-1, then the bonus row.
        p_rows = [pair.target.probs(start + drafts[:j]) for j in range(len(drafts) + 1)]  # [gamma + 1][V]
        counters.target_passes += 1
        # --8<-- [end:target_pass]

        # Steps 2-4: verify left to right, then correct or bonus, with the uniforms drawn while drafting.
        round_ = self.rule(p_rows, q_rows, drafts, [*uniforms, self.rng.random()])
        self.trace.rounds.append(round_)
        base = self.emitted
        for pos in round_.positions:
            if pos.outcome == "accepted":
                self._offer(pos.token, "accepted", round_index, base + pos.index)
            elif pos.outcome == "rejected":
                counters.rejected += 1
                self._note(pos.token, "rejected", round_index, base + pos.index)
            else:
                counters.discarded += 1
                self._note(pos.token, "discarded", round_index, base + pos.index)
        self._offer(round_.final_token, round_.ended_with, round_index, base + round_.accepted)
        policy.after_round(round_.accepted, round_.gamma)

    def _draft(self, start: list[int], cap: int) -> tuple[list[int], list[list[float]], list[float]]:
        """Step 1: draft up to ``cap`` tokens while the policy agrees; each token's verify uniform comes with it."""
        pair, policy, counters = self.pair, self.policy, self.trace.counters
        drafts: list[int] = []
        q_rows: list[list[float]] = []  # [gamma][V]
        uniforms: list[float] = []  # [gamma]
        for i in range(cap):
            # Not validated here: the round validates every row once, and it is the costly part in the browser.
            row = pair.draft.probs(start + drafts) if self.drafter is None else self.drafter.row(start, drafts)
            if row is None:
                break  # the drafter has nothing (more) to propose this round
            q = list(row)
            token = sample(q, self.rng.random())
            u = self.rng.random()
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
        return drafts, q_rows, uniforms

    def snapshot(self) -> dict[str, Any]:
        """The run's state as JSON-safe data (see the module docstring for what it holds and its size)."""
        to_dict = getattr(self.policy, "to_dict", None)
        if not callable(to_dict):
            raise TypeError(f"policy {self.policy.name!r} has no to_dict(), so a snapshot could not rebuild it")
        return {**self._state(), "policy": to_dict()}

    @classmethod
    def restore(
        cls,
        pair: ModelPair,
        snapshot: dict[str, Any],
        *,
        drafter: Drafter | None = None,
        rule: RoundRule | None = None,
    ) -> SpeculativeRun:
        """Rebuild a run from ``snapshot()``'s data and the same ``pair``: it continues exactly where it was.

        A snapshot does not hold the drafter or the rule (they are code): pass the same ones again.
        """
        saved = _read_snapshot(pair, snapshot, cls.mode)
        policy = _read_policy(snapshot.get("policy"))
        run = cls(
            pair,
            policy,
            max_tokens=saved.max_tokens,
            rng=saved.rng,
            context=saved.context,
            window=saved.window,
            restart_at_end=saved.restart_at_end,
            drafter=drafter,
            rule=rule,
        )
        run._resume(saved)
        return run


class AutoregressiveRun(_Run):
    """Plain sampling from the target in progress: the same ``advance`` / ``snapshot`` / ``restore`` as above."""

    mode = "autoregressive"

    def __init__(
        self,
        pair: ModelPair,
        *,
        max_tokens: int,
        rng: random.Random,
        context: Sequence[int] = (),
        window: int | None = None,
        restart_at_end: bool = False,
    ) -> None:
        super().__init__(
            pair,
            "none",
            max_tokens=max_tokens,
            rng=rng,
            context=context,
            window=window,
            restart_at_end=restart_at_end,
        )

    def _step(self) -> None:
        p = validate_probs(self.pair.target.probs(self._context), "target.probs output")
        self.trace.counters.target_passes += 1
        self._offer(sample(p, self.rng.random()), "plain", -1, self.emitted)

    def snapshot(self) -> dict[str, Any]:
        """The run's state as JSON-safe data (as ``SpeculativeRun.snapshot``, without a policy)."""
        return self._state()

    @classmethod
    def restore(cls, pair: ModelPair, snapshot: dict[str, Any]) -> AutoregressiveRun:
        """Rebuild a run from ``snapshot()``'s data and the same ``pair``."""
        saved = _read_snapshot(pair, snapshot, cls.mode)
        run = cls(
            pair,
            max_tokens=saved.max_tokens,
            rng=saved.rng,
            context=saved.context,
            window=saved.window,
            restart_at_end=saved.restart_at_end,
        )
        run._resume(saved)
        return run


def generate_autoregressive(
    pair: ModelPair, *, max_tokens: int, rng: random.Random, context: Sequence[int] = ()
) -> Trace:
    """Plain sampling from the target, one target pass per token: the baseline and the reference.

    >>> from specdec_core.models import quality_pair
    >>> trace = generate_autoregressive(quality_pair(0.5), max_tokens=5, rng=random.Random(1))
    >>> trace.counters.target_passes, trace.counters.emitted, trace.events[0].kind
    (5, 5, 'plain')
    """
    run = AutoregressiveRun(pair, max_tokens=max_tokens, rng=rng, context=context)
    run.advance(max_tokens)
    return run.trace


def generate_speculative(
    pair: ModelPair,
    policy: DraftPolicy,
    *,
    max_tokens: int,
    rng: random.Random,
    context: Sequence[int] = (),
    drafter: Drafter | None = None,
    rule: RoundRule | None = None,
) -> Trace:
    """Speculative decoding of up to ``max_tokens`` tokens, the draft length chosen by ``policy``.

    ``drafter`` replaces ``pair.draft`` as the source of drafts, ``rule`` the exact verification (see
    ``drafters.py``); both default to the plain algorithm.

    >>> from specdec_core.models import quality_pair
    >>> from specdec_core.policies import FixedPolicy
    >>> trace = generate_speculative(quality_pair(1.0), FixedPolicy(3), max_tokens=8, rng=random.Random(0))
    >>> [r.accepted for r in trace.rounds], trace.counters.emitted, trace.counters.truncated
    ([3, 3], 8, 0)
    """
    run = SpeculativeRun(pair, policy, max_tokens=max_tokens, rng=rng, context=context, drafter=drafter, rule=rule)
    run.advance(max_tokens)
    return run.trace


def _decoder(pair: ModelPair) -> Callable[[Sequence[int]], str]:
    decode = getattr(pair, "decode", None)
    if callable(decode):
        return lambda tokens: str(decode(tokens))
    return lambda tokens: " ".join(pair.vocab[t] for t in tokens)


# Snapshots -------------------------------------------------------------------------------------------------------

_SNAPSHOT_FORMAT = "specdec_core.engine.run/1"
_POLICY_KEYS = frozenset({"name", "gamma", "tau", "max_gamma", "state"})


@dataclass(frozen=True)
class _Saved:
    """A snapshot, checked and decoded."""

    max_tokens: int
    window: int | None
    restart_at_end: bool
    context: list[int]
    done: bool
    stopped: Literal["budget", "end"]
    counters: Counters
    rng: random.Random


def _read_snapshot(pair: ModelPair, snapshot: object, mode: str) -> _Saved:
    if not isinstance(snapshot, dict):
        raise TypeError(f"snapshot must be a dict, got {type(snapshot).__name__}")
    expected = {"format", "mode", "max_tokens", "window", "restart_at_end", "context", "done", "stopped"}
    expected |= {"counters", "rng"} | ({"policy"} if mode == "speculative" else set())
    missing, extra = sorted(expected - set(snapshot)), sorted(set(snapshot) - expected)
    if missing or extra:
        raise ValueError(f"snapshot must have the keys of a {mode} run (missing {missing}, unknown {extra})")
    if snapshot["format"] != _SNAPSHOT_FORMAT or snapshot["mode"] != mode:
        raise ValueError(
            f"snapshot['format'] and snapshot['mode'] must be {_SNAPSHOT_FORMAT!r} and {mode!r} "
            f"(got {snapshot['format']!r} and {snapshot['mode']!r})"
        )
    max_tokens = _check_count(snapshot["max_tokens"], "snapshot['max_tokens']")
    window = snapshot["window"]
    if window is not None:
        window = _check_count(window, "snapshot['window']")
    for key in ("restart_at_end", "done"):
        if not isinstance(snapshot[key], bool):
            raise TypeError(f"snapshot[{key!r}] must be a bool, got {type(snapshot[key]).__name__}")
    if snapshot["stopped"] not in ("budget", "end"):
        raise ValueError(f"snapshot['stopped'] must be 'budget' or 'end' (got {snapshot['stopped']!r})")
    if not isinstance(snapshot["context"], list):
        raise TypeError(f"snapshot['context'] must be a list, got {type(snapshot['context']).__name__}")
    counters = _read_counters(snapshot["counters"])
    # The identities of the module docstring hold for every honest speculative run; a snapshot that breaks one
    # was altered (plain decoding emits tokens of its own kind and drafts nothing).
    c = counters
    if mode == "speculative" and (c.emitted != c.accepted + c.corrections + c.bonuses or c.drafted != c.draft_steps):
        raise ValueError("snapshot['counters'] do not add up: emitted must be accepted + corrections + bonuses")
    if counters.emitted > max_tokens:
        raise ValueError(f"snapshot['counters']['emitted'] must be <= max_tokens = {max_tokens}")
    return _Saved(
        max_tokens=max_tokens,
        window=window,
        restart_at_end=snapshot["restart_at_end"],
        context=_check_tokens(pair, snapshot["context"], "snapshot['context']"),
        done=snapshot["done"],
        stopped=snapshot["stopped"],
        counters=counters,
        rng=_read_rng(snapshot["rng"]),
    )


def _read_counters(value: object) -> Counters:
    if not isinstance(value, dict):
        raise TypeError(f"snapshot['counters'] must be a dict, got {type(value).__name__}")
    if set(value) != set(_COUNTER_NAMES):
        raise ValueError(f"snapshot['counters'] must have exactly the keys {list(_COUNTER_NAMES)}")
    return Counters(**{k: _check_count(value[k], f"snapshot['counters'][{k!r}]") for k in _COUNTER_NAMES})


def _read_rng(value: object) -> random.Random:
    if not isinstance(value, list | tuple) or len(value) != 3:
        raise TypeError("snapshot['rng'] must be a list [version, internal state, gauss_next]")
    version, internal, gauss = value
    if not isinstance(internal, list | tuple) or any(isinstance(x, bool) or not isinstance(x, int) for x in internal):
        raise TypeError("snapshot['rng'][1] must be a list of ints")
    rng = random.Random(0)
    try:
        rng.setstate((version, tuple(internal), gauss))
    except (TypeError, ValueError, OverflowError) as exc:  # OverflowError: a word past 32 bits
        raise ValueError(f"snapshot['rng'] is not the state of a random.Random: {exc}") from None
    return rng


def _read_policy(value: object) -> DraftPolicy:
    if not isinstance(value, dict):
        raise TypeError(f"snapshot['policy'] must be a dict, got {type(value).__name__}")
    unknown = sorted(set(value) - _POLICY_KEYS)
    if unknown or "name" not in value:
        raise ValueError(f"snapshot['policy'] must have a name and only the keys {sorted(_POLICY_KEYS)}")
    return make_policy(**value)
