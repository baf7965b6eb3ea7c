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

A page's module is imported on its first call (``PAGES``): a page's worker imports only the handlers that page
calls, about half of the package. In a Chromium worker on a 2-core machine, importing this package took 89-116 ms
with every page's module and takes 38-42 ms without. Reading ``HANDLERS`` or ``EXAMPLES`` imports every page's
module first, so both always hold every handler.

Nothing imports this module except the worker, the build step and the tests.
"""

from __future__ import annotations

import importlib
import json
import math
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["EXAMPLES", "HANDLERS", "PAGES", "call", "dumps", "handler"]

Handler = Callable[..., dict[str, Any]]
H = TypeVar("H", bound=Handler)

#: The modules that register a handler prefix (``<page>.<what>``), imported on the prefix's first call.
PAGES: dict[str, tuple[str, ...]] = {
    "bonus": ("bonus",),
    "correct": ("correct",),
    "cost": ("cost",),
    "draft": ("draft",),
    "drafters": ("drafters",),
    "exactness": ("exactness",),
    "home": ("home",),
    "playground": ("playground",),
    "runtime": ("runtime",),
    "sampling": ("sampling",),
    "trees": ("trees",),
    "tuning": ("tuning", "vllm"),
    "verify": ("verify",),
}

# The handlers registered so far, and their examples. HANDLERS and EXAMPLES (module attributes, below) are these
# once every page's module is imported.
_handlers: dict[str, Handler] = {}
_examples: dict[str, dict[str, Any]] = {}


def _load(prefix: str) -> None:
    for module in PAGES.get(prefix, ()):
        importlib.import_module(f"{__name__}.{module}")


def _load_all() -> None:
    for prefix in PAGES:
        _load(prefix)


def __getattr__(name: str) -> dict[str, Any]:
    """``HANDLERS`` (every handler the page may call, by name) and ``EXAMPLES`` (example keyword arguments per
    handler, for the tests), complete: every page's module is imported first."""
    if name == "HANDLERS":
        _load_all()
        return _handlers
    if name == "EXAMPLES":
        _load_all()
        return _examples
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def handler(name: str, *, example: dict[str, Any]) -> Callable[[H], H]:
    """Register a function under ``name``; registering one name twice is an error, not a silent override."""

    def register(fn: H) -> H:
        if name in _handlers:
            raise ValueError(f"handler {name!r} is already registered")
        if name.partition(".")[0] not in PAGES:
            raise ValueError(f"handler {name!r}: its prefix is not in PAGES, so no call could import it")
        _handlers[name] = fn
        _examples[name] = example
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
    if name not in _handlers:
        _load(name.partition(".")[0])
    fn = _handlers.get(name)
    if fn is None:
        _load_all()
        raise ValueError(f"unknown handler {name!r}; known: {', '.join(sorted(_handlers))}")
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
