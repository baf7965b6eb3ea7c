"""The page side's build step: everything the pages need, written before any site builder runs.

Run ``python site_assets/prebuild.py`` (``make site`` does, then ``mkdocs build``; ``make test`` also builds the
same tree with Zensical). It imports nothing from MkDocs and the site builder runs no hook: after this step the
builder only turns Markdown into HTML and copies the docs tree, so mkdocs and Zensical build the same site.

What it writes, all git-ignored:

1. ``docs/js/``: the page side's scripts, copied from ``site_assets/js`` (served at ``js/...``), and
   ``docs/css/lab.css``: the lab's stylesheets of ``site_assets/css`` joined into one file, in ``STYLESHEETS``
   order (one request instead of four, see below).
2. ``docs/vendor/``: the runtime the pages load, copied from ``node_modules`` by the table ``VENDOR`` below.
3. ``docs/core/``: ``specdec_core`` as ONE zip the Python worker unpacks: bytecode compiled by the Pyodide the site
   ships, sourceless, plus the package's data files (``compile_core.mjs`` makes and checks it), and
   ``manifest.json`` naming it. The compile is skipped when the sources have not changed.
4. ``site_assets/initial/PAGE-N.html``: the first result of the page's N-th widget. Each widget placeholder in
   ``docs/PAGE.md`` is written as

       <div class="sd-widget" data-widget="NAME">
       <template data-sd-settings data-search-exclude>{"handler": "...", "args": {...}}</template>
       --8<-- "site_assets/initial/PAGE-N.html"
       </div>

   and this step runs the handler natively (``specdec_core.web.call``, the function the worker calls in the
   browser) and writes ``<template data-sd-initial data-search-exclude>RESULT</template>`` to the included file,
   so the widget paints before Pyodide boots. Inert ``<template>``, never ``<script>``: Material's instant
   navigation re-creates every script in the content without its type. The included file holds no URL: Zensical
   0.0.73 rewrites relative URLs in a page's HTML as if they were relative to the Markdown file, mkdocs leaves
   them, so no one URL works in both. The step fails on a placeholder whose include line is missing or names
   another file, on a widget without ``site_assets/js/widgets/NAME.js``, on settings that are not a JSON object,
   and on a failing handler.
5. ``site_assets/overrides/widget-modules.html``: the template part that gives each page a module script for
   each widget it holds, before the theme's scripts and ``js/lab.js``, so widgets mount and paint as soon as the
   page is parsed (importing them from lab.js instead put Material's start-up and KaTeX first: the first chart came
   0.15-1.5 s later).
6. ``docs/sw.js``: the service worker (``site_assets/sw.js``) with this build's digest and the files it precaches
   for offline and repeat visits (what every page needs to boot; pages are cached as they are visited). The digest
   covers every input of the site (sources, pages, vendored files, builder versions, ``SITE_URL``), so a redeploy
   that changes anything installs a new worker, which drops the old cache.

The ``<head>`` script that starts the Python worker early lives in the theme override
``site_assets/overrides/main.html``. Page URLs are assumed to be directory URLs (``verify.md`` -> ``verify/``), the
default of both builders.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "site_assets"
DOCS = ROOT / "docs"
NODE_MODULES = ROOT / "node_modules"
INITIAL = ASSETS / "initial"
CORE = DOCS / "core"
SERVICE_WORKER = "sw.js"

# What the site ships from node_modules: (source under node_modules, destination under the site, precache).
# A source ending in "/" is a folder whose files are all copied. ``precache`` is a glob of the copied files the
# service worker fetches as it installs, which every page needs to boot (None: cached once a page uses it).
VENDOR: tuple[tuple[str, str, str | None], ...] = (
    # Pyodide: the runtime only (the npm package holds no packages; the core needs the standard library alone)
    ("pyodide/pyodide.mjs", "vendor/pyodide/pyodide.mjs", "*"),
    ("pyodide/pyodide.asm.mjs", "vendor/pyodide/pyodide.asm.mjs", "*"),
    ("pyodide/pyodide.asm.wasm", "vendor/pyodide/pyodide.asm.wasm", "*"),
    ("pyodide/python_stdlib.zip", "vendor/pyodide/python_stdlib.zip", "*"),
    ("pyodide/pyodide-lock.json", "vendor/pyodide/pyodide-lock.json", "*"),
    # Plotly's partial bundles (js/runtime/charts.js picks one per figure): cartesian for 2D traces (heatmaps
    # included), gl3d for the home page's 3D lab.
    ("plotly.js-cartesian-dist-min/plotly-cartesian.min.js", "vendor/plotly-cartesian.min.js", None),
    ("plotly.js-gl3d-dist-min/plotly-gl3d.min.js", "vendor/plotly-gl3d.min.js", None),
    # KaTeX: its script and styles, and the fonts a page's math uses
    ("katex/dist/katex.min.js", "vendor/katex/katex.min.js", None),
    ("katex/dist/katex.min.css", "vendor/katex/katex.min.css", None),
    ("katex/dist/contrib/auto-render.min.js", "vendor/katex/contrib/auto-render.min.js", None),
    ("katex/dist/fonts/", "vendor/katex/fonts/", None),
)

# The lab's stylesheets in site_assets/css, in cascade order, served joined as css/lab.css. The source stays split
# (tokens, theme overrides, components); the page asks for one file. On a first visit over HTTP/1.1 (six connections
# to a host) every stylesheet was one more request ahead of the page's modules and the Python worker's script. Seven
# alternating A/B runs (7-14 first visits each, home and Playground): the first chart came earlier in five, by 19 ms
# (the median of the seven differences); ready moved within the runs' noise.
STYLESHEETS = ("plotly-global.css", "tokens.css", "theme.css", "components.css")
STYLESHEET = "css/lab.css"

# Folders of the docs tree that this step writes (and empties of anything else).
GENERATED = ("js", "css", "vendor", "core")

# Site builders whose versions change the HTML they write: part of the build digest.
BUILDERS = ("mkdocs", "mkdocs-material", "zensical", "pymdown-extensions", "markdown")

# Names whose meaning optimize=2 changes (asserts are checked separately).
OPTIMIZED_AWAY = frozenset({"__doc__", "__debug__"})

HINT = "run `make site`, which installs the npm packages first"

WIDGET_OPEN = re.compile(r"<div\b[^>]*\bclass=\"(?:[^\"]*\s)?sd-widget(?:\s[^\"]*)?\"[^>]*>")
WIDGET_NAME = re.compile(r"\bdata-widget=\"([a-z0-9][a-z0-9-]*)\"")
SETTINGS = re.compile(r"\s*<template data-sd-settings data-search-exclude>(.*)</template>\s*")
INCLUDE = re.compile(r"\s*--8<--\s+\"([^\"]*)\"\s*")
SCRIPT_TAG = re.compile(r"^\s*<script\b", re.IGNORECASE)
FENCE = re.compile(r"^\s*(```|~~~)")


class PrebuildError(Exception):
    """A problem the author must fix; the message says where and how."""


# --- files -----------------------------------------------------------------------------------------------------


def _copy(src: Path, dest: Path) -> None:
    # Skip unchanged files: the wasm and the stdlib are large, and builds run often.
    if dest.exists():
        s, d = src.stat(), dest.stat()
        if s.st_size == d.st_size and int(s.st_mtime) == int(d.st_mtime):
            return
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dest)


def _mirror(pairs: Iterable[tuple[Path, Path]], out: Path) -> list[Path]:
    """Copy each (source, destination) and delete every other file under ``out``: the tree holds exactly these."""
    written = []
    for src, dest in pairs:
        _copy(src, dest)
        written.append(dest)
    _prune(out, set(written))
    return sorted(written)


def _prune(out: Path, keep: set[Path]) -> None:
    """Delete every file under ``out`` but those in ``keep``, and the folders left empty."""
    if out.exists():
        for path in sorted(out.rglob("*"), reverse=True):
            if path.is_file() and path not in keep:
                path.unlink()
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()


def _write_text(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` unless it already holds it (an unchanged file keeps its time stamp)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text("utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def _generated(path: Path) -> bool:
    """Is ``path`` (under docs/) written by this step?"""
    rel = path.relative_to(DOCS).parts
    return bool(rel) and (rel[0] in GENERATED or rel[0] == SERVICE_WORKER)


def _site_path(path: Path) -> str:
    return path.relative_to(DOCS).as_posix()


def page_side() -> list[Path]:
    """docs/js/ mirrors site_assets/js; docs/css/ holds one stylesheet, site_assets/css's files joined."""
    scripts = _mirror(((p, DOCS / "js" / p.relative_to(ASSETS / "js")) for p in _files(ASSETS / "js")), DOCS / "js")
    return [*scripts, stylesheet()]


