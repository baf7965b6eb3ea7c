// The lab's entry module: starts Python, keeps the status line, and mounts each page's widgets (ui/widget.js),
// first load and Material's instant navigation alike (document$). See DESIGN.md, "The page side".
//
// window.SDLab is for tests, benchmarks and offline.js (no widget uses it): call(name, args) runs a handler without
// any widget or banner; debug() counts what the page holds (charts, widgets) for the leak test.

import { chartCount, preload, retryPlotly, startPlotly } from "./runtime/charts.js";
import { onStatus, python } from "./runtime/python.js";
import { showError, showStatus } from "./ui/status.js";
import { mountAll, remountAll, setRetry, widgetCount } from "./ui/widget.js";

// Retry: a fresh worker if it failed, and every widget on the page mounted again from its placeholder.
function retryAll() {
  document.querySelectorAll(".sd-error").forEach((el) => el.remove());
  if (python.state === "error") python.restart();
  retryPlotly();
  remountAll();
}
setRetry(retryAll);

// --- deferred sections ------------------------------------------------------------------------------------------

// html.sd-boot (set from <head>) keeps .sd-later sections unstyled while Python boots (css/components.css). They are shown
// once Python is ready or has failed, or as soon as one comes within a screen of the viewport.
let laterObserver = null;

function showLater() {
  document.documentElement.classList.remove("sd-boot");
  laterObserver?.disconnect();
  laterObserver = null;
}

function watchLater() {
  if (!document.documentElement.classList.contains("sd-boot")) return;
  laterObserver ??= new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && showLater(), {
    rootMargin: "0px 0px 100% 0px",
  });
  // A hidden section has no box to watch: watch what comes before it (its heading).
  for (const el of document.querySelectorAll(".sd-later")) laterObserver.observe(el.previousElementSibling || el.parentElement);
}

addEventListener("beforeprint", showLater);
// A link to an anchor inside a hidden section scrolled to nothing: show the section, then scroll again.
addEventListener("hashchange", () => {
  if (!document.documentElement.classList.contains("sd-boot")) return;
  showLater();
  document.getElementById(decodeURIComponent(location.hash.slice(1)))?.scrollIntoView();
});

// --- wiring -----------------------------------------------------------------------------------------------------

// Plotly loads once start-up has ended, however it ended (charts.js says why); until then charts are sketches.
const chartsFailed = (err) => err.shown || showError(err, retryAll);
function statusChanged(p) {
  showStatus(p);
  if (p.state !== "loading") {
    showLater();
    startPlotly().catch(chartsFailed);
  }
  if (p.state === "error" && !p.error.shown) showError(p.error, retryAll);
}
onStatus(statusChanged);

function onPage() {
  // Material's search overlay is a dialog without a name (axe-core: aria-dialog-name); the header persists across
  // instant navigation, so naming it once per page is enough.
  document.querySelector('.md-search[role="dialog"]:not([aria-label])')?.setAttribute("aria-label", "Search");
  showStatus(python);
  if (python.error) showError(python.error, retryAll);
  preload(document);
  mountAll();
  watchLater();
}

window.SDLab = Object.freeze({
  call: (name, args, options) => python.call(name, args, options),
  ready: () => python.ready,
  worker: () => python.worker,
  debug: () => ({ charts: chartCount(), widgets: widgetCount() }),
  site: new URL("../", import.meta.url).href, // the site's root, whatever sub-path it is served under
});
document.documentElement.dataset.sdCharts = "sketch";
// The page's widget modules run first and start Python (ui/widget.js, define); a start-up that has already ended
// is taken up here as if it had just happened.
if (!python.worker) python.start();
else if (python.state !== "loading") statusChanged(python);
// benchmarks/bench_browser.py measures what loading Plotly with the page, before Python, would cost.
if (window.__sdBench?.plotlyAtOnce) startPlotly().catch(chartsFailed);
// Deferred modules run once the document is parsed, before the theme's start-up (document$, KaTeX); the page's
// widget modules ran just before this one and mounted their placeholders, so this mounts only what they did not
// (a widget whose module failed to load, say); onPage mounts nothing twice.
if (document.readyState !== "loading") mountAll();
if (window.document$) window.document$.subscribe(onPage);
else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", onPage);
else onPage();
