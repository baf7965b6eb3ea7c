// The lab's page side: one Python worker per tab, the global status line, and the widget registry.
//
// WIDGET API (for files in site_assets/js/widgets/NAME.js; the page template loads a page's own widgets as modules
// after this file (site_assets/overrides), and a page reached by instant navigation gets the ones it lacks from
// loadWidget below)
//
//   A page holds a placeholder; the settings template must directly follow the opening tag, then the include:
//
//     <div class="sd-widget" data-widget="NAME">
//     <template data-sd-settings data-search-exclude>{"handler": "verify.pair", "args": {"blend": 0}}</template>
//     --8<-- "site_assets/initial/PAGE-N.html"
//     </div>
//
//   Before the site is built, site_assets/prebuild.py runs specdec_core.web.call(handler, args) natively and writes
//   the result to the included file, so the widget can paint before Python boots. "handler"/"args" are optional;
//   everything in the settings reaches the widget. Never put <script> tags in page content: instant navigation
//   re-creates them without their type.
//
//     SDLab.register("NAME", {
//       mount(el, ctx) {            // el: the placeholder; may return a cleanup function (or a promise)
//         ctx.settings              // the settings object ({} when none)
//         ctx.initial               // the build-time result of settings.handler(settings.args), or null
//         ctx.ready                 // Promise: resolves when Python is ready (rejects if start-up failed)
//         ctx.call(name, args, {signal})  // Promise<result object>: runs a specdec_core.web handler in the worker.
//                                   //   Args cross as JSON. On a Python error the widget shows an error banner
//                                   //   (last traceback line + Retry) and the promise rejects; no need to catch.
//         ctx.latest(name, onResult)   // -> request(args): for sliders. Coalesces: at most one call in flight,
//                                   //   only the newest queued args run next; onResult(result, args).
//         ctx.task()                // -> {signal, stop()}: for long runs. Run many short calls in a loop and
//                                   //   check task.signal.aborted between them; a Stop button calls task.stop().
//                                   //   Also stopped when the widget unmounts (navigation, Retry).
//         ctx.signal                // AbortSignal: aborted when the widget unmounts
//         ctx.chart(label)          // -> an empty <div class="sd-chart" role="figure" aria-label=label>
//         ctx.render(target, figure)   // Promise: Plotly.react with the current light/dark theme applied;
//                                   //   re-rendered automatically when the reader toggles the palette
//         ctx.slider({key, label, min, max, step, value, format})  // -> {root, input, output, value}: a labelled
//                                   //   range input (append root yourself); `value` is the number
//         ctx.number({key, label, min, max, step, value})  // -> {root, input, value}: a labelled number input
//         ctx.button(label, onClick)   // -> a <button type=button class="md-button">
//         ctx.metrics([{name, label}])  // -> element holding [data-metric=name] outputs (aria-live)
//         ctx.setMetric(name, value, text?)  // sets data-value (raw number) and text on [data-metric=name] in el
//         ctx.setMetrics({name: value}, {name: format}?)
//         ctx.url.read(spec?)       // -> {key: number}: query params quality, gamma, alpha, cost, seed (or the
//                                   //   keys of spec: {key: {min, max, step, value}}), clamped into range; each
//                                   //   correction shows a visible notice ("gamma 99 is out of range; clamped to 8")
//         ctx.url.write({key: value})  // replaces the query string (history.replaceState), so a link reproduces it
//         ctx.notice(text)          // a visible note at the top of the widget
//       },
//     });
//
//   Mounting is idempotent (el gets data-sd-mounted). The widget gets data-sd-live once a live call succeeded.
//   Paint ctx.initial first, then call live once ctx.ready resolves (widgets/pair.js is the smallest example).
//
//   A long run that a Stop button can end (each CALL is short; the loop stops between calls):
//
//     const run = ctx.task();
//     stopButton.onclick = run.stop;
//     while (!run.signal.aborted) paint(await ctx.call("some.handler", {...}, { signal: run.signal }));
//
//   An aborted call rejects with an AbortError, which ends the loop quietly (never logged as an error).
//
// Status: one [data-sd-status] element in the header, value loading | ready | error.