def stylesheet() -> Path:
    """Join site_assets/css's files in STYLESHEETS order into docs/css/lab.css (each under a comment naming it)."""
    found = sorted(p.name for p in _files(ASSETS / "css"))
    if found != sorted(STYLESHEETS):
        raise PrebuildError(
            f"site_assets/css holds {', '.join(found)}; STYLESHEETS in prebuild.py lists {', '.join(STYLESHEETS)}:"
            " list each stylesheet once, in cascade order"
        )
    sources = {name: (ASSETS / "css" / name).read_text("utf-8").rstrip() for name in STYLESHEETS}
    text = "\n".join(f"/* ---- site_assets/css/{name} ---- */\n{css}\n" for name, css in sources.items())
    out = _write_text(DOCS / STYLESHEET, text)
    _prune(out.parent, {out})
    return out


@dataclass(frozen=True)
class Vendored:
    source: Path
    dest: Path
    precache: bool


def vendored() -> list[Vendored]:
    """The files VENDOR names, expanded (folders to their files)."""
    missing = [src for src, _, _ in VENDOR if not (NODE_MODULES / src).exists()]
    if missing:
        raise PrebuildError(f"node_modules is missing {', '.join(missing)}: {HINT}")
    found = []
    for src, dest, precache in VENDOR:
        if src.endswith("/"):
            pairs = [(p, DOCS / dest / p.relative_to(NODE_MODULES / src)) for p in _files(NODE_MODULES / src)]
        else:
            pairs = [(NODE_MODULES / src, DOCS / dest)]
        found += [Vendored(s, d, precache is not None and fnmatch(d.name, precache)) for s, d in pairs]
    return found


