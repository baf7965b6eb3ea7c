"""The one set of argument checks for handlers: every value from the page passes through one of these.

Arguments arrive as decoded JSON, so anything can turn up: a string, a bool, null, NaN, an int of 400 digits. Each
check returns the value as the handler computes with it, or raises ``TypeError`` for a wrong type (``"0.1"`` for
a number, ``True`` for an int) or ``ValueError`` for a wrong value (out of range, NaN, infinite, too long, not a
choice), its message starting with the argument's name. The ranges double as work caps.

Non-goals: no coercion (``"4"`` is not 4), no clamping (the page clamps URL values before it calls).

>>> check_number("0.1", "cost", 0, 1)
Traceback (most recent call last):
...
TypeError: cost must be a number, got str
>>> check_number(float("nan"), "cost", 0, 1)
Traceback (most recent call last):
...
ValueError: cost must be a number between 0 and 1 (got nan)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..distributions import validate_probs

__all__ = [
    "MAX_SEED",
    "MAX_VOCAB",
    "check_choice",
    "check_flag",
    "check_int",
    "check_labels",
    "check_like",
    "check_list",
    "check_number",
    "check_pair",
    "check_probs",
    "check_seed",
    "check_text",
]

#: Seeds are 31-bit, as the URL and the widgets carry them.
MAX_SEED = 2**31 - 1

#: Longest probability vector a page may send: the widgets edit a handful of tokens, not a vocabulary.
MAX_VOCAB = 64


def check_int(value: object, name: str, low: int, high: int) -> int:
    """An int (not a bool, not a float) in ``low..high``.

    >>> check_int(2.0, "rounds", 0, 9)
    Traceback (most recent call last):
    ...
    TypeError: rounds must be an int, got float
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high} (got {_shown(value)})")
    return value


def check_number(value: object, name: str, low: float, high: float) -> float:
    """A finite int or float (not a bool) in ``[low, high]``, as a float.

    >>> check_number(1, "alpha", 0, 1)
    1.0
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    # Compared before float(): an int too large for a float is out of range, not an OverflowError. NaN fails too.
    if not low <= value <= high:
        raise ValueError(f"{name} must be a number between {low:g} and {high:g} (got {_shown(value)})")
    return float(value)


def check_seed(value: object, name: str = "seed") -> int:
    """A seed: an int in ``0..2**31 - 1``."""
    return check_int(value, name, 0, MAX_SEED)


def check_flag(value: object, name: str) -> bool:
    """A JSON boolean (0 and 1 are not booleans)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be true or false, got {type(value).__name__}")
    return value


def check_text(value: object, name: str, max_length: int) -> str:
    """A string of at most ``max_length`` characters."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    if len(value) > max_length:
        raise ValueError(f"{name} must be at most {max_length} characters (got {len(value)})")
    return value


def check_choice(value: object, name: str, choices: Sequence[str]) -> str:
    """One of ``choices``.

    >>> check_choice("dynamic", "policy", ["fixed", "dynamic"])
    'dynamic'
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)} (got {value[:40]!r})")
    return value


def check_list(value: object, name: str, min_length: int, max_length: int) -> list[Any]:
    """A JSON array of ``min_length..max_length`` items (the items are the caller's to check)."""
    if not isinstance(value, list):
        raise TypeError(f"{name} must be a list, got {type(value).__name__}")
    if not min_length <= len(value) <= max_length:
        raise ValueError(f"{name} must have {min_length} to {max_length} items (got {len(value)})")
    return value


def check_probs(value: object, name: str, max_length: int = MAX_VOCAB) -> list[float]:
    """A probability vector of at most ``max_length`` entries (``distributions.validate_probs`` does the rest)."""
    if not isinstance(value, list):
        raise TypeError(f"{name} must be a list of probabilities, got {type(value).__name__}")
    if len(value) > max_length:
        raise ValueError(f"{name} must have at most {max_length} entries (got {len(value)})")
    return validate_probs(value, name)