import { MSG, message } from "./protocol.js";
import { sketch } from "./sketch.js";

const SITE = new URL("../", import.meta.url);
const READY_TEXT = "Python is ready";

// --- status line ----------------------------------------------------------------------------------------------

const status = { state: "loading", text: "Loading Python…" };

function statusElement() {
  let el = document.querySelector("[data-sd-status]");
  if (el) return el;
  el = document.createElement("div");
  el.className = "sd-status";
  el.setAttribute("role", "status");
  el.setAttribute("aria-live", "polite");
  const anchor = document.querySelector(".md-header__title") || document.querySelector(".md-header__inner");
  if (anchor && anchor.classList.contains("md-header__title")) anchor.after(el);
  else if (anchor) anchor.append(el);
  else document.body.prepend(el);
  return el;
}

function setStatus(state, text) {
  status.state = state;
  status.text = text;
  const el = statusElement();
  el.dataset.sdStatus = state;
  el.textContent = text;
  el.title = text;
}

// --- the worker -------------------------------------------------------------------------------------------------

// A failure from Python (or from start-up) with the line a reader sees.
export class SDError extends Error {
  constructor(reply, handler) {
    super(reply.traceback_last_line || "unknown error");
    this.name = "SDError";
    this.lastLine = this.message;
    this.traceback = reply.error || this.message;
    this.phase = reply.phase || null;
    this.handler = handler || null;
    this.title = reply.title || null; // the banner's heading, when the failure is not Python's
    this.shown = false; // set once a banner displays it; such rejections are not logged as unhandled
  }
}

const python = {
  worker: null,
  pending: new Map(), // CALL id -> {resolve, reject, name}
  ready: null,
  phase: null,
  error: null,

  start() {
    this.error = null;
    this.phase = null;
    let settle;
    this.ready = new Promise((resolve, reject) => (settle = { resolve, reject }));
    this.ready.catch(() => {}); // observed through status and banners; never an unhandled rejection
    this.settle = settle;
    setStatus("loading", "Loading Python…");
    // The first worker of a tab was started by the inline script in <head> (site_assets/overrides), before this
    // module loaded; it holds what the worker said so far. Retry starts a new one here.
    const boot = window.__sdBoot;
    window.__sdBoot = null;
    this.worker = boot?.worker || new Worker(new URL("worker.js", import.meta.url), { type: "module" });
    const init = message(MSG.INIT);
    this.initId = init.id;
    this.worker.onmessage = (event) => this.receive(event.data);
    // Fires when the worker script itself (or pyodide.mjs) cannot load: no ERROR message will come.
    const failed = (text) => this.fail({ phase: this.phase || "runtime", traceback_last_line: text || "the Python worker failed to load" });
    this.worker.onerror = (event) => {
      event.preventDefault();
      failed(event.message);
    };
    for (const reply of boot?.queue || []) this.receive(reply);
    if (boot?.error !== undefined && boot?.error !== null) failed(boot.error);
    this.worker.postMessage(init);
  },

  receive(reply) {
    if (reply.type === MSG.PROGRESS) {
      this.phase = reply.phase;
      setStatus("loading", `Loading Python… (${reply.phase})`);
    } else if (reply.type === MSG.READY) {
      setStatus("ready", READY_TEXT);
      this.settle.resolve(reply.version);
    } else if (reply.type === MSG.ERROR && reply.id === this.initId) {
      this.fail(reply);
    } else if (reply.type === MSG.RESULT || reply.type === MSG.ERROR) {
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      if (reply.type === MSG.RESULT) waiter.resolve(JSON.parse(reply.value));
      else waiter.reject(new SDError(reply, waiter.name));
    }
  },

  fail(reply) {
    if (this.error) return;
    this.error = new SDError(reply);
    setStatus("error", `Error: Python failed to start (${this.error.phase || "start-up"})`);
    this.settle.reject(this.error);
    for (const waiter of this.pending.values()) waiter.reject(this.error);
    this.pending.clear();
    showPageError(this.error);
  },

  async call(name, args) {
    await this.ready;
    return new Promise((resolve, reject) => {
      const msg = message(MSG.CALL, { name, args: JSON.stringify(args ?? {}) });
      this.pending.set(msg.id, { resolve, reject, name });
      this.worker.postMessage(msg);
    });
  },

  restart() {
    this.worker.onmessage = this.worker.onerror = null;
    this.worker.terminate();
    const stopped = new SDError({ traceback_last_line: "the Python worker was restarted" });
    stopped.shown = true;
    for (const waiter of this.pending.values()) waiter.reject(stopped);
    this.pending.clear();
    this.start();
  },
};

