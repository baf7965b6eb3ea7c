"""The one registry the browser calls: handler name -> handler(**args) -> JSON-safe dict.

Two callers, one entry point, ``call(name, args_json) -> str``:

- the Web Worker (``site_assets/js/worker.js``) answers each ``CALL {id, name, args}`` message with it, inside
  Pyodide;
- the build hook (``site_assets/build_hook.py``) calls it natively for each widget placeholder, so every widget
  paints a build-time figure before Python boots in the browser.

Arguments and results cross as JSON strings, so JavaScript never builds Python source.

How a page asks for its build-time figure
------------------------------------------
A widget placeholder in Markdown carries its settings as inert JSON, right after the opening tag::

    <div class="sd-widget" data-widget="pair">
    <script type="application/json">{"handler": "verify.pair", "args": {"blend": 0}}</script>
    </div>

When the settings name a ``handler``, the build hook runs ``call(handler, json.dumps(args))`` and embeds the result
in the page; the widget receives it as ``ctx.initial`` and later makes the same call live with ``ctx.call``.

What a handler returns
----------------------
A JSON object. By convention ``figure`` holds one Plotly figure dict (from ``figures``), ``figures`` a name ->
figure mapping when a widget draws several charts, and ``metrics`` a name -> number mapping whose names are the
page's ``data-metric`` names (``accept-rate``, ``tv-distance``, ...). Anything else a widget needs may sit beside
them. NaN and infinities are refused (``call`` raises), because ``JSON.parse`` cannot read them.

Adding a handler
----------------
Decorate a function with keyword parameters; the name is ``<module>.<what>``. ``example`` holds arguments the
native tests call it with (every handler must have one: tests/test_web.py checks each result is JSON-safe and that
its figures validate with ``plotly.graph_objects.Figure``)::

    @handler("theory.expected_tokens", example={"alpha": 0.8, "gamma": 4})
    def _expected_tokens(alpha: float, gamma: int) -> dict[str, Any]: ...

Nothing imports this module except the worker and the build hook.
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
    _check_finite(value, where, "")
    return json.dumps(value, allow_nan=False, separators=(",", ":"))


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
from . import bonus, correct, draft, exactness, home, playground, runtime, tuning, verify  # noqa: E402, F401