def vendor() -> list[Vendored]:
    files = vendored()
    _mirror(((f.source, f.dest) for f in files), DOCS / "vendor")
    return files


# --- the core archive ------------------------------------------------------------------------------------------


def package_files() -> list[tuple[Path, str]]:
    """The package's files as its wheel installs them: (file, path in site-packages). Read from pyproject.toml's
    setuptools settings, so the archive holds what `pip install` would."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    found: list[tuple[Path, str]] = []
    for package in config["packages"]:
        folder = ROOT.joinpath(*package.split("."))
        patterns = ["*.py", *config.get("package-data", {}).get(package, [])]
        for path in sorted(p for p in folder.iterdir() if p.is_file()):
            if any(fnmatch(path.name, pattern) for pattern in patterns):
                found.append((path, path.relative_to(ROOT).as_posix()))
    if not any(name.endswith(".py") for _, name in found):
        raise PrebuildError("pyproject.toml's [tool.setuptools] names no Python package")
    return found


def check_optimizable(files: Iterable[tuple[Path, str]]) -> None:
    """The browser's bytecode is compiled with optimize=2 (no docstrings, no asserts): refuse code that would
    behave differently there than under pytest."""
    for path, name in files:
        if not name.endswith(".py"):
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"), name)):
            if isinstance(node, ast.Assert):
                what = "assert"
            elif isinstance(node, ast.Name) and node.id in OPTIMIZED_AWAY:
                what = node.id
            elif isinstance(node, ast.Attribute) and node.attr in OPTIMIZED_AWAY:
                what = node.attr
            else:
                continue
            raise PrebuildError(
                f"{name}:{node.lineno}: {what} behaves differently in the browser, whose bytecode is compiled with "
                "optimize=2 (compile_core.mjs); raise an exception, or keep the text elsewhere"
            )


def core_archive() -> list[Path]:
    """docs/core/specdec_core-VERSION-DIGEST.zip and manifest.json; returns both."""
    files = package_files()
    check_optimizable(files)
    compiler = ASSETS / "compile_core.mjs"
    pyodide = json.loads((NODE_MODULES / "pyodide" / "package.json").read_text("utf-8"))["version"]
    key = hashlib.sha256()
    for part in (compiler.read_bytes(), pyodide.encode()):
        key.update(hashlib.sha256(part).digest())
    for path, name in files:
        key.update(name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    sources = key.hexdigest()

    manifest_path = CORE / "manifest.json"
    if manifest_path.exists():
        manifest = json.loads(manifest_path.read_text("utf-8"))
        archive = CORE / manifest.get("file", "")
        if manifest.get("sources") == sources and archive.is_file():
            return [archive, manifest_path]

    version = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["version"]
    node = shutil.which("node")
    if node is None:
        raise PrebuildError(f"node is needed to compile specdec_core for the browser: {HINT}")
    with tempfile.TemporaryDirectory(prefix="sd-core-") as tmp:
        src_zip, out = Path(tmp) / "sources.zip", Path(tmp) / "core.zip"
        with zipfile.ZipFile(src_zip, "w") as archive_in:
            for path, name in files:
                archive_in.write(path, name)
        done = subprocess.run(
            [node, str(compiler), str(src_zip), str(out)], capture_output=True, text=True, timeout=600, check=False
        )
        if done.returncode != 0 or not out.exists():
            # Pyodide's errors carry its minified source: keep the last lines, each cut short.
            tail = "\n".join(line[:300] for line in done.stderr.strip().splitlines()[-12:])
            raise PrebuildError(f"{compiler.relative_to(ROOT)} failed ({done.returncode}):\n{tail}")
        payload = out.read_bytes()
    digest = hashlib.sha256(payload).hexdigest()
    name = f"specdec_core-{version}-{digest[:16]}.zip"
    if CORE.exists():
        shutil.rmtree(CORE)
    CORE.mkdir(parents=True)
    (CORE / name).write_bytes(payload)
    # The worker fetches this (revalidated) to learn the archive's name; the digest busts HTTP caches.
    manifest = {"file": name, "sha256": digest, "sources": sources}
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return [CORE / name, manifest_path]


# --- widgets: build-time results -------------------------------------------------------------------------------


def widget_names() -> set[str]:
    return {path.stem for path in (ASSETS / "js" / "widgets").glob("*.js")}


def pages() -> list[Path]:
    """The Markdown pages, sorted."""
    return sorted(p for p in DOCS.rglob("*.md") if not _generated(p))


def page_url(page: Path) -> str:
    """The page's URL relative to the site root, as both builders write it ("" for the home page)."""
    rel = page.relative_to(DOCS).with_suffix("")
    if rel.name in ("index", "README"):
        rel = rel.parent
    return "" if str(rel) == "." else rel.as_posix() + "/"


