"""Draft-length policies: how many tokens to draft in the next round.

The engine asks a policy three things, always in this order:

1. ``start_round() -> int``: the most tokens this round may draft (the cap, 0..64);
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
  (``num_assistant_tokens_schedule="heuristic"``, starting from ``num_assistant_tokens=5``; see
  ``AssistedCandidateGenerator.update_candidate_strategy`` in transformers' ``generation/candidate_generator.py``).
- ``OraclePolicy(max_gamma)``: drafts exactly up to the first token the verifier rejects. It knows the future,
  so no real system can run it; it is the upper bound that any adaptive rule is measured against.

Every policy here keeps the output exactly distributed as the target. The non-peeking ones decide from draft
tokens alone, which the proof of exactness allows. The oracle is argued in ``OraclePolicy``.

Non-goals: learned draft-length predictors, tree drafts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .distributions import MAX_GAMMA, check_gamma

__all__ = [
    "ConfidencePolicy",
    "DraftPolicy",
    "DynamicPolicy",
    "FixedPolicy",
    "OraclePolicy",
    "make_policy",
]


class DraftPolicy(Protocol):
    """What the engine needs from a policy (see the module docstring for the call order)."""

    name: str
    peeks: bool

    def start_round(self) -> int: ...

    def keep_drafting(self, position: int, q_row: Sequence[float], will_accept: bool | None) -> bool: ...

    def after_round(self, accepted: int, drafted: int) -> None: ...


def _check_round_report(accepted: int, drafted: int) -> None:
    check_gamma(drafted, "drafted")
    if isinstance(accepted, bool) or not isinstance(accepted, int):
        raise TypeError(f"accepted must be an int, got {type(accepted).__name__}")
    if not 0 <= accepted <= drafted:
        raise ValueError(f"accepted must be between 0 and drafted = {drafted} (got {accepted})")


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


class ConfidencePolicy:
    """Keep drafting while the draft is confident: stop after a token whose row has max q below ``tau``.

    Design choice: the check runs *after* a token is drafted, and that token is kept, so every round drafts at
    least one token. A low top probability says the draft is guessing at this position; the guess may still
    be accepted, and drafting it costs one cheap draft step, but drafting further on top of it is likely
    wasted. (transformers' ``assistant_confidence_threshold`` likewise checks a token after generating it.)
    ``tau = 0`` never stops early, so it is ``FixedPolicy(max_gamma)``.

    >>> policy = ConfidencePolicy(0.5, max_gamma=8)
    >>> policy.keep_drafting(0, [0.6, 0.4], None), policy.keep_drafting(1, [0.4, 0.3, 0.3], None)
    (True, False)
    """

    peeks = False

    def __init__(self, tau: float, max_gamma: int = 8) -> None:
        if isinstance(tau, bool) or not isinstance(tau, int | float) or not 0.0 <= tau <= 1.0:
            raise ValueError(f"tau must be between 0 and 1 (got {tau!r})")
        self.tau = float(tau)
        self.max_gamma = check_gamma(max_gamma, "max_gamma")
        if self.max_gamma < 1:
            raise ValueError("max_gamma must be between 1 and 64 (got 0)")
        self.name = f"confidence tau={tau:g}"

    def start_round(self) -> int:
        return self.max_gamma

    def keep_drafting(self, position: int, q_row: Sequence[float], will_accept: bool | None) -> bool:
        return max(q_row) >= self.tau

    def after_round(self, accepted: int, drafted: int) -> None:
        _check_round_report(accepted, drafted)


class DynamicPolicy:
    """transformers' heuristic schedule: +2 after a full acceptance, -1 otherwise, at least 1, at most 64.

    >>> policy = DynamicPolicy(initial=5)
    >>> policy.after_round(5, 5); policy.start_round()
    7
    >>> policy.after_round(2, 7); policy.start_round()
    6
    """

    peeks = False

    def __init__(self, initial: int = 5, max_gamma: int = MAX_GAMMA) -> None:
        self.max_gamma = check_gamma(max_gamma, "max_gamma")
        self.gamma = check_gamma(initial, "initial")
        if not 1 <= self.gamma <= self.max_gamma:
            raise ValueError(f"initial must be between 1 and max_gamma = {self.max_gamma} (got {initial})")
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
        self.max_gamma = check_gamma(max_gamma, "max_gamma")
        if self.max_gamma < 1:
            raise ValueError("max_gamma must be between 1 and 64 (got 0)")
        self.name = "oracle"

    def start_round(self) -> int:
        return self.max_gamma

    def keep_drafting(self, position: int, q_row: Sequence[float], will_accept: bool | None) -> bool:
        if will_accept is None:
            raise ValueError("the oracle needs will_accept: run it through the engine, which peeks for it")
        return will_accept

    def after_round(self, accepted: int, drafted: int) -> None:
        _check_round_report(accepted, drafted)


def make_policy(name: str, *, gamma: int = 4, tau: float = 0.5, max_gamma: int = 16) -> DraftPolicy:
    """Build a policy by name, as the page's selector names them: fixed, confidence, dynamic, oracle.

    >>> make_policy("dynamic", gamma=3).start_round()
    3
    """
    if name == "fixed":
        return FixedPolicy(gamma)
    if name == "confidence":
        return ConfidencePolicy(tau, max_gamma)
    if name == "dynamic":
        return DynamicPolicy(max(1, gamma), max(max_gamma, gamma, 1))
    if name == "oracle":
        return OraclePolicy(max_gamma)
    raise ValueError(f"policy must be one of fixed, confidence, dynamic, oracle (got {name!r})")
