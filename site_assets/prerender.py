"""After the site builder and typeset.mjs: each page's first widget, drawn into its HTML as it first paints, and
the width of each formula written into it.

Until now a chart could show only once the page's widget modules had run, after the page's first frame; the theme's
start-up then often held the frame that drew it (on a 2-core machine the Playground's first chart came ~150-300 ms
after the page's first paint). Here headless Chromium opens each built page at 1280 x 900 with Python held back,
lets the page's first widget paint its build-time result (the controls, the sketched charts of js/runtime/sketch.js,
the tiles), and writes a copy of what it drew into the widget's placeholder, so the browser paints it with the page.

The copy is marked ``data-sd-pre``, ``inert`` and ``aria-hidden``: nothing in it can be used or read out. When the
widget's module binds it (js/ui/widget.js), the copy goes in the same task as the live widget is built, so no frame
shows both or neither. The sketch's theme colours (text, grid and zero lines) become the theme's CSS variables, so
the copy follows the reader's colour scheme; its SVGs keep their height and scale to the column's width, and below
720 px (css/components.css), where a chart drawn for 1280 px would show at about half its size, they are not
shown. A link whose query sets the page's controls hides the copy, which shows the defaults (``html.sd-linked``, set
by the <head> script, and by js/lab.js after instant navigation; css/components.css): the first paint honours the
link.

It also writes each formula's width into the page. typeset.mjs sets the math in KaTeX's HTML, whose heights are in
the markup but whose widths come from KaTeX's fonts, which KaTeX's stylesheet declares ``font-display: block``:
until a font arrives, the math is laid out, unseen, in a fallback font, and when it arrives the lines around it
break anew. A page whose fonts came after its first paint moved: Trees at 390 px by 0.155 (the Layout Instability
API's score; 0.1 is "good"). So, once the fonts have loaded, each ``katex-base`` (KaTeX's unbreakable run of a
formula; a line may break between two) is measured, its details, tabs and deferred sections shown, and its width
written in em as an inline style. KaTeX's stylesheet sizes it ``min-content``: the same width, to under 0.1 px, once
the font is there, and a fixed one before.

Usage: python site_assets/prerender.py SITE_DIR. The browser: $SD_CHROMIUM, else the first of CANDIDATES found.
Without one the pages are left as the builder wrote them, and this says so: the site works the same, its first
chart is drawn once the widget modules have run. Fails on a page whose first widget does not paint within TIMEOUT_MS.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from playwright.sync_api import BrowserContext, ConsoleMessage, ViewportSize, sync_playwright

CANDIDATES = (
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
VIEWPORT: ViewportSize = {"width": 1280, "height": 900}
TIMEOUT_MS = 60_000
# A larger copy is left out, and the build says so: every visit would download it and the first frame lay it out
# (Tuning's calculator copy was ~300 KB before js/runtime/sketch.js drew a heatmap's runs of equal cells as one rect;
# it is ~62 KB now). A browser test expects a copy on every page, so a copy that grows past this fails there.
MAX_BYTES = 64 * 1024
OPENING = re.compile(r'<div class="sd-widget[^"]*" data-widget="(?P<name>[a-z0-9-]+)"[^>]*>')
TEMPLATE = re.compile(r"\s*<template\b[^>]*>.*?</template>", re.S)

# Runs in the page once its first widget has painted (PAINTED). Returns [widget name, the copy's HTML].
COPY = """() => {
  const widget = document.querySelector(".sd-widget[data-widget]");
  const probe = document.createElement("span");
  document.body.append(probe);
  const theme = {};
  for (const name of ["--md-default-fg-color", "--md-default-fg-color--lighter", "--md-default-fg-color--lightest"]) {
    probe.style.color = `var(${name})`;
    theme[getComputedStyle(probe).color] = `var(${name})`;
  }
  probe.remove();
  // The widgets link to other pages by absolute URL, which here names the build's server: relative in the copy.
  const here = location.pathname.split("/").slice(0, -1);
  const relative = (url) => {
    const target = new URL(url, location.href);
    if (target.origin !== location.origin) return url;
    const to = target.pathname.split("/");
    let i = 0;
    while (i < here.length && i < to.length - 1 && here[i] === to[i]) i++;
    return "../".repeat(here.length - i) + to.slice(i).join("/") + target.search + target.hash || "./";
  };
  const parts = [];
  for (const child of widget.children) {
    if (child.matches("template, .sd-pending, .sd-notice, .sd-error")) continue;
    const copy = child.cloneNode(true);
    // What the reader set is in properties, which a copy's HTML does not hold.
    const live = child.querySelectorAll("input, select, textarea");
    copy.querySelectorAll("input, select, textarea").forEach((el, i) => {
      if (el.type === "checkbox" || el.type === "radio") el.toggleAttribute("checked", live[i].checked);
      else if (el.tagName === "SELECT")
        [...el.options].forEach((o, j) => o.toggleAttribute("selected", live[i].options[j].selected));
      else el.setAttribute("value", live[i].value);
    });
    for (const el of [copy, ...copy.querySelectorAll("*")]) {
      for (const attr of ["fill", "stroke"]) {
        const color = el.getAttribute(attr);
        if (color && theme[color]) {
          el.removeAttribute(attr);
          el.style.setProperty(attr, theme[color]);
        }
      }
      el.removeAttribute("data-sd-renders");
      for (const attr of ["href", "src"]) {
        const url = el.getAttribute(attr);
        if (url && /^https?:/.test(url)) el.setAttribute(attr, relative(url));
      }
    }
    copy.setAttribute("data-sd-pre", "");
    copy.setAttribute("inert", "");
    copy.setAttribute("aria-hidden", "true");
    parts.push(copy.outerHTML);
  }
  return [widget.dataset.widget, parts.join("")];
}"""

# Each formula's unbreakable runs (KaTeX's katex-base spans), in document order: the width in em of each one laid
# out, once every font has loaded, or null for one that is not (a hidden tab of a kind this does not open).
# Everything the page hides until the reader or Python shows it is shown first: deferred sections (html.sd-boot),
# closed details, the content tabs not selected.
MATH_WIDTHS = """async () => {
  document.documentElement.classList.remove("sd-boot");
  for (const details of document.querySelectorAll("details")) details.open = true;
  const style = document.createElement("style");
  style.textContent = ".tabbed-set > .tabbed-content > .tabbed-block { display: block !important; }";
  document.head.append(style);
  await document.fonts.ready;
  return [...document.querySelectorAll(".katex .katex-base")].map((run) => {
    if (!run.getClientRects().length) return null;
    const em = parseFloat(getComputedStyle(run).fontSize);
    return Math.round((10000 * run.getBoundingClientRect().width) / em) / 10000;
  });
}"""
MATH_RUN = re.compile(r'<span class="katex-base"( style="[^"]*")?>')

# The first widget has painted its build-time result. Its charts are sketched in a microtask of that paint's task
# (js/runtime/charts.js), so they are drawn by the time this is polled (at an animation frame).
PAINTED = """() => {
  const widget = document.querySelector(".sd-widget[data-widget]");
  if (!widget?.querySelector(":scope > template[data-sd-initial]")) return "none";
  return Number(widget.dataset.sdPaints || 0) >= 1 ? "painted" : "";
}"""


def browser_path() -> str | None:
    chosen = os.environ.get("SD_CHROMIUM")
    if chosen:
        return chosen
    return next((path for path in CANDIDATES if Path(path).exists()), None)


@contextmanager
def served(site: Path) -> Iterator[str]:
    handler = functools.partial(QuietHandler, directory=str(site))
    server = QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # A request the browser dropped (a held one, as it closes) is expected; anything else is printed.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def insert(html: str, name: str, copy: str, page: Path) -> str:
    """The page's HTML with ``copy`` after the templates of its first placeholder, which must be ``name``'s."""
    opening = OPENING.search(html)
    if not opening or opening["name"] != name:
        raise SystemExit(f"{page}: the first widget placeholder is not {name!r} as the browser found it")
    at = opening.end()
    while template := TEMPLATE.match(html, at):
        at = template.end()
    rest = html[at:].lstrip()
    if not rest.startswith("</div>"):
        raise SystemExit(f"{page}: the {name} placeholder holds more than its templates")
    return html[:at] + copy + html[at:]


def with_widths(html: str, widths: list[float | None], page: Path) -> str:
    """The page's HTML with each formula run's measured width (em) as its inline style."""
    runs = MATH_RUN.findall(html)
    if any(runs):
        raise SystemExit(f"{page}: its formulas have widths already (run on a page this script has written)")
    if len(runs) != len(widths):
        raise SystemExit(f"{page}: {len(widths)} formula runs in the browser, {len(runs)} in the file")
    measured = iter(widths)

    def sized(match: re.Match[str]) -> str:
        width = next(measured)
        return match[0] if width is None else f'<span class="katex-base" style="width:{width:g}em">'

    return MATH_RUN.sub(sized, html)


def pages(site: Path) -> list[Path]:
    """The pages with a widget or a formula."""
    found = []
    for page in sorted(site.rglob("index.html")):
        html = page.read_text(encoding="utf-8")
        if OPENING.search(html) or MATH_RUN.search(html):
            found.append(page)
    return found


def visit(context: BrowserContext, url: str) -> tuple[tuple[str, str] | None, list[float | None]]:
    """[widget name, the copy's HTML] of the first widget on the page at ``url`` (None where it has none or no
    first paint before Python: no build-time result), and the widths of its formulas' runs (MATH_WIDTHS)."""
    page = context.new_page()
    errors: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            errors.append(message.text)

    page.on("console", on_console)
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(url)
        state = page.wait_for_function(PAINTED, timeout=TIMEOUT_MS).json_value()
        copy = None
        if state == "painted":
            name, html = page.evaluate(COPY)
            copy = str(name), str(html)
        # After the copy, which is of the page as it first paints: the widths' script shows what the page hides.
        widths = [None if w is None else float(w) for w in page.evaluate(MATH_WIDTHS)]
        if errors:
            raise SystemExit(f"prerender: {url}: the page logged errors: {errors}")
        return copy, widths
    finally:
        page.close()