def include_name(page: Path, index: int) -> str:
    """The include a page's ``index``-th widget (from 1) must name: site_assets/initial/PAGE-N.html."""
    stem = page.relative_to(DOCS).with_suffix("").as_posix()
    return f"{INITIAL.relative_to(ROOT).as_posix()}/{stem}-{index}.html"


def _inert_json(value: Any) -> str:
    # Inside <template> the text is parsed as HTML: escape the three characters that could start markup or an
    # entity. \u003c and friends are ordinary JSON escapes, so JSON.parse restores them.
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


@dataclass(frozen=True)
class Placeholder:
    page: Path
    line: int  # 1-based, of the opening <div>
    index: int  # 1-based, among the page's widgets
    name: str
    settings: dict[str, Any]

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def _outside_fences(lines: list[str]) -> Iterator[tuple[int, str]]:
    fenced = None
    for number, line in enumerate(lines, 1):
        fence = FENCE.match(line)
        if fence and (fenced is None or fence.group(1) == fenced):
            fenced = fence.group(1) if fenced is None else None
            continue
        if fenced is None:
            yield number, line


def placeholders(page: Path, known: set[str]) -> list[Placeholder]:
    """The page's widget placeholders, checked: name, settings line, include line."""
    lines = page.read_text("utf-8").splitlines()
    found: list[Placeholder] = []
    for number, line in _outside_fences(lines):
        rel = page.relative_to(ROOT)
        if SCRIPT_TAG.match(line):
            raise PrebuildError(
                f"{rel}:{number}: a <script> in page content breaks under instant navigation (Material re-creates "
                "it without its type); put data in a widget's settings template instead"
            )
        opening = WIDGET_OPEN.search(line)
        if opening is None:
            continue
        name_match = WIDGET_NAME.search(opening.group(0))
        if name_match is None:
            raise PrebuildError(f'{rel}:{number}: a widget placeholder needs data-widget="name": {line.strip()}')
        name = name_match.group(1)
        if name not in known:
            raise PrebuildError(f"{rel}:{number}: no widget file site_assets/js/widgets/{name}.js for {name!r}")
        index = len(found) + 1
        expected = include_name(page, index)
        following = [*lines[number : number + 2], "", ""]
        settings_match = SETTINGS.fullmatch(following[0])
        if settings_match is None:
            raise PrebuildError(
                f"{rel}:{number + 1}: widget {name!r} needs its settings on the next line: "
                '<template data-sd-settings data-search-exclude>{"handler": ..., "args": {...}}</template>'
            )
        text = settings_match.group(1)
        if "<" in text or "&" in text:
            raise PrebuildError(f"{rel}:{number + 1}: widget {name!r} settings: write < and & as \\u003c and \\u0026")
        try:
            settings = json.loads(text)
        except json.JSONDecodeError as exc:
            raise PrebuildError(f"{rel}:{number + 1}: widget {name!r} settings are not valid JSON: {exc}") from exc
        if not isinstance(settings, dict):
            raise PrebuildError(f"{rel}:{number + 1}: widget {name!r} settings must be a JSON object")
        include = INCLUDE.fullmatch(following[1])
        if include is None or include.group(1) != expected:
            got = f"it reads {following[1].strip()!r}" if following[1].strip() else "the line is missing"
            raise PrebuildError(
                f'{rel}:{number + 2}: widget {name!r} (the page\'s widget {index}) needs the line --8<-- "{expected}" '
                f"after its settings; {got}"
            )
        found.append(Placeholder(page, number, index, name, settings))
    return found