// Rejections a banner already shows, and aborted calls, are expected: keep them out of the console.
window.addEventListener("unhandledrejection", (event) => {
  const reason = event.reason;
  if ((reason instanceof SDError && reason.shown) || (reason && reason.name === "AbortError")) event.preventDefault();
});

// --- error banners ----------------------------------------------------------------------------------------------

function banner(error) {
  const el = document.createElement("div");
  el.className = "sd-error";
  el.setAttribute("role", "alert");
  el.dataset.sdError = "";
  const title = document.createElement("strong");
  title.textContent =
    error.title || (error.phase ? `Python failed to start (${error.phase})` : `Python error${error.handler ? ` in ${error.handler}` : ""}`);
  const line = document.createElement("code");
  line.className = "sd-error__line";
  line.textContent = error.lastLine;
  const retry = document.createElement("button");
  retry.type = "button";
  retry.className = "md-button md-button--primary sd-error__retry";
  retry.textContent = "Retry";
  retry.addEventListener("click", retryAll);
  el.append(title, " ", line, " ", retry);
  error.shown = true;
  return el;
}

function showPageError(error) {
  const content = document.querySelector(".md-content__inner") || document.body;
  content.querySelector(":scope > .sd-error")?.remove();
  content.prepend(banner(error));
}

function showWidgetError(el, error) {
  if (!(error instanceof SDError)) error = new SDError({ traceback_last_line: String(error?.message || error) });
  el.querySelector(":scope > .sd-error")?.remove();
  el.prepend(banner(error));
  return error;
}

// Retry: a fresh worker, and every widget on the page mounted again from its placeholder.
function retryAll() {
  document.querySelectorAll(".sd-error").forEach((el) => el.remove());
  python.restart();
  python.ready.then(upgradeCharts, upgradeCharts); // Plotly too, if it had failed to load
  for (const el of [...mounted.keys()]) unmount(el);
  mountAll({ load: true });
}

// --- theme and charts -------------------------------------------------------------------------------------------

// Plotly (4.7 MB) loads once Python is ready, or has failed: parsing it while the worker boots Pyodide would slow
// the boot on small machines. Until then charts are drawn by sketch.js, from the same figure dicts.
let plotly = null;

function loadPlotly() {
  plotly ??= new Promise((resolve, reject) => {
    if (window.Plotly) return resolve(window.Plotly);
    const script = document.createElement("script");
    script.src = new URL("vendor/plotly.min.js", SITE).href;
    script.onload = () => resolve(window.Plotly);
    script.onerror = () => {
      script.remove();
      plotly = null; // Retry may try again
      reject(
        new SDError({
          title: "Interactive charts unavailable",
          traceback_last_line: "Plotly failed to load (vendor/plotly.min.js): the charts stay static",
        }),
      );
    };
    document.head.append(script);
  });
  return plotly;
}

// Swap every sketched chart for a Plotly one; <html data-sd-charts> says which engine draws the charts.
async function upgradeCharts() {
  try {
    await loadPlotly();
  } catch (err) {
    showPageError(err);
    return;
  }
  const sketched = [...charts].filter((target) => target.isConnected && target.dataset.sdEngine === "sketch");
  await Promise.all(sketched.map((target) => render(target, target._sdFigure).catch(() => {})));
  document.documentElement.dataset.sdCharts = "plotly";
}

// Material's palette as concrete colours: custom properties resolved through a probe element.
// Cached per colour scheme: reading custom properties forces a style recalculation, costly on every redraw.
let paletteCache = null;

