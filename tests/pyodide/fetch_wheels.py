"""Download, once, the pure-Python wheels that pytest needs inside Pyodide.

Pyodide 314.0.7 runs CPython 3.14 on WebAssembly. Its npm package carries no packages, and
micropip would need the network at test time, so the test runner unpacks ordinary
``py3-none-any`` wheels from PyPI straight into Pyodide's site-packages instead. This script
fetches them into ``.cache/pyodide-wheels/`` and checks their hashes; once they are cached it
touches the network no more.

Versions are pinned here (with hashes), not taken from the venv: every wheel must be pure Python,
and hypothesis ships only compiled wheels after 6.155.7, so the Pyodide run pins that release.

Writes ``.cache/pyodide-wheels/manifest.json``: the wheel file names, in install order, for
``run_pytest.mjs``.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "pyodide-wheels"
PYODIDE_PYTHON = "3.14"

# (name, version, sha256 of the pure-Python wheel). pytest 9 needs pluggy, iniconfig, packaging
# and pygments; hypothesis needs sortedcontainers. exceptiongroup and tomli serve only 3.10.
WHEELS: list[tuple[str, str, str]] = [
    ("pytest", "9.2.0", "07acdcf88ec174f907dc01af70bf52d49b014bbab03faeeade31c96b18c2e588"),
    ("pluggy", "1.7.0", "7dd7b0d8832ba3cb632c306926ded123429211b83641b35dc5c41ad2d34f9bec"),
    ("iniconfig", "2.3.1", "9121e2c1fdb355232495be3194c8dfe87ccc2d5dee45947b78e68f499790d7a7"),
    ("packaging", "26.4", "81383611a09c1bc0b08b76e0fd5829d7c6824c65b27a6aee339da133f4233ea2"),
    ("pygments", "2.21.0", "2363c69b61c4a97c838da3b130dcd6468f4848992b21a82f2a63ec34377137d9"),
    ("hypothesis", "6.155.7", "9f634bdb1f9e9b8ab6ba09431cf2deedb750c96978125a6fb3c5a0f6c6db4131"),
    (
        "sortedcontainers",
        "2.4.0",
        "a163dcaede0f1c021485e957a39245190e74249897e2ae4b2aa38595db237ee0",
    ),
]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cached_wheel(name: str, version: str) -> Path | None:
    """The cached wheel for name==version, if any (wheel names normalise '-' to '_')."""
    stem = f"{name.replace('-', '_')}-{version}-"
    found = [p for p in CACHE.glob("*.whl") if p.name.lower().startswith(stem.lower())]
    return found[0] if len(found) == 1 else None


def fetch(name: str, version: str, digest: str) -> Path:
    wheel = cached_wheel(name, version)
    if wheel is not None and sha256(wheel) == digest:
        return wheel
    if wheel is not None:
        wheel.unlink()  # a partial or tampered download: fetch it again
    print(f"fetch_wheels: downloading {name}=={version}", flush=True)
    # --platform any admits only pure-Python wheels; --no-deps because the list above is complete.
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            PYODIDE_PYTHON,
            "--platform",
            "any",
            "--dest",
            str(CACHE),
            f"{name}=={version}",
        ],
        check=True,
    )
    wheel = cached_wheel(name, version)
    if wheel is None:
        raise SystemExit(f"fetch_wheels: pip left no wheel for {name}=={version} in {CACHE}")
    if not wheel.name.endswith("-none-any.whl"):
        raise SystemExit(f"fetch_wheels: {wheel.name} is not a pure-Python wheel")
    actual = sha256(wheel)
    if actual != digest:
        wheel.unlink()
        raise SystemExit(f"fetch_wheels: sha256 mismatch for {wheel.name}: {actual} != {digest}")
    return wheel


def main() -> int:
    CACHE.mkdir(parents=True, exist_ok=True)
    wheels = [fetch(*pin).name for pin in WHEELS]
    manifest = CACHE / "manifest.json"
    manifest.write_text(json.dumps({"python": PYODIDE_PYTHON, "wheels": wheels}, indent=2) + "\n")
    print(f"fetch_wheels: {len(wheels)} wheels ready in {CACHE.relative_to(ROOT)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
