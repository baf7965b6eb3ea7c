"""``runtime.info``: where the code runs, for the site's diagnostics (no page draws anything from it).

Non-goals: timing (``benchmarks/``), anything about the browser itself (the page knows that better).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from . import handler


def _precompiled(module: object) -> bool:
    """Was ``module`` loaded from an unchecked-hash .pyc (PEP 552), as the site ships for the browser?"""
    cached = getattr(module, "__cached__", None)
    if not cached or not os.path.isfile(cached):
        return False
    with open(cached, "rb") as pyc:
        header = pyc.read(8)
    # Bytes 4-8 are the flags: bit 0 "hash-based", bit 1 "check the source". Unchecked hash-based: 0b01.
    return len(header) == 8 and int.from_bytes(header[4:8], "little") == 0b01


@handler("runtime.info", example={})
def info() -> dict[str, Any]:
    """Python's version and platform, the package version, and whether every loaded module of the package came
    from precompiled bytecode rather than being compiled from source on import.

    >>> import platform
    >>> result = info()
    >>> result["python"] == platform.python_version(), result["precompiled"]
    (True, False)
    """
    # Imported here, not at the top: `platform` costs about 25 ms of the worker's start-up in Pyodide, and only
    # this handler needs it.
    import platform

    from .. import __version__

    loaded = [module for name, module in sorted(sys.modules.items()) if name.partition(".")[0] == "specdec_core"]
    return {
        "python": platform.python_version(),
        "platform": sys.platform,
        "version": __version__,
        "modules": len(loaded),
        "precompiled": bool(loaded) and all(_precompiled(module) for module in loaded),
    }