def initial_result(widget: Placeholder) -> str | None:
    """Run the widget's handler natively; its JSON result, or None when the settings name no handler."""
    handler = widget.settings.get("handler")
    if handler is None:
        return None
    args = widget.settings.get("args", {})
    if not isinstance(handler, str) or not isinstance(args, dict):
        raise PrebuildError(f'{widget.where}: settings need "handler" (a string) and "args" (an object)')
    web = importlib.import_module("specdec_core.web")
    try:
        result: str = web.call(handler, json.dumps(args))
    except Exception as exc:
        raise PrebuildError(f"{widget.where}: widget {widget.name!r}: {handler}({args}) failed: {exc!r}") from exc
    return _inert_json(json.loads(result))


WIDGET_MODULES = "widget-modules.html"


STATIC_IMPORT = re.compile(r'^import\b[^;]*?\bfrom\s+"(\.{1,2}/[^"]+)";', re.MULTILINE)


def static_imports(module: str) -> list[str]:
    """Site paths of the modules ``module`` (a site path under js/) imports statically, recursively."""
    found: list[str] = []
    todo = [module]
    while todo:
        current = Path(todo.pop())
        source = ASSETS / current
        for spec in STATIC_IMPORT.findall(source.read_text("utf-8")) if source.exists() else []:
            target = os.path.normpath(current.parent / spec).replace(os.sep, "/")
            if target not in found:
                found.append(target)
                todo.append(target)
    return found


def _preload(path: str) -> str:
    return '<link rel="modulepreload" href="{{ \'' + path + "' | url }}\">"


def widget_modules(names: Iterable[str]) -> Path:
    """site_assets/overrides/widget-modules.html: the template lists, on each page, a module script for each widget
    the page holds, and ``modulepreload`` hints for the modules lab.js and those widgets import (without them the
    browser finds each import only after fetching its importer, one round trip per level). It tests the rendered
    content for each known name (``in`` and ``~`` work in both builders' template engines; Zensical's has no
    ``split``), and ``url`` makes the path relative to the page."""
    common = static_imports("js/lab.js")
    text = "{#- Written by site_assets/prebuild.py from site_assets/js/widgets/: do not edit. -#}\n"
    text += "".join(_preload(path) for path in common)
    text += "{% if page and page.content %}"
    for name in sorted(names):
        module = f"js/widgets/{name}.js"
        extra = [path for path in static_imports(module) if path not in common]
        text += "{% if 'data-widget=\"" + name + "\"' in page.content %}"
        text += "".join(_preload(path) for path in extra)
        text += '<script type="module" src="{{ \'' + module + "' | url }}\"></script>{% endif %}"
    text += "{% endif %}\n"
    return _write_text(ASSETS / "overrides" / WIDGET_MODULES, text)


