"""Draft-length policies: how many tokens to draft in the next round.

The engine asks a policy three things, always in this order:

1. ``start_round() -> int``: the most tokens this round may draft (the cap, 0..64). The engine lowers it further
   when the token budget is nearly spent (see ``engine``), and the policy hears the real count in step 3;
2. after each draft token, ``keep_drafting(position, q_row, will_accept) -> bool``: draft another one?
   ``position`` is the 0-based index of the token just drafted and ``q_row`` the draft distribution it came
   from. ``will_accept`` is None, except for a policy with ``peeks = True`` (only the oracle), which is told
   whether the verifier is going to accept that token;
3. ``after_round(accepted, drafted)``: what the round did, so an adaptive policy can adjust.

Policies:

- ``FixedPolicy(gamma)``: always gamma tokens (Leviathan et al. 2023 use a fixed gamma).
- ``ConfidencePolicy(tau)``: stop once the draft is unsure, its top probability below tau.
- ``DynamicPolicy()``: +2 after a round in which every draft was accepted, -1 otherwise, never below 1. This
  is the "heuristic" schedule of Hugging Face transformers' assisted generation
  (``num_assistant_tokens_schedule="heuristic"``; see ``AssistedCandidateGenerator.update_candidate_strategy``
  in transformers' ``generation/candidate_generator.py``). Its starting length of 5 is the
  ``num_assistant_tokens`` that transformers 4.30 wrote into generation configs together with that schedule.
  In transformers 5.x (5.0 to 5.5 checked) the defaults are different: ``num_assistant_tokens=20``,
  ``num_assistant_tokens_schedule="constant"`` and ``assistant_confidence_threshold=0.4``, so the heuristic
  schedule is opt-in there.
- ``OraclePolicy(max_gamma)``: drafts exactly up to the first token the verifier rejects. It knows the future,
  so no real system can run it; it is the upper bound that any adaptive rule is measured against.

``make_policy(name, ...)`` builds any of them by the name the Tuning page uses, and rebuilds one from the
``to_dict()`` a resumable run stores in its snapshot (``engine.SpeculativeRun.snapshot``).

Every policy here keeps the output exactly distributed as the target. The non-peeking ones decide from draft
tokens alone, which the proof of exactness allows. The oracle is argued in ``OraclePolicy``.

Non-goals: learned draft-length predictors, tree drafts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from .distributions import MAX_GAMMA, check_gamma

__all__ = [
    "POLICY_NAMES",
    "ConfidencePolicy",
    "DraftPolicy",
    "DynamicPolicy",
    "FixedPolicy",
    "OraclePolicy",
    "ResumablePolicy",
    "make_policy",
]

#: The names ``make_policy`` accepts, in the order the Tuning page shows them.
POLICY_NAMES = ("fixed", "confidence", "dynamic", "oracle")


class DraftPolicy(Protocol):
    """What the engine needs from a policy (see the module docstring for the call order)."""

    name: str
    peeks: bool

    def start_round(self) -> int: ...

    def keep_drafting(self, position: int, q_row: Sequence[float], will_accept: bool | None) -> bool: ...

    def after_round(self, accepted: int, drafted: int) -> None: ...


class ResumablePolicy(DraftPolicy, Protocol):
    """A policy that can be saved: ``make_policy(**policy.to_dict())`` rebuilds it, state included."""

    def to_dict(self) -> dict[str, Any]: ...


def _check_round_report(accepted: int, drafted: int) -> None:
    check_gamma(drafted, "drafted")
    if isinstance(accepted, bool) or not isinstance(accepted, int):
        raise TypeError(f"accepted must be an int, got {type(accepted).__name__}")
    if not 0 <= accepted <= drafted:
        raise ValueError(f"accepted must be between 0 and drafted = {drafted} (got {accepted})")


def _check_tau(tau: object) -> float:
    if isinstance(tau, bool) or not isinstance(tau, int | float):
        raise TypeError(f"tau must be a number, got {type(tau).__name__}")
    if not 0.0 <= tau <= 1.0:  # also refuses NaN
        raise ValueError(f"tau must be between 0 and 1 (got {tau!r})")
    return float(tau)


def _check_cap(max_gamma: object) -> int:
    cap = check_gamma(max_gamma, "max_gamma")
    if cap < 1:
        raise ValueError(f"max_gamma must be between 1 and {MAX_GAMMA} (got 0)")
    return cap


class FixedPolicy:
    """Draft ``gamma`` tokens every round (0 makes every round a plain target step).

    >>> policy = FixedPolicy(4)
    >>> policy.start_round(), policy.keep_drafting(0, [1.0], None)
    (4, True)
    """

    peeks = False

    def __init__(self, gamma: int) -> None:
        self.gamma = check_gamma(gamma)
        self.name = f"fixed gamma={gamma}"

    def start_round(self) -> int:
        return self.gamma

    def keep_drafting(self, position: int, q_row: Sequence[float], will_accept: bool | None) -> bool:
        return True

    def after_round(self, accepted: int, drafted: int) -> None:
        _check_round_report(accepted, drafted)

    def to_dict(self) -> dict[str, Any]:
        return {"name": "fixed", "gamma": self.gamma}


class ConfidencePolicy:
    """Keep drafting while the draft is confident: stop after a token whose row has max q below ``tau``.

    Design choice: the check runs *after* a token is drafted, and that token is kept, so every round drafts at
    least one token. A low top probability says the draft is guessing at this position; the guess may still
    be accepted, and drafting it costs one cheap draft step, but drafting further on top of it is likely
    wasted. ``tau = 0`` never stops early, so it is ``FixedPolicy(max_gamma)``.

    How this differs from transformers (5.x, as its main-branch source reads). Its
    ``assistant_confidence_threshold`` (``ConfidenceCriteria`` in ``generation/stopping_criteria.py``, default
    0.4) also checks a token after drafting it, but it tests the probability the draft gave to *the token it
    just drew*, q(x), not the row's top probability max q; and, when scikit-learn is installed, it re-tunes the
    threshold as it goes, from an ROC curve of those probabilities against the verdicts
    (``AssistedCandidateGenerator.update_candidate_strategy``). The two rules coincide under greedy drafting,
    where the drawn token is the argmax. We keep max q and a fixed tau: it is a property of the draft's
    distribution alone, so the rule the Tuning page describes ("stop once the draft's top probability drops
    below tau") holds whatever token the sampler happened to draw.

    >>> policy = ConfidencePolicy(0.5, max_gamma=8)
    >>> policy.keep_drafting(0, [0.6, 0.4], None), policy.keep_drafting(1, [0.4, 0.3, 0.3], None)
    (True, False)
    """

    peeks = False

    def __init__(self, tau: float, max_gamma: int = 8) -> None:
        self.tau = _check_tau(tau)
        self.max_gamma = _check_cap(max_gamma)
        self.name = f"confidence tau={self.tau:g}"

    def start_round(self) -> int:
        return self.max_gamma

    def keep_drafting(self, position: int, q_row: Sequence[float], will_accept: bool | None) -> bool:
        return max(q_row) >= self.tau

    def after_round(self, accepted: int, drafted: int) -> None:
        _check_round_report(accepted, drafted)

    def to_dict(self) -> dict[str, Any]:
        return {"name": "confidence", "tau": self.tau, "max_gamma": self.max_gamma}


class DynamicPolicy:
    """transformers' heuristic schedule: +2 after a full acceptance, -1 otherwise, at least 1, at most max_gamma.

    ``current`` resumes a schedule where an earlier run left it (default: ``initial``); ``initial`` only names
    the policy and is kept so that a saved policy rebuilds with the same name.

    >>> policy = DynamicPolicy(initial=5)
    >>> policy.after_round(5, 5); policy.start_round()
    7
    >>> policy.after_round(2, 7); policy.start_round()
    6
    """

    peeks = False

    def __init__(self, initial: int = 5, max_gamma: int = MAX_GAMMA, *, current: int | None = None) -> None:
        self.max_gamma = check_gamma(max_gamma, "max_gamma")
        self.initial = check_gamma(initial, "initial")
        if not 1 <= self.initial <= self.max_gamma:
            raise ValueError(f"initial must be between 1 and max_gamma = {self.max_gamma} (got {initial})")
        self.gamma = self.initial if current is None else check_gamma(current, "current")
        if not 1 <= self.gamma <= self.max_gamma:
            raise ValueError(f"current must be between 1 and max_gamma = {self.max_gamma} (got {current})")
        self.name = f"dynamic from gamma={initial}"

    def start_round(self) -> int:
        return self.gamma

    def keep_drafting(self, position: int, q_row: Sequence[float], will_accept: bool | None) -> bool:
        return True

    def after_round(self, accepted: int, drafted: int) -> None:
        _check_round_report(accepted, drafted)
        # A round cut short by the token budget still reports honestly: "full" means every draft was accepted.
        if accepted == drafted:
            self.gamma = min(self.max_gamma, self.gamma + 2)
        else:
            self.gamma = max(1, self.gamma - 1)

    def to_dict(self) -> dict[str, Any]:
        return {"name": "dynamic", "gamma": self.initial, "max_gamma": self.max_gamma, "state": {"gamma": self.gamma}}


class OraclePolicy:
    """Draft up to and including the first token the verifier will reject, at most ``max_gamma`` tokens.

    The engine draws each verify uniform as soon as the token is drafted and, for a peeking policy, tells it
    whether verify will accept. The oracle stops after the first rejected token, so no draft is ever
    discarded, and a round's accepted count is as long as it can be.

    Why the output stays exact. Couple the oracle's round with a fixed-gamma round (gamma = ``max_gamma``) on
    the same draws: draft tokens x_1, x_2, ..., verify uniforms u_1, u_2, ..., one final uniform. The fixed
    round accepts x_1..x_{k-1}, rejects x_k and draws the correction from the residual at k with the final
    uniform; the later drafts x_{k+1}.. are discarded and influence nothing. The oracle drafts exactly
    x_1..x_k, sees the same verdicts and uses the same final uniform, so it emits the very same tokens (and
    the same bonus when all max_gamma are accepted). Equal outputs on every draw means equal distributions,
    and the fixed round is exact. The trap to avoid: stopping *before* the rejected token would emit a bonus
    from p where the residual belongs, and bias the output.

    >>> policy = OraclePolicy(max_gamma=16)
    >>> policy.keep_drafting(0, [0.5, 0.5], True), policy.keep_drafting(1, [0.5, 0.5], False)
    (True, False)
    """

    peeks = True

    def __init__(self, max_gamma: int = 16) -> None:
        self.max_gamma = _check_cap(max_gamma)
        self.name = "oracle"

    def start_round(self) -> int:
        return self.max_gamma

    def keep_drafting(self, position: int, q_row: Sequence[float], will_accept: bool | None) -> bool:
        if will_accept is None:
            raise ValueError("will_accept must be a bool for the oracle: run it through the engine, which peeks")
        return will_accept

    def after_round(self, accepted: int, drafted: int) -> None:
        _check_round_report(accepted, drafted)

    def to_dict(self) -> dict[str, Any]:
        return {"name": "oracle", "max_gamma": self.max_gamma}


def make_policy(
    name: str,
    *,
    gamma: int = 4,
    tau: float = 0.5,
    max_gamma: int = 16,
    state: Mapping[str, Any] | None = None,
) -> ResumablePolicy:
    """Build a policy by the name the Tuning page uses: fixed, confidence, dynamic or oracle.

    - ``fixed``: ``FixedPolicy(gamma)``, gamma in 0..64;
    - ``confidence``: ``ConfidencePolicy(tau, max_gamma)``;
    - ``dynamic``: the schedule starts at ``gamma`` (1..64) and stays within 1..max(max_gamma, gamma), so a
      starting length above the cap raises the cap rather than being refused;
    - ``oracle``: ``OraclePolicy(max_gamma)``.

    Every argument is checked whichever policy uses it. ``state`` resumes a policy where an earlier run left it:
    it is the ``"state"`` entry of ``policy.to_dict()`` (``{"gamma": length}`` for dynamic; the other policies
    carry no state). ``make_policy(**policy.to_dict())`` rebuilds any policy made here.

    >>> make_policy("dynamic", gamma=3).start_round()
    3
    >>> make_policy("dynamic", gamma=3, max_gamma=16, state={"gamma": 9}).start_round()
    9
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    if name not in POLICY_NAMES:
        raise ValueError(f"name must be one of {', '.join(POLICY_NAMES)} (got {name!r})")
    g = check_gamma(gamma)
    t = _check_tau(tau)
    cap = _check_cap(max_gamma)
    current = _check_state(name, state)
    if name == "fixed":
        return FixedPolicy(g)
    if name == "confidence":
        return ConfidencePolicy(t, cap)
    if name == "dynamic":
        if g < 1:
            raise ValueError(f"gamma must be between 1 and {MAX_GAMMA} for the dynamic policy (got {g})")
        high = max(cap, g)
        if current is not None and not 1 <= current <= high:
            raise ValueError(f"state['gamma'] must be between 1 and {high} (got {current})")
        return DynamicPolicy(g, high, current=current)
    return OraclePolicy(cap)


def _check_state(name: str, state: Mapping[str, Any] | None) -> int | None:
    """The dynamic schedule's saved length, or None; no other policy accepts a state."""
    if state is None:
        return None
    if not isinstance(state, Mapping):
        raise TypeError(f"state must be a mapping or None, got {type(state).__name__}")
    allowed = {"gamma"} if name == "dynamic" else set()
    unknown = sorted(set(state) - allowed)
    if unknown:
        raise ValueError(f"state has keys the {name} policy does not keep: {unknown}")
    if "gamma" not in state:
        return None
    return check_gamma(state["gamma"], "state['gamma']")
