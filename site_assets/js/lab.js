// The lab's entry module: starts Python, keeps the status line, and mounts each page's widgets (ui/widget.js) on
// the first load and on Material's instant navigation alike (document$). window.SDLab is for tests, benchmarks
// and offline.js: call() runs a handler without a widget or banner; debug() counts charts and widgets (leak test).

import { chartCount, preload, retryPlotly, startPlotly } from "./runtime/charts.js";
import { onStatus, python } from "./runtime/python.js";
import { showError, showStatus } from "./ui/status.js";
import { pageShown } from "./ui/url.js";
import { mountAll, remountAll, setRetry, widgetCount } from "./ui/widget.js";

// Retry: a fresh worker if it failed, and every widget on the page mounted again from its placeholder.
function retryAll() {
  document.querySelectorAll(".sd-error").forEach((el) => el.remove());
  if (python.state === "error") python.restart();
  retryPlotly();
  remountAll();
}
setRetry(retryAll);

// Laying out long code listings during the boot delayed the first chart by ~100 ms, so html.sd-boot (set from
// <head>) hides .sd-later sections until Python is ready or has failed, one comes within a screen of the
// viewport, an anchor leads into one, or the page is printed.
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
  for (const el of document.querySelectorAll(".sd-later"))
    laterObserver.observe(el.previousElementSibling || el.parentElement);
}

addEventListener("beforeprint", showLater);
addEventListener("hashchange", () => {
  if (!document.documentElement.classList.contains("sd-boot")) return;
  showLater();
  document.getElementById(decodeURIComponent(location.hash.slice(1)))?.scrollIntoView();
});

// Plotly loads once start-up has ended, however it ended (charts.js says why); until then charts are sketches.
const chartsFailed = (err) => err.shown || showError(err, retryAll);
function statusChanged(p) {
  showStatus(p);
  if (p.state !== "loading") {
    showLater();
    startPlotly().catch(chartsFailed);
    window.__sdSearch?.go(); // the theme's search index waits for this (js/search-later.js)
  }
  if (p.state === "error" && !p.error.shown) showError(p.error, retryAll);
}
onStatus(statusChanged);

function onPage() {
  pageShown(location.pathname);
  // As the <head> script does on a full load: a query that sets controls hides the page's build-time copy of its
  // first widget (drawn with the defaults) until the widget binds. Here instant navigation brought the page.
  const linked = [...new URLSearchParams(location.search).keys()].some((key) => key !== "h");
  document.documentElement.classList.toggle("sd-linked", linked);
  // Material's search overlay is a dialog without a name (axe-core: aria-dialog-name); the header persists.
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
// The page's widget modules ran first and started Python (ui/widget.js, define): a start-up that has already
// ended is taken up as if it had just happened.
if (!python.worker) python.start();
else if (python.state !== "loading") statusChanged(python);
if (window.__sdBench?.plotlyAtOnce) startPlotly().catch(chartsFailed); // benchmarks/bench_browser.py
// Deferred modules run before the theme's start-up (document$): mount now what the widget modules did not (one
// whose module failed to load, say); onPage mounts nothing twice.
if (document.readyState !== "loading") mountAll();
if (window.document$) window.document$.subscribe(onPage);
else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", onPage);
else onPage();
