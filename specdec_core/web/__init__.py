"""The one registry the browser calls: handler name -> handler(**args) -> JSON-safe dict.

``call(name, args_json) -> str`` serves two callers: the Web Worker answers each ``CALL`` message with it inside
Pyodide, and the build step calls it natively for each widget placeholder, whose inert JSON settings name a
``handler`` and its ``args``, so every widget paints a build-time result before Python boots. Arguments and results
cross as JSON strings: JavaScript never builds Python source.

A handler is ``<page>.<what>``, defined in ``web/<page>.py`` with keyword parameters checked by ``web.args``, and
registered with ``@handler(name, example={...})`` (every handler has an example the tests call it with). It
returns a JSON object: ``figure`` (one Plotly figure dict) or ``figures`` (name -> figure), ``metrics`` (name ->
number, the page's ``data-metric`` names: ``accept-rate``, ``tokens-per-pass``, ...) and whatever else its widget
needs. NaN and infinities are refused (``call`` raises): ``JSON.parse`` cannot read them. Handlers keep no state
between calls; a page that continues a run sends back the state the last answer returned.

Nothing imports this module except the worker and the build step.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["EXAMPLES", "HANDLERS", "call", "dumps", "handler"]

Handler = Callable[..., dict[str, Any]]
H = TypeVar("H", bound=Handler)

#: Every handler the page may call, by name.
HANDLERS: dict[str, Handler] = {}

#: Example keyword arguments per handler, for the native tests.
EXAMPLES: dict[str, dict[str, Any]] = {}


def handler(name: str, *, example: dict[str, Any]) -> Callable[[H], H]:
    """Register a function under ``name``; registering one name twice is an error, not a silent override."""

    def register(fn: H) -> H:
        if name in HANDLERS:
            raise ValueError(f"handler {name!r} is already registered")
        HANDLERS[name] = fn
        EXAMPLES[name] = example
        return fn

    return register


def call(name: str, args_json: str = "{}") -> str:
    """Run handler ``name`` with keyword arguments decoded from ``args_json``; return its result as JSON.

    >>> json.loads(call("verify.pair", '{"p": [0.4, 0.35, 0.25], "q": [0.2, 0.2, 0.6]}'))["metrics"]
    {'beta': 0.65, 'reject-rate': 0.35, 'tv-distance': 0.35}
    >>> call("no.such", "{}")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown handler 'no.such'; known: ...verify.pair...
    """
    fn = HANDLERS.get(name)
    if fn is None:
        raise ValueError(f"unknown handler {name!r}; known: {', '.join(sorted(HANDLERS))}")
    args = json.loads(args_json)
    if not isinstance(args, dict):
        raise TypeError(f"args for {name!r} must be a JSON object, got {type(args).__name__}")
    result = fn(**args)
    if not isinstance(result, dict):
        raise TypeError(f"handler {name!r} must return a dict, got {type(result).__name__}")
    return dumps(result, where=name)


def dumps(value: object, where: str = "value") -> str:
    """Compact JSON that ``JSON.parse`` accepts: a non-finite number is an error that names its path.

    >>> dumps({"a": [1, 2.5]})
    '{"a":[1,2.5]}'
    >>> dumps({"m": {"x": float("nan")}}, where="h")
    Traceback (most recent call last):
    ...
    ValueError: h returned a non-finite number at ["m"]["x"]: nan
    """
    try:
        return json.dumps(value, allow_nan=False, separators=(",", ":"))
    except ValueError:
        # The encoder refuses a non-finite number without saying where: the walk (slow, only now) finds its path.
        _check_finite(value, where, "")
        raise


def _check_finite(value: object, where: str, path: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{where} returned a non-finite number at {path or 'the top level'}: {value}")
    if isinstance(value, dict):
        for key, item in value.items():
            _check_finite(item, where, f"{path}[{json.dumps(key)}]")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _check_finite(item, where, f"{path}[{i}]")


# The page modules register their handlers on import. Imported last: they use ``handler`` above.
from . import (  # noqa: E402, F401
    bonus,
    correct,
    cost,
    draft,
    drafters,
    exactness,
    home,
    playground,
    runtime,
    sampling,
    trees,
    tuning,
    verify,
    vllm,
)