def main(site: Path) -> None:
    executable = browser_path()
    if executable is None:
        print(f"prerender: no Chromium ({', '.join(CANDIDATES)}; or set SD_CHROMIUM): {site}'s pages are left as built")
        return
    done = []
    runs = 0
    with served(site) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=FLAGS)
        context = browser.new_context(viewport=VIEWPORT, color_scheme="light", service_workers="block")
        # Python is held back: no request for the runtime is ever answered, so the widget shows its first paint.
        context.route("**/vendor/pyodide/**", lambda route: None)
        for page_file in pages(site):
            path = page_file.relative_to(site).parent.as_posix()
            found, widths = visit(context, base + ("" if path == "." else path + "/"))
            html = with_widths(page_file.read_text(encoding="utf-8"), widths, page_file)
            runs += sum(width is not None for width in widths)
            if found is not None:
                name, copy = found
                if len(copy.encode()) > MAX_BYTES:
                    done.append(f"{path} ({name}: left out, {len(copy.encode()) // 1024} KB)")
                else:
                    html = insert(html, name, copy, page_file)
                    done.append(f"{path} ({name}, {len(copy.encode()) // 1024} KB)")
            page_file.write_text(html, encoding="utf-8")
        browser.close()
    print(f"prerender: the first widget of {len(done)} pages in {site}: {', '.join(done)}")
    print(f"prerender: the widths of {runs} formula runs")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(Path(sys.argv[1]))
