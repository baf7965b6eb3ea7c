"""MkDocs hook: the page side of the lab at build time.

What it does, in build order:

1. ``on_post_page`` (below) adds, right after ``js/lab.js``, a module script for each widget the page holds: a
   widget is the file ``site_assets/js/widgets/NAME.js``, and a widget author just drops one there. A page reached
   by instant navigation gets the modules it lacks from ``lab.js``, which imports them on demand.
2. ``on_files``: serves ``site_assets/js/**`` and ``site_assets/css/**`` at ``js/...`` and ``css/...`` in the site.
3. ``on_page_content``: for each widget placeholder

       <div class="sd-widget" data-widget="NAME">
       <script type="application/json">{"handler": "...", "args": {...}, ...}</script>
       </div>

   it runs the named handler natively (``specdec_core.web.call``, the function the worker calls in the browser)
   and embeds the result, so the widget paints before Pyodide boots. The inert JSON moves into
   ``<template data-sd-settings>`` and the result into ``<template data-sd-initial>``: Material's instant
   navigation re-creates every ``<script>`` in the page content *without its attributes*, which would run the
   JSON as JavaScript. The settings script must directly follow the opening tag; the handler part is optional.
   ``NAME`` must have a widget file ``site_assets/js/widgets/NAME.js``. Any other ``<script>`` left in page
   content is reported (a warning, so ``mkdocs build --strict`` fails).
4. ``on_post_page``: an inline script in ``<head>`` creates the Python worker before anything else loads, and
   keeps deferred sections (``<div class="sd-later" markdown>``, see lab.css) unstyled while Python boots.
5. ``on_post_build``: copies the vendored runtime from ``node_modules`` (only the files the pages load) and the
   core wheel from ``dist/`` into the site, with the wheel's modules precompiled to bytecode by that same Pyodide
   (``compile_bytecode.mjs``; importing from source cost about 80 ms of start-up), and writes
   ``wheels/manifest.json`` for the worker.

Everything the pages load is served from the site itself: no request leaves its origin.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import posixpath
import re
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page
from mkdocs.utils import get_relative_url

log = logging.getLogger("mkdocs.hooks.lab")

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "site_assets"
NODE_MODULES = ROOT / "node_modules"
DIST = ROOT / "dist"
PACKAGE = ROOT / "specdec_core"

# Source (relative to node_modules) -> destination (relative to the site). Only what the pages load.
VENDOR: dict[str, str] = {
    "pyodide/pyodide.mjs": "vendor/pyodide/pyodide.mjs",
    "pyodide/pyodide.asm.mjs": "vendor/pyodide/pyodide.asm.mjs",
    "pyodide/pyodide.asm.wasm": "vendor/pyodide/pyodide.asm.wasm",
    "pyodide/python_stdlib.zip": "vendor/pyodide/python_stdlib.zip",
    "pyodide/pyodide-lock.json": "vendor/pyodide/pyodide-lock.json",
    # Plotly's partial bundles (js/runtime/charts.js picks one per figure): 2D traces, and 3D for the home page.
    "plotly.js-cartesian-dist-min/plotly-cartesian.min.js": "vendor/plotly-cartesian.min.js",
    "plotly.js-gl3d-dist-min/plotly-gl3d.min.js": "vendor/plotly-gl3d.min.js",
    "katex/dist/katex.min.js": "vendor/katex/katex.min.js",
    "katex/dist/katex.min.css": "vendor/katex/katex.min.css",
    "katex/dist/contrib/auto-render.min.js": "vendor/katex/contrib/auto-render.min.js",
}
VENDOR_DIRS: dict[str, str] = {"katex/dist/fonts": "vendor/katex/fonts"}

RUN_MAKE_SITE = "run `make site`, which installs the npm packages and builds the wheel first"

WIDGET_OPEN = re.compile(r"<div\b[^>]*\bclass=\"(?:[^\"]*\s)?sd-widget(?:\s[^\"]*)?\"[^>]*>")
WIDGET_NAME = re.compile(r"\bdata-widget=\"([a-z0-9][a-z0-9-]*)\"")
SETTINGS = re.compile(r"\s*<script type=\"application/json\">(.*?)</script>", re.DOTALL)
ANY_SCRIPT = re.compile(r"<script\b", re.IGNORECASE)


# --- 1. widget scripts --------------------------------------------------------------------------------------


def widget_names() -> list[str]:
    return sorted(path.stem for path in (ASSETS / "js" / "widgets").glob("*.js"))


# Widgets per page (source path -> names), found by on_page_content and loaded by on_post_page.
PAGE_WIDGETS: dict[str, list[str]] = {}


def widget_scripts(html: str, page: Page) -> str:
    """The page's widget modules, as script tags right after lab.js's: deferred modules run in document order,
    so each finds lab.js (``SDLab``) ready, and all have registered before the first ``document$`` emission."""
    names = PAGE_WIDGETS.get(page.file.src_uri, [])
    lab = re.search(r'<script src="[^"]*\bjs/lab\.js"[^>]*></script>', html)
    if lab is None:
        if names:
            raise PluginError(f"{page.file.src_uri}: widgets need js/lab.js in extra_javascript")
        return html
    tags = "".join(
        f'<script src="{get_relative_url(f"js/widgets/{name}.js", page.url)}" type="module"></script>' for name in names
    )
    return html[: lab.end()] + tags + html[lab.end() :]


# --- 2. site_assets into the site ---------------------------------------------------------------------------


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for folder in ("js", "css"):
        for path in sorted((ASSETS / folder).rglob("*")):
            if path.is_file():
                uri = path.relative_to(ASSETS).as_posix()
                files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


# --- 3. build-time figures ----------------------------------------------------------------------------------


def on_pre_build(config: MkDocsConfig) -> None:
    # `mkdocs serve` keeps this module alive between builds: drop the package so edits to it are picked up.
    for name in [m for m in sys.modules if m == "specdec_core" or m.startswith("specdec_core.")]:
        del sys.modules[name]
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def _inert_json(value: Any) -> str:
    # Inside <template> the text is parsed as HTML: escape the three characters that could start markup or an
    # entity. \u003c and friends are ordinary JSON escapes, so JSON.parse restores them.
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def render_widget(name: str, settings: dict[str, Any], where: str) -> str | None:
    """Run the widget's initial handler call natively; ``None`` when its settings name no handler."""
    handler = settings.get("handler")
    if handler is None:
        return None
    args = settings.get("args", {})
    if not isinstance(handler, str) or not isinstance(args, dict):
        raise PluginError(f"{where}: widget {name!r} settings need \"handler\" (a string) and \"args\" (an object)")
    web = importlib.import_module("specdec_core.web")
    try:
        result: str = web.call(handler, json.dumps(args))
    except Exception as exc:
        raise PluginError(f"{where}: widget {name!r}: {handler}({args}) failed: {exc!r}") from exc
    return result


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    where = page.file.src_uri
    known = set(widget_names())
    used: set[str] = set()
    out: list[str] = []
    pos = 0
    for match in WIDGET_OPEN.finditer(html):
        tag = match.group(0)
        name_match = WIDGET_NAME.search(tag)
        if name_match is None:
            raise PluginError(f"{where}: a widget placeholder needs data-widget=\"name\": {tag}")
        name = name_match.group(1)
        used.add(name)
        if name not in known:
            raise PluginError(f"{where}: no widget file site_assets/js/widgets/{name}.js for data-widget={name!r}")
        out.append(html[pos : match.end()])
        pos = match.end()
        settings: dict[str, Any] = {}
        script = SETTINGS.match(html, pos)
        if script is not None:
            try:
                settings = json.loads(script.group(1))
            except json.JSONDecodeError as exc:
                raise PluginError(f"{where}: widget {name!r} settings are not valid JSON: {exc}") from exc
            if not isinstance(settings, dict):
                raise PluginError(f"{where}: widget {name!r} settings must be a JSON object")
            pos = script.end()
        initial = render_widget(name, settings, where)
        out.append(f"\n<template data-sd-settings data-search-exclude>{_inert_json(settings)}</template>")
        if initial is not None:
            out.append(f"\n<template data-sd-initial data-search-exclude>{_inert_json(json.loads(initial))}</template>")
    out.append(html[pos:])
    PAGE_WIDGETS[where] = sorted(used)
    result = "".join(out)
    if ANY_SCRIPT.search(result):
        log.warning(
            "%s: a <script> in page content breaks under instant navigation (Material re-creates it without "
            "its type); use a widget placeholder's settings JSON instead",
            where,
        )
    return result