function palette() {
  const key = ["scheme", "primary", "accent"].map((k) => document.body.getAttribute(`data-md-color-${k}`)).join(" ");
  if (paletteCache?.key === key) return paletteCache.colors;
  const probe = document.createElement("span");
  probe.style.display = "none";
  document.body.append(probe);
  const read = (variable) => {
    probe.style.color = `var(${variable})`;
    return getComputedStyle(probe).color;
  };
  const colors = {
    fg: read("--md-default-fg-color"),
    light: read("--md-default-fg-color--light"),
    lighter: read("--md-default-fg-color--lighter"),
    lightest: read("--md-default-fg-color--lightest"),
    bg: read("--md-default-bg-color"),
    font: getComputedStyle(document.body).fontFamily,
  };
  probe.remove();
  paletteCache = { key, colors };
  return colors;
}

function themed(figure) {
  const c = palette();
  const layout = structuredClone(figure.layout || {});
  const axis = (ax) => ({ gridcolor: c.lightest, zerolinecolor: c.lighter, linecolor: c.lighter, tickcolor: c.lighter, ...ax });
  layout.paper_bgcolor = "rgba(0,0,0,0)";
  layout.plot_bgcolor = "rgba(0,0,0,0)";
  layout.font = { family: c.font, color: c.fg, ...(layout.font || {}) };
  layout.hoverlabel = { bgcolor: c.bg, bordercolor: c.lighter, font: { color: c.fg }, ...(layout.hoverlabel || {}) };
  layout.legend = { bgcolor: "rgba(0,0,0,0)", ...(layout.legend || {}) };
  for (const key of Object.keys(layout)) if (/^[xy]axis\d*$/.test(key)) layout[key] = axis(layout[key]);
  if (!layout.xaxis) layout.xaxis = axis({});
  if (!layout.yaxis) layout.yaxis = axis({});
  for (const key of Object.keys(layout)) {
    if (!/^scene\d*$/.test(key)) continue;
    const scene = layout[key];
    scene.bgcolor ??= "rgba(0,0,0,0)";
    for (const ax of ["xaxis", "yaxis", "zaxis"]) scene[ax] = { backgroundcolor: "rgba(0,0,0,0)", ...axis(scene[ax] || {}) };
  }
  return { data: structuredClone(figure.data || []), layout };
}

const charts = new Set(); // elements drawn by render(), redrawn when the palette changes
const PLOT_CONFIG = { responsive: true, displaylogo: false, displayModeBar: "hover" };

// The sketch's colours: the same palette themed() gives Plotly.
function sketchTheme() {
  const c = palette();
  return { fg: c.fg, grid: c.lightest, zero: c.lighter, font: c.font, series: ["#1f77b4"] };
}

// Sketches are drawn in one batch per task: every chart's width is read first (one layout), then all are drawn.
const sketches = new Map(); // target -> themed figure
let sketching = null;

function queueSketch(target, figure) {
  sketches.set(target, figure);
  sketching ??= Promise.resolve().then(() => {
    const jobs = [...sketches];
    sketches.clear();
    sketching = null;
    const theme = sketchTheme();
    const widths = jobs.map(([el]) => el.clientWidth);
    jobs.forEach(([el, fig], i) => {
      if (el.dataset.sdEngine === "plotly") return; // Plotly took over meanwhile
      el.querySelector(":scope > svg.sd-sketch")?.remove();
      sketch(el, fig, theme, widths[i]);
      el.dataset.sdEngine = "sketch";
      el.dataset.sdRenders = String(Number(el.dataset.sdRenders || 0) + 1);
    });
  });
  return sketching;
}

async function render(target, figure) {
  target._sdFigure = figure;
  charts.add(target);
  const { data, layout } = themed(figure);
  if (!(window.Plotly && plotly)) return queueSketch(target, { data, layout });
  sketches.delete(target);
  target.querySelector(":scope > svg.sd-sketch")?.remove();
  await window.Plotly.react(target, data, layout, PLOT_CONFIG);
  target.dataset.sdEngine = "plotly";
  target.dataset.sdRenders = String(Number(target.dataset.sdRenders || 0) + 1);
}