def initial_results() -> tuple[list[Path], list[str]]:
    """Write site_assets/initial/*.html for every widget; returns the files and the pages' URLs."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    known = widget_names()
    written: list[tuple[Path, str]] = []
    urls = []
    for page in pages():
        urls.append(page_url(page))
        widgets = placeholders(page, known)
        for widget in widgets:
            result = initial_result(widget)
            body = "" if result is None else f"<template data-sd-initial data-search-exclude>{result}</template>"
            written.append((ROOT / include_name(page, widget.index), body + "\n"))
    keep = {_write_text(path, text) for path, text in written}
    _prune(INITIAL, keep)
    return sorted(keep), urls


# --- the service worker ----------------------------------------------------------------------------------------

BUILD_TEMPLATE = "const BUILD = {...}; // written by prebuild.py"
BUILD_LINE = re.compile(r"^const BUILD = .*; // written by prebuild\.py$", re.MULTILINE)


def build_digest(outputs: Iterable[Path]) -> str:
    """One digest of everything that shapes the built site, so any change gives the service worker a new cache."""
    digest = hashlib.sha256()
    inputs = [
        *outputs,
        *(p for p in _files(DOCS) if not _generated(p)),
        *_files(ASSETS / "overrides"),
        ASSETS / SERVICE_WORKER,
        ASSETS / "typeset.mjs",  # run on the built pages (make site)
        ROOT / "mkdocs.yml",
        *(path for path, _ in package_files()),  # pages include the package's source as code listings
    ]
    for path in sorted(set(inputs)):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    for builder in BUILDERS:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            digest.update(f"{builder}=={importlib.metadata.version(builder)}\0".encode())
    digest.update(os.environ.get("SITE_URL", "").encode())
    return digest.hexdigest()[:16]


def service_worker(version: str, files: list[str]) -> Path:
    source = (ASSETS / SERVICE_WORKER).read_text("utf-8")
    if len(BUILD_LINE.findall(source)) != 1:
        raise PrebuildError(f"site_assets/{SERVICE_WORKER} needs one line: {BUILD_TEMPLATE}")
    build = json.dumps({"version": version, "files": files}, separators=(",", ":"))
    text = BUILD_LINE.sub(lambda _: f"const BUILD = {build}; // written by prebuild.py", source)
    return _write_text(DOCS / SERVICE_WORKER, text)


# --- all of it -------------------------------------------------------------------------------------------------


def prebuild() -> str:
    """Write everything; returns the build digest."""
    scripts = page_side()
    vendor_files = vendor()
    core = core_archive()
    initial, _ = initial_results()  # the pages' URLs: none is precached
    widget_modules(widget_names())
    version = build_digest([*scripts, *(f.dest for f in vendor_files), *core, *initial])
    # Precached: what every page needs to boot (the runtime, the core, the lab's scripts but the widgets, its
    # styles) and the sitemap (Material's instant navigation reads it). A page, its widgets, its Plotly bundle,
    # KaTeX and the theme's files are cached once a page uses them (js/offline.js reports them; later fetches are
    # kept as they pass), so a first visit downloads nothing its page does not use.
    precache = [
        "sitemap.xml",
        *(_site_path(p) for p in scripts if not _site_path(p).startswith("js/widgets/")),
        *(_site_path(f.dest) for f in vendor_files if f.precache),
        *(_site_path(p) for p in core),
    ]
    service_worker(version, precache)
    return version


def main() -> None:
    try:
        version = prebuild()
    except PrebuildError as exc:
        sys.exit(f"prebuild: {exc}")
    print(f"prebuild: docs/ holds the page side, the vendored runtime and the core; build {version}")


if __name__ == "__main__":
    main()