# --- 4. start Python first ------------------------------------------------------------------------------------

# Creates the Python worker from <head>, before the page's stylesheets and scripts load, so Pyodide's boot (the
# slow part of a first visit) starts at once; lab.js adopts the worker and the messages it has sent so far.
BOOT = (
    "<script>(() => {"
    # Deferred sections (.sd-later, lab.css) stay unstyled until lab.js says otherwise; if lab.js never runs,
    # the load event shows them. Not when the URL names an anchor, which may lie inside one.
    ' if (!location.hash) { const root = document.documentElement; root.classList.add("sd-boot");'
    ' addEventListener("load", () => window.SDLab || root.classList.remove("sd-boot"), { once: true }); }'
    " try {"
    ' const worker = new Worker(new URL("{url}", document.baseURI), { type: "module" });'
    " const boot = { worker, queue: [], error: null };"
    " worker.onmessage = (event) => boot.queue.push(event.data);"
    ' worker.onerror = (event) => { event.preventDefault(); boot.error = event.message || ""; };'
    " window.__sdBoot = boot;"
    " } catch {} })();</script>"
)


STATIC_IMPORT = re.compile(r'^import\b[^;]*?\bfrom\s+"(\.{1,2}/[^"]+)";', re.MULTILINE)


def static_imports(module: str) -> list[str]:
    """Site paths of the modules ``module`` (a site path under js/) imports statically, recursively."""
    found: list[str] = []
    todo = [module]
    while todo:
        current = PurePosixPath(todo.pop())
        source = ASSETS / current
        for spec in STATIC_IMPORT.findall(source.read_text("utf-8")) if source.exists() else []:
            target = posixpath.normpath(str(current.parent / spec))
            if target not in found:
                found.append(target)
                todo.append(target)
    return found


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    output = widget_scripts(output, page)
    script = BOOT.replace("{url}", get_relative_url("js/runtime/worker.js", page.url))
    # The modules lab.js and the page's widgets import: without a hint the browser finds them only once the page
    # is parsed, and the first chart waits for one more round trip.
    modules = ["js/lab.js", *(f"js/widgets/{name}.js" for name in PAGE_WIDGETS.get(page.file.src_uri, []))]
    imported = dict.fromkeys(dep for module in modules for dep in static_imports(module))
    for dep in imported:
        script += f'<link rel="modulepreload" href="{get_relative_url(dep, page.url)}">'

    head = re.search(r"<head>\s*(<meta charset=[^>]*>)?", output)
    if head is None:
        raise PluginError(f"{page.file.src_uri}: no <head> to start the Python worker from")
    return output[: head.end()] + script + output[head.end() :]