new MutationObserver(() => {
  for (const target of charts) {
    if (!target.isConnected) charts.delete(target);
    else render(target, target._sdFigure).catch(() => {});
  }
}).observe(document.body, { attributes: true, attributeFilter: ["data-md-color-scheme"] });

// --- deferred sections ------------------------------------------------------------------------------------------

// html.sd-boot (set from <head>, site_assets/overrides) keeps .sd-later sections unstyled while Python boots.
// They are shown once Python is ready or has failed, or as soon as one comes within a screen of the viewport.
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

// --- URL state --------------------------------------------------------------------------------------------------

// The shared query parameters and their default ranges; a widget may pass its own spec to ctx.url.read.
export const PARAMS = Object.freeze({
  quality: { min: 0, max: 1, step: 0.05, value: 0.85 },
  gamma: { min: 1, max: 8, step: 1, value: 4 },
  alpha: { min: 0, max: 1, step: 0.01, value: 0.8 },
  cost: { min: 0, max: 1, step: 0.01, value: 0.05 },
  seed: { min: 0, max: 2 ** 31 - 1, step: 1, value: 0 },
});

function decimals(step) {
  const text = String(step);
  return text.includes(".") ? text.length - text.indexOf(".") - 1 : 0;
}

function snap(value, { min, step }) {
  if (!step) return value;
  return Number((min + Math.round((value - min) / step) * step).toFixed(decimals(step)));
}

// Read and clamp; returns {values, notes} where each note says what was corrected and how.
export function readQuery(spec = PARAMS, search = location.search) {
  const query = new URLSearchParams(search);
  const values = {};
  const notes = [];
  for (const [key, range] of Object.entries(spec)) {
    const raw = query.get(key);
    if (raw === null || raw === "") {
      values[key] = range.value;
      continue;
    }
    const number = Number(raw);
    if (!Number.isFinite(number)) {
      values[key] = range.value;
      notes.push(`${key} ${raw} is not a number; using ${range.value}`);
    } else if (number < range.min || number > range.max) {
      values[key] = number < range.min ? range.min : range.max;
      notes.push(`${key} ${raw} is out of range; clamped to ${values[key]}`);
    } else {
      values[key] = snap(number, range);
      if (values[key] !== number) notes.push(`${key} ${raw} is between steps of ${range.step}; rounded to ${values[key]}`);
    }
  }
  return { values, notes };
}

export function writeQuery(values) {
  const url = new URL(location.href);
  for (const [key, value] of Object.entries(values)) url.searchParams.set(key, String(value));
  // Keep history.state: Material stores the scroll offset there for instant navigation.
  history.replaceState(history.state, "", url);
}

// --- widgets ----------------------------------------------------------------------------------------------------

const registry = new Map(); // widget name -> {mount(el, ctx)}
const mounted = new Map(); // element -> {controller, cleanup, original}
let uid = 0;

export function register(name, widget) {
  if (typeof widget?.mount !== "function") throw new TypeError(`widget ${name} needs a mount(el, ctx) function`);
  registry.set(name, widget);
  mountAll(); // widget files may load after the first document$ emission
}

function readData(el, selector) {
  const template = el.querySelector(`:scope > template[${selector}]`);
  return template ? JSON.parse(template.content.textContent) : null;
}

function formatNumber(value) {
  if (typeof value !== "number") return String(value);
  if (Number.isInteger(value)) return value.toLocaleString("en");
  return Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(3);
}