def check_pair(p: object, q: object, labels: object) -> tuple[list[float], list[float], list[str]]:
    """A target and a draft over the same tokens, and the tokens' names (x1, x2, ... when None)."""
    p_row, q_row = check_probs(p, "p"), check_probs(q, "q")
    if len(p_row) != len(q_row):
        raise ValueError(f"p and q must have the same length (got {len(p_row)} and {len(q_row)})")
    return p_row, q_row, check_labels(labels, "labels", len(p_row))


def check_labels(value: object, name: str, size: int) -> list[str]:
    """``size`` token names for a chart axis; ``None`` names them x1, x2, ...

    >>> check_labels(None, "labels", 3)
    ['x1', 'x2', 'x3']
    """
    if value is None:
        return [f"x{i + 1}" for i in range(size)]
    items = check_list(value, name, size, size)
    return [check_text(item, f"{name}[{i}]", 40) for i, item in enumerate(items)]


def _numbers_like(value: list[Any], items: Sequence[object]) -> bool:
    """A list of plain numbers, or of lists of them, that passes ``check_like`` item by item, checked without naming
    each item (a state holds hundreds): False sends the caller through the items one by one, to name the wrong one."""
    return all(
        _number_ok(v, model)
        or (
            type(model) is list
            and type(v) is list
            and len(v) == len(model)
            and all(_number_ok(x, m) for x, m in zip(v, model, strict=True))
        )
        for v, model in zip(value, items, strict=True)
    )


def _number_ok(value: object, like: object) -> bool:
    if type(value) is int and type(like) in (int, float):
        return 0 <= value <= 1e15
    return type(value) is float and type(like) is float and 0 <= value <= 1e15


def check_like(value: object, like: object, name: str) -> None:
    """``value`` is shaped like ``like``, as JSON data a handler returned earlier and the page sent back.

    ``like`` is a dict (the same keys), a list (the same length), a tuple ``(cap, item)`` (a list of at most
    ``cap`` items shaped like ``item``), an int (an int), a float (an int or a float), a str (a short string) or
    None (anything: someone else checks it). Numbers must lie in 0..1e15, which refuses NaN and infinities.

    >>> check_like({"n": [1, 2.5]}, {"n": [0, 0.0]}, "state")
    >>> check_like({"n": [1.5, 2]}, {"n": [0, 0.0]}, "state")
    Traceback (most recent call last):
    ...
    TypeError: state['n'][0] must be an int, got float
    """
    if isinstance(like, dict):
        if not isinstance(value, dict) or set(value) != set(like):
            raise ValueError(f"{name} must be an object with the keys {sorted(like)}")
        for key, item in like.items():
            check_like(value[key], item, f"{name}[{key!r}]")
    elif isinstance(like, list | tuple):
        if not isinstance(value, list):
            raise TypeError(f"{name} must be a list, got {type(value).__name__}")
        cap, items = (like[0], [like[1]] * len(value)) if isinstance(like, tuple) else (len(like), like)
        if len(value) != len(items) or len(value) > cap:
            raise ValueError(f"{name} must be a list of {'at most ' if isinstance(like, tuple) else ''}{cap} items")
        if _numbers_like(value, items):
            return
        for i, (item, model) in enumerate(zip(value, items, strict=True)):
            check_like(item, model, f"{name}[{i}]")
    elif isinstance(like, str):
        check_text(value, name, 80)
    elif like is not None:
        kind = int if isinstance(like, int) else int | float
        if isinstance(value, bool) or not isinstance(value, kind):
            raise TypeError(f"{name} must be {'an int' if kind is int else 'a number'}, got {type(value).__name__}")
        check_number(value, name, 0, 1e15)


def _shown(value: int | float) -> str:
    # str() of an int past 4,300 digits raises (CPython's int_max_str_digits), and such a number says nothing.
    return "a huge int" if isinstance(value, int) and abs(value) >= 10**15 else repr(value)