# --- 5. vendored runtime and the core wheel -----------------------------------------------------------------


def _copy(src: Path, dest: Path) -> None:
    # Skip unchanged files: the wasm and the stdlib are large, and `mkdocs serve` rebuilds often.
    if dest.exists():
        s, d = src.stat(), dest.stat()
        if s.st_size == d.st_size and int(s.st_mtime) == int(d.st_mtime):
            return
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dest)


def _core_wheel() -> Path:
    wheels = sorted(DIST.glob("specdec_core-*.whl"))
    if len(wheels) != 1:
        found = ", ".join(w.name for w in wheels) or "none"
        raise PluginError(f"expected one specdec_core wheel in dist/ (found {found}): {RUN_MAKE_SITE}")
    wheel = wheels[0]
    # The same sources the Makefile's wheel rule depends on (WHEEL_SRC), so `make site` always clears this.
    sources = [*PACKAGE.glob("*.py"), *(p for p in (PACKAGE / "data").glob("*") if p.is_file())]
    stale = [p.relative_to(ROOT).as_posix() for p in sources if p.stat().st_mtime > wheel.stat().st_mtime]
    if stale:
        # The browser would run older code than the build-time figures were drawn with.
        raise PluginError(f"dist/{wheel.name} is older than {', '.join(sorted(stale)[:3])}: {RUN_MAKE_SITE}")
    return wheel


def _bytecode(wheel: Path, digest: str) -> Path:
    """The wheel's modules compiled by the Pyodide the site ships (site_assets/compile_bytecode.mjs, under Node),
    cached in dist/ by the wheel's digest: a rebuild with the same wheel reuses it."""
    out = DIST / f"{wheel.stem}-bytecode-{digest[:16]}.zip"
    if out.exists():
        return out
    node = shutil.which("node")
    if node is None:
        raise PluginError(f"node is needed to precompile specdec_core for the browser: {RUN_MAKE_SITE}")
    for stale in DIST.glob(f"{wheel.stem}-bytecode-*.zip"):
        stale.unlink()
    script = ASSETS / "compile_bytecode.mjs"
    done = subprocess.run([node, str(script), str(wheel), str(out)], capture_output=True, text=True, timeout=600)
    if done.returncode != 0 or not out.exists():
        # Pyodide's errors carry its minified source: keep the last lines, each cut short.
        tail = "\n".join(line[:300] for line in done.stderr.strip().splitlines()[-12:])
        out.unlink(missing_ok=True)
        raise PluginError(f"{script.relative_to(ROOT)} failed ({done.returncode}):\n{tail}")
    return out


def on_post_build(config: MkDocsConfig) -> None:
    site = Path(config.site_dir)
    missing = [src for src in [*VENDOR, *VENDOR_DIRS] if not (NODE_MODULES / src).exists()]
    if missing:
        raise PluginError(f"node_modules is missing {', '.join(missing)}: {RUN_MAKE_SITE}")
    for src, dest in VENDOR.items():
        _copy(NODE_MODULES / src, site / dest)
    for src_dir, dest_dir in VENDOR_DIRS.items():
        for path in sorted((NODE_MODULES / src_dir).iterdir()):
            _copy(path, site / dest_dir / path.name)

    wheel = _core_wheel()
    wheels = site / "wheels"
    if wheels.exists():
        shutil.rmtree(wheels)
    wheels.mkdir(parents=True)
    shutil.copy2(wheel, wheels / wheel.name)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    bytecode = _bytecode(wheel, digest)
    shutil.copy2(bytecode, wheels / bytecode.name)
    # The worker fetches this (uncached) to learn the files' names; the digests bust caches after a redeploy.
    manifest = {
        "core": {"file": wheel.name, "sha256": digest},
        "bytecode": {"file": bytecode.name, "sha256": hashlib.sha256(bytecode.read_bytes()).hexdigest()},
    }
    (wheels / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