function context(el, name, signal) {
  const settings = readData(el, "data-sd-settings") || {};
  const initial = readData(el, "data-sd-initial");

  const call = async (handler, args, options = {}) => {
    const abortable = options.signal || signal;
    try {
      const value = await python.call(handler, args);
      if (abortable.aborted || signal.aborted) throw new DOMException("stopped", "AbortError");
      el.dataset.sdLive = "true";
      el.querySelector(":scope > .sd-error")?.remove();
      return value;
    } catch (err) {
      if (err.name === "AbortError" || signal.aborted) throw err;
      // Start-up failures already show the page banner; anything else gets one on the widget.
      if (!(err instanceof SDError && err.shown)) showWidgetError(el, err);
      throw err;
    }
  };

  const setMetric = (metric, value, text) => {
    for (const out of el.querySelectorAll(`[data-metric="${metric}"]`)) {
      out.dataset.value = String(value);
      out.textContent = text ?? formatNumber(value);
    }
  };

  const notice = (text) => {
    const note = document.createElement("p");
    note.className = "sd-notice";
    note.setAttribute("role", "status");
    note.textContent = text;
    const notes = el.querySelectorAll(":scope > .sd-notice");
    if (notes.length) notes[notes.length - 1].after(note);
    else el.prepend(note);
    return note;
  };

  return {
    el,
    name,
    settings,
    initial,
    signal,
    get ready() {
      return python.ready;
    },
    call,
    latest(handler, onResult) {
      let inFlight = false;
      let queued = null;
      const pump = async () => {
        if (inFlight || queued === null || signal.aborted) return;
        const args = queued;
        queued = null;
        inFlight = true;
        try {
          await onResult(await call(handler, args), args);
        } catch {
          // shown on the widget already
        } finally {
          inFlight = false;
          pump();
        }
      };
      return (args) => {
        queued = args;
        pump();
      };
    },
    task() {
      const controller = new AbortController();
      signal.addEventListener("abort", () => controller.abort(), { once: true });
      return { signal: controller.signal, stop: () => controller.abort() };
    },
    render,
    chart(label) {
      // role=figure (not img): Plotly's mode bar puts focusable buttons inside the chart.
      const div = document.createElement("div");
      div.className = "sd-chart";
      div.setAttribute("role", "figure");
      div.setAttribute("aria-label", label);
      return div;
    },
    slider({ key, label, min, max, step, value, format = formatNumber }) {
      const id = `sd-${name}-${key}-${++uid}`;
      const root = document.createElement("div");
      root.className = "sd-control";
      root.innerHTML = `<label for="${id}"></label><input type="range" id="${id}"><output for="${id}"></output>`;
      root.querySelector("label").textContent = label;
      const input = root.querySelector("input");
      Object.assign(input, { name: key, min, max, step, value });
      const output = root.querySelector("output");
      const show = () => {
        output.textContent = format(Number(input.value));
        input.setAttribute("aria-valuetext", output.textContent);
      };
      input.addEventListener("input", show);
      show();
      return {
        root,
        input,
        output,
        get value() {
          return Number(input.value);
        },
        set value(v) {
          input.value = v;
          show();
        },
      };
    },
    number({ key, label, min, max, step = 1, value }) {
      const id = `sd-${name}-${key}-${++uid}`;
      const root = document.createElement("div");
      root.className = "sd-control sd-control--number";
      root.innerHTML = `<label for="${id}"></label><input type="number" id="${id}" inputmode="numeric">`;
      root.querySelector("label").textContent = label;
      const input = root.querySelector("input");
      Object.assign(input, { name: key, min, max, step, value });
      return {
        root,
        input,
        get value() {
          return Number(input.value);
        },
        set value(v) {
          input.value = v;
        },
      };
    },
    button(label, onClick) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "md-button";
      button.textContent = label;
      button.addEventListener("click", onClick);
      return button;
    },
    metrics(items) {
      const root = document.createElement("dl");
      root.className = "sd-metrics";
      for (const { name: metric, label } of items) {
        const item = document.createElement("div");
        item.className = "sd-metric";
        item.innerHTML = `<dt></dt><dd><output aria-live="polite" data-metric="${metric}">…</output></dd>`;
        item.querySelector("dt").textContent = label;
        root.append(item);
      }
      return root;
    },
    setMetric,
    setMetrics(values, formats = {}) {
      for (const [metric, value] of Object.entries(values)) setMetric(metric, value, formats[metric]?.(value));
    },
    notice,
    url: {
      read(spec = PARAMS) {
        const { values, notes } = readQuery(spec);
        for (const note of notes) notice(note);
        return values;
      },
      write: writeQuery,
    },
  };
}

function mount(el) {
  const name = el.dataset.widget;
  const widget = registry.get(name);
  if (!widget || el.dataset.sdMounted) return;
  el.dataset.sdMounted = "true";
  const controller = new AbortController();
  const entry = { controller, cleanup: null, original: el.innerHTML };
  mounted.set(el, entry);
  const ctx = context(el, name, controller.signal);
  Promise.resolve()
    .then(() => widget.mount(el, ctx))
    .then((cleanup) => {
      if (typeof cleanup === "function") entry.cleanup = cleanup;
    })
    .catch((err) => {
      if (err?.name !== "AbortError" && !(err instanceof SDError && err.shown)) showWidgetError(el, err);
    });
}

function unmount(el) {
  const entry = mounted.get(el);
  if (!entry) return;
  mounted.delete(el);
  entry.controller.abort();
  try {
    entry.cleanup?.();
  } catch (err) {
    console.warn(`cleanup of widget ${el.dataset.widget} failed`, err);
  }
  if (el.isConnected) {
    el.innerHTML = entry.original;
    delete el.dataset.sdMounted;
    delete el.dataset.sdLive;
  }
}

// A page's own widget modules load with it (site_assets/overrides). One that came by instant navigation may hold
// widgets whose modules are not loaded yet: they are imported here, and register (and so mount) when they arrive.
const loading = new Map(); // widget name -> import promise
const failedLoads = new Map(); // widget name -> failed attempts

function loadWidget(name) {
  if (loading.has(name)) return;
  const url = new URL(`widgets/${name}.js`, import.meta.url);
  // The browser remembers a failed module URL: a later attempt (Retry, the next page) asks for a fresh one.
  if (failedLoads.has(name)) url.searchParams.set("attempt", failedLoads.get(name) + 1);
  loading.set(
    name,
    import(url.href).catch((err) => {
      loading.delete(name);
      failedLoads.set(name, (failedLoads.get(name) || 0) + 1);
      const text = `the ${name} widget failed to load (${url.pathname}): ${err?.message || err}`;
      for (const target of document.querySelectorAll(`.sd-widget[data-widget="${name}"]`))
        showWidgetError(target, new SDError({ title: "This widget failed to load", traceback_last_line: text }));
    }),
  );
}

// load: import missing widget modules (from onPage, when every module the page itself loaded has registered)
function mountAll({ load = false } = {}) {
  for (const el of document.querySelectorAll(".sd-widget[data-widget]")) {
    if (registry.has(el.dataset.widget)) mount(el);
    else if (load) loadWidget(el.dataset.widget);
  }
}

// --- wiring -----------------------------------------------------------------------------------------------------

function onPage() {
  // Material's search overlay is a dialog without a name (axe-core: aria-dialog-name); the header persists across
  // instant navigation, so naming it once per page is enough.
  document.querySelector('.md-search[role="dialog"]:not([aria-label])')?.setAttribute("aria-label", "Search");
  statusElement().dataset.sdStatus = status.state;
  setStatus(status.state, status.text);
  for (const el of [...mounted.keys()]) if (!el.isConnected) unmount(el); // left behind by instant navigation
  if (python.error) showPageError(python.error);
  mountAll({ load: true });
  watchLater();
}

// Also for tests and benchmarks: SDLab.call(name, args) runs a handler without any widget or banner.
window.SDLab = Object.freeze({
  register,
  call: (name, args) => python.call(name, args),
  ready: () => python.ready,
  readQuery,
  writeQuery,
  PARAMS,
  site: SITE.href,
  retry: retryAll,
});
python.start();
document.documentElement.dataset.sdCharts = "sketch";
// Fetched at idle priority during the boot (not parsed), so on a real network the script is at hand once Python is.
if (!window.Plotly) {
  const hint = document.createElement("link");
  hint.rel = "prefetch";
  hint.href = new URL("vendor/plotly.min.js", SITE).href;
  document.head.append(hint);
}
python.ready.then(showLater, showLater);
python.ready.then(upgradeCharts, upgradeCharts);
if (window.document$) window.document$.subscribe(onPage);
else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", onPage);
else onPage();
