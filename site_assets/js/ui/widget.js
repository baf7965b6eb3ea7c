// The one binding. A page holds <div class="sd-widget" data-widget="NAME"> with inert JSON settings (<template
// data-sd-settings>: handler, args) and the build-time result (<template data-sd-initial>); js/widgets/NAME.js calls
// define(import.meta.url, definition or settings => definition) with: handler (default settings.handler); controls
// (ui/controls.js; param(key, value) of ui/url.js for a shared parameter); metrics [{name, label, format(value, all)}];
// chart (an aria label: a chart of result.figure) or charts {key: label} (result.figures[key]); fit(figure, width)
// (the figure as a chart that wide draws it; default as it is); tables: false (the
// widget shows its charts' numbers itself; else ui/numbers.js adds them, as tables); args(values, settings,
// extra) (null: nothing to ask); live: false (no call until the view asks); view(ctx) -> {paint, adopt, args, cleanup},
// or the standard view (controls, charts, tiles, note()). The binding does the rest:
// - first paint: the build-time result only if the controls (after the URL) ask for its arguments, else
//   "Computing for γ = 8…" until Python answers (with live: false, the view says what it shows); a page's first
//   widget shows a build-time copy of that paint until it binds (site_assets/prerender.py);
// - the live loop: a committed change bumps the version, writes the URL and asks again. One call at a time; a
//   waiting refresh gives way to a newer one, an action (request(action)) is never dropped. Only a result for the
//   current state is painted (request resolves null otherwise); `adopt` sees every result; a refresh unanswered
//   after BUSY_MS marks the widget busy (aria-busy; css/components.css dims its results) until it is answered;
// - errors become a banner with Retry (the page's when the worker failed) and console.error; metrics painted for
//   another state are cleared when the current one gets no result;
// - a note on a corrected value (from the link, or typed into a number box) stays until that control moves;
// - one value per key in the link: a control in the link that moves (or is set) moves the page's other widgets'
//   controls of that key, which ask for their own results;
// - unmount: listeners (ctx.on, ctx.signal) go, charts are purged, the placeholder is restored.
// action: {extra, handler, args(values), paint(result, args), adopt(result, args)}, each optional.

import { figureOf, render, purge } from "../runtime/charts.js";
import { SDError, onStatus, python } from "../runtime/python.js";
import { announce, button, clearMetric, control, el as element, formatNumber, setMetric, tiles } from "./controls.js";
import { chartNumbers } from "./numbers.js";
import { banner, showError } from "./status.js";
import { PARAMS, flushQuery, readQuery, readValue, writeQuery } from "./url.js";

const SHARED = "sd-shared-param"; // the event that carries a moved control's key and value to the page's widgets
const mounted = new Map(); // placeholder -> {controller, charts, original, cleanup, bound}
const defined = new Map(); // widget name -> definition
const modules = new Map(); // widget name -> import promise
const failedLoads = new Map(); // widget name -> failed attempts
let corrections = {}; // URL key -> what its value needed, on the page on screen (a remount starts afresh)
let mountedAll = false; // lab.js has mounted the page: define() leaves mounting to it
let retryAll = () => {};

export const widgetCount = () => mounted.size;
export const setRetry = (retry) => (retryAll = retry);

function readTemplate(el, attribute) {
  const template = el.querySelector(`:scope > template[${attribute}]`);
  return template ? JSON.parse(template.content.textContent) : null;
}

// A navigated page's widget modules (its first load's come as module scripts, see define).
function loadModule(name) {
  if (!modules.has(name)) {
    const url = new URL(`../widgets/${name}.js`, import.meta.url);
    const attempts = failedLoads.get(name) || 0;
    // The browser remembers a failed module URL: Retry asks for a fresh one.
    if (attempts) url.searchParams.set("attempt", String(attempts + 1));
    const promise = import(url.href).catch((err) => {
      modules.delete(name);
      failedLoads.set(name, attempts + 1);
      throw new Error(`the ${name} widget failed to load (${url.pathname}): ${err?.message || err}`);
    });
    modules.set(name, promise);
  }
  return modules.get(name);
}

// A failed worker, or Plotly failing to load, gets one banner for the page; anything else the widget's own.
function report(el, err) {
  if (err?.name === "AbortError" || (err?.shown && !err.fatal)) return; // a Run's failure comes here twice
  const error =
    err instanceof SDError
      ? err
      : Object.assign(new SDError({ title: "This widget failed", traceback_last_line: String(err?.message || err) }), {
          traceback: err?.stack,
        });
  if (err instanceof Error && err !== error) {
    console.error(`[lab] widget ${el.dataset.widget}:`, err);
    err.shown = error.shown = true;
  }
  if (error.fatal || error.title === "Interactive charts unavailable") {
    if (!error.shown) showError(error, retryAll);
    const pending = error.fatal && el.querySelector(":scope > .sd-pending");
    if (pending) pending.textContent = "These settings need Python, which is not running (see the error above).";
    return;
  }
  el.querySelector(":scope > .sd-error")?.remove();
  el.prepend(banner(error, retryAll));
}

function bind(el, definition, entry) {
  for (const copy of el.querySelectorAll(":scope > [data-sd-pre]")) copy.remove(); // site_assets/prerender.py
  const settings = readTemplate(el, "data-sd-settings") || {};
  const initial = readTemplate(el, "data-sd-initial");
  const def = typeof definition === "function" ? definition(settings) : definition;
  const { signal } = entry.controller;
  const specs = (typeof def.controls === "function" ? def.controls(settings) : def.controls) || [];
  const inUrl = specs.filter((s) => s.url);
  const { values: fromUrl, notes: found } = readQuery(Object.fromEntries(inUrl.map((s) => [s.key, s])));
  // The first widget to read a wrong value writes the corrected link; the others reading that key say so too.
  Object.assign(corrections, found);
  const controls = {};
  for (const spec of specs)
    controls[spec.key] = control(spec.url ? { ...spec, value: fromUrl[spec.key] } : spec, el.dataset.widget);
  const start = Object.fromEntries(specs.map((s) => [s.key, s.value]));
  // A number box's text is read as the link's would be (ui/url.js readValue). One still being typed in counts as
  // what it will be read as: 100 in a box of 0..99 is 99 if another control asks Python first (it reached Python
  // as 100, a ValueError).
  const values = () =>
    Object.fromEntries(
      specs.map((s) => [
        s.key,
        s.kind === "number" ? readValue(s.key, controls[s.key].input.value, s).value : controls[s.key].value,
      ]),
    );
  let view = null;
  let numbers = null; // the charts as tables (ui/numbers.js), once the view has made its charts
  const argsOf = (v, extra) =>
    (view?.args || def.args || ((x) => ({ ...settings.args, ...x, ...extra })))(v, settings, extra);
  const formats = Object.fromEntries((def.metrics || []).map((m) => [m.name, m.format]));
  const writeUrl = () => writeQuery(Object.fromEntries(inUrl.map((s) => [s.key, controls[s.key].value])));
  // The note on a corrected value of `key` (none: text undefined) replaces the one it had, which a move of that
  // control takes away: "gamma 0 is out of range; clamped to 1" said nothing true once γ was moved to 8.
  const corrected = (key, text) => {
    el.querySelector(`:scope > .sd-notice[data-sd-key="${key}"]`)?.remove();
    if (!text) return void delete corrections[key]; // moved: the page's link note for it is history too
    const line = announce("sd-notice");
    line.dataset.sdKey = key;
    const above = [...el.querySelectorAll(":scope > .sd-notice")].at(-1); // notes stay in the order they came
    if (above) above.after(line);
    else el.prepend(line);
    // Written once the live region is in the page: many screen readers skip one that arrives with its text.
    requestAnimationFrame(() => (line.textContent = text));
  };
  let version = 0;
  let shown = -1; // the version whose result is on screen (-1: none)
  let pending = null; // the "computing for …" note, while no result matches the controls
  // No result for these controls (null args, a failed call): numbers painted for other controls go.
  const stale = (asked) => {
    if (asked === shown) return;
    for (const out of el.querySelectorAll("[data-metric]")) clearMetric(el, out.dataset.metric, "—");
    shown = -1;
  };
  // Every paint is counted (data-sd-paints): tests wait on it rather than on time.
  const painted = (asked) => {
    shown = asked;
    pending?.remove();
    pending = null;
    el.dataset.sdPaints = String(Number(el.dataset.sdPaints || 0) + 1);
  };
  const guard =
    (fn) =>
    (...a) => {
      try {
        const out = fn(...a);
        if (out instanceof Promise) out.catch((err) => report(el, err));
      } catch (err) {
        report(el, err);
      }
    };

  // A refresh (the controls changed) Python takes longer than BUSY_MS to answer marks the widget busy (aria-busy,
  // data-sd-busy: the results on screen, now stale, dim and a "Computing…" badge shows) until the queue holds no
  // refresh. Not for actions: a widget says what its Sample or Run is doing itself ("Running 10,000 rounds…"), and
  // dimming that would mark the current message stale.
  let slow = null;
  const markBusy = () => {
    slow = null;
    if (el.dataset.sdRunning) return;
    el.dataset.sdBusy = "true";
    el.setAttribute("aria-busy", "true");
  };
  const waiting = (on) => {
    if (on) {
      if (!slow && !el.dataset.sdBusy) slow = setTimeout(markBusy, BUSY_MS); // already counting, or already marked
      return;
    }
    clearTimeout(slow);
    slow = null;
    delete el.dataset.sdBusy;
    if (!el.dataset.sdRunning) el.removeAttribute("aria-busy");
  };
  signal.addEventListener("abort", () => waiting(false));

  const queue = [];
  let busy = false;
  const request = (action = null) =>
    new Promise((resolve, reject) => {
      if (action === null && queue.at(-1)?.action === null) queue.pop().resolve(null);
      queue.push({ action, asked: version, resolve, reject });
      pump();
    });
  async function pump() {
    if (busy || !queue.length || signal.aborted) return;
    busy = true;
    const { action, asked: askedFor, resolve, reject } = queue.shift();
    let asked = askedFor;
    try {
      await python.ready;
      // An action's result belongs to the state it was asked in (a Sample press, to the pair on screen then); a
      // refresh's to the controls' state now, from which its args are read.
      if (!action) asked = version;
      const args = action?.args ? action.args(values()) : argsOf(values(), action?.extra);
      if (args === null) {
        stale(asked);
        return resolve(null);
      }
      if (!action) waiting(true);
      const result = await python.call(action?.handler || def.handler || settings.handler, args);
      if (signal.aborted) throw new DOMException("the widget was unmounted", "AbortError");
      el.dataset.sdLive = "true";
      el.querySelector(":scope > .sd-error")?.remove();
      (action?.adopt || view.adopt)?.(result, args);
      if (asked !== version) return resolve(null); // a newer request paints the controls' result
      await (action?.paint || view.paint)(result, args);
      painted(asked);
      resolve(result);
    } catch (err) {
      if (!action && asked === version) {
        stale(asked);
        // Python is not running: the result for these controls cannot come, and the widget says so where it is
        // (report words the note), not only the page's banner far above. A build-time result that answers them
        // stays, with no note.
        if (err?.fatal && shown === -1 && !pending) {
          pending = announce("sd-pending");
          pending.dataset.sdPending = "";
          el.prepend(pending);
        }
      }
      report(el, err);
      reject(err);
    } finally {
      busy = false;
      if (!queue.some((r) => r.action === null)) waiting(false);
      pump();
    }
  }
  // A failure is on screen and in the console already; runtime/python.js keeps it out of "unhandled".
  const refresh = () => void request();

  const ctx = {
    el,
    settings,
    initial,
    signal,
    controls,
    start, // the values before the URL's
    values,
    request,
    on: (target, type, fn, options = {}) => target.addEventListener(type, fn, { ...options, signal }),
    onStatus: (fn) => signal.addEventListener("abort", onStatus(fn), { once: true }),
    markLive: () => (el.dataset.sdLive = "true"),
    // A result that came from elsewhere (the Playground's, for its takeaway) is painted and counted like its own;
    // one at hand while view() still runs is painted once the view exists.
    paint(result, args) {
      if (!view) return void queueMicrotask(() => signal.aborted || ctx.paint(result, args));
      guard(view.paint)(result, args);
      painted(version);
    },
    // Changes controls as if the reader had: the state moves on, the URL follows, a new result is asked for. A set
    // is one deliberate step (a button, a preset), not a burst: the link is written at once, not held back.
    set(patch, { quiet = false } = {}) {
      for (const [key, value] of Object.entries(patch)) {
        controls[key].value = value;
        corrected(key);
      }
      version += 1;
      writeUrl();
      flushQuery();
      share(Object.keys(patch));
      if (!quiet) refresh();
    },
    group: (className, keys = specs.map((s) => s.key)) =>
      element("div", className, ...keys.map((key) => controls[key].root)),
    chart(label) {
      // role=figure (not img): Plotly's mode bar puts focusable buttons inside the chart.
      const div = element("div", "sd-chart");
      div.setAttribute("role", "figure");
      div.setAttribute("aria-label", label);
      entry.charts.add(div);
      if (view) tables();
      return div;
    },
    render(target, figure) {
      const drawn = render(target, figure).catch((err) => report(el, err));
      numbers?.changed();
      return drawn;
    },
    // Tiles for def.metrics, for some of them (by name), or for the items given.
    tiles: (items = def.metrics) =>
      tiles(items.map((i) => (typeof i === "string" ? def.metrics.find((m) => m.name === i) : i))),
    setMetric: (name, value, text) => setMetric(el, name, value, text),
    clearMetric: (name, text) => clearMetric(el, name, text),
    setMetrics(metrics) {
      for (const [name, value] of Object.entries(metrics))
        setMetric(el, name, value, formats[name]?.(value, metrics) ?? formatNumber(value));
    },
    // Runs loop(signal, ...args) until it ends or stop(); the widget reads data-sd-running meanwhile and
    // onChange(running) hears both edges. stop() resolves once the loop has ended; a failure the widget showed is
    // not thrown again.
    runner(loop, onChange = () => {}) {
      let task = null; // the running loop's AbortController
      let running = Promise.resolve();
      // While it runs the widget is aria-busy: its live lines, rewritten with every chunk, are read once it ends.
      const run = (...args) => {
        task = new AbortController();
        el.dataset.sdRunning = "true";
        el.setAttribute("aria-busy", "true");
        onChange(true);
        running = loop(AbortSignal.any([signal, task.signal]), ...args).finally(() => {
          task = null;
          delete el.dataset.sdRunning;
          if (!el.dataset.sdBusy) el.removeAttribute("aria-busy");
          onChange(false);
        });
        return running;
      };
      const stop = () => {
        task?.abort();
        return running.catch((err) => {
          if (!err?.shown && err?.name !== "AbortError") throw err;
        });
      };
      return { run, stop, running: () => task !== null };
    },
    // Plays `total` units (rounds) through call(n, done), one call at a time, until all are played or the signal
    // aborts; sized by nextChunk (below).
    async chunked(signal, total, call, { first = 25, min = 20, max = 400 } = {}) {
      for (let done = 0, size = first; done < total && !signal.aborted;) {
        const n = Math.min(size, total - done);
        const t0 = performance.now();
        await call(n, done);
        done += n;
        size = nextChunk(size, performance.now() - t0, min, max);
      }
    },
    // A runner behind one button that reads Run, or Stop while it runs.
    runButton(loop, className = "") {
      const button = ctx.button("Run", () => (runner.running() ? runner.stop() : runner.run()), className);
      const runner = ctx.runner(loop, (on) => (button.textContent = on ? "Stop" : "Run"));
      return { ...runner, button };
    },
    button(label, onClick, className = "") {
      const b = button(label, className);
      b.addEventListener(
        "click",
        guard((...a) => b.getAttribute("aria-disabled") === "true" || onClick(...a)),
      );
      return b;
    },
  };

  const declared = def.charts ?? (def.chart ? { figure: def.chart } : {});
  ctx.charts = Object.fromEntries(Object.entries(declared).map(([key, label]) => [key, ctx.chart(label)]));
  ctx.chartRow = (className = "sd-charts") => element("div", className, ...Object.values(ctx.charts));
  view = def.view ? def.view(ctx) : standardView(ctx, def);
  // The charts as tables, after the view; a view that makes its first chart later (Tuning's vLLM paste) gets them
  // then, at the widget's end.
  const tables = () => {
    if (numbers || !entry.charts.size || def.tables === false) return;
    const labelled = () => [...entry.charts].map((c) => [c, c.getAttribute("aria-label"), figureOf(c)]);
    numbers = chartNumbers(labelled, signal);
    el.append(numbers.root);
  };
  tables();
  const own = view.paint;
  view.paint = (result, args) => {
    for (const [key, chart] of Object.entries(ctx.charts)) {
      const figure = result.figures?.[key] ?? result[key];
      ctx.render(chart, def.fit ? def.fit(figure, chart.clientWidth) : figure);
    }
    if (def.metrics && result.metrics) ctx.setMetrics(result.metrics);
    return own?.(result, args);
  };
  entry.cleanup = view.cleanup || null;
  // The link holds one value per key: a control in the link that moves takes the page's other widgets' controls of
  // that key with it (trees' two widgets share α, k and depth), as if the reader had moved each of them: the
  // control's own event is sent, so the binding and the widget's own listeners (the Tuning policies' "settings
  // changed") hear it alike. Its echo finds every control of the key at that value already, and stops.
  function share(keys) {
    for (const spec of inUrl.filter((s) => keys.includes(s.key)))
      document.dispatchEvent(
        new CustomEvent(SHARED, { detail: { from: el, key: spec.key, value: controls[spec.key].value } }),
      );
  }
  ctx.on(document, SHARED, ({ detail: { from, key, value } }) => {
    const c = inUrl.some((s) => s.key === key) && controls[key];
    if (from === el || !c || c.value === value) return;
    c.value = value;
    c.input.dispatchEvent(new Event(c.event));
  });
  for (const spec of specs) {
    const c = controls[spec.key];
    if (spec.live !== false) c.input.dataset.sdRefresh = ""; // a change asks Python for a new result
    if (spec.url) c.input.dataset.sdUrl = spec.key; // the link's key (tests read it)
    c.input.addEventListener(
      c.event,
      guard(() => {
        corrected(spec.key);
        // A typed number is read as the link's would be: out of range, between steps or not a number, it is
        // corrected, and the note says how.
        if (spec.kind === "number") {
          const { value, note } = readValue(spec.key, c.input.value, spec);
          c.value = value;
          corrected(spec.key, note);
        }
        version += 1;
        if (spec.url) writeUrl();
        spec.onChange?.(ctx, c.value);
        if (spec.url) share([spec.key]);
        if (spec.live !== false) refresh();
      }),
    );
  }
  if (Object.keys(found).length) writeUrl(); // the address bar holds the corrected link

  // First paint: the build-time result if it answers the controls' state, else a visible "computing" note. Notes
  // on corrected URL values go above it.
  const now = values();
  if (initial && JSON.stringify(argsOf(now)) === JSON.stringify(argsOf(start))) {
    guard(view.paint)(initial, argsOf(now));
    painted(version);
  } else if (initial && def.live !== false) {
    // A widget that asks nothing until its view does (live: false) gets no such note: nothing would answer it.
    const changed = specs.filter((s) => now[s.key] !== start[s.key]);
    const quoted = (text) => `“${text.length > 40 ? `${text.slice(0, 39)}…` : text}”`;
    const said = changed.map(
      (s) =>
        `${s.short || PARAMS[s.key]?.short || s.label} = ${typeof now[s.key] === "number" ? String(now[s.key]) : quoted(now[s.key])}`,
    );
    pending = announce("sd-pending", `Computing for ${said.join(", ")}…`);
    pending.dataset.sdPending = "";
  }
  if (pending) el.prepend(pending);
  // The page's other widgets that read a corrected key say so too (corrections is the page's).
  for (const s of inUrl.filter((s) => s.key in corrections)) corrected(s.key, corrections[s.key]);
  if (def.live !== false) refresh();
}

function standardView(ctx, def) {
  ctx.el.append(ctx.group("sd-controls"), ...Object.values(ctx.charts), ctx.tiles(), ...(def.note ? [def.note()] : []));
  return {};
}

// A call's size doubles while calls take under CHUNK_MS / 2 and halves above CHUNK_MS: a Run answers Stop or a
// slider within about CHUNK_MS, and each call's fixed cost (the answer's figures, its paint) is shared by more
// rounds on a slow machine too. Sizing each call to a time in proportion to its last one could not: a fixed cost
// above that time held every call at the smallest size (a 2,000-round Playground Run made 100 calls of 20 rounds).
export const CHUNK_MS = 200;
export const BUSY_MS = 400;
export function nextChunk(size, took, min, max) {
  if (took < CHUNK_MS / 2) return Math.min(max, size * 2);
  return took > CHUNK_MS ? Math.max(min, Math.round(size / 2)) : size;
}

// A widget module calls define() as it runs, and placeholders waiting for it are bound at once. On a page's first
// load its widget modules are module scripts listed before lab.js: Python starts and their placeholders paint
// before the theme's start-up and KaTeX (an import() would resolve only after those). From lab.js's first
// mountAll on, mounting is left to it.
export function define(url, definition) {
  const name = new URL(url).pathname.split("/").pop().replace(/\.js$/, "");
  defined.set(name, definition);
  for (const [el, entry] of mounted) if (el.dataset.widget === name) start(el, entry);
  if (!mountedAll) {
    if (!python.worker) python.start();
    for (const el of document.querySelectorAll(`.sd-widget[data-widget="${name}"]`)) mount(el);
  }
  return definition;
}

function start(el, entry) {
  if (entry.bound || entry.controller.signal.aborted || !defined.has(el.dataset.widget)) return;
  entry.bound = true;
  try {
    bind(el, defined.get(el.dataset.widget), entry);
  } catch (err) {
    report(el, err);
  }
}

// The placeholder as the page wrote it, less the build-time copy of its first paint (site_assets/prerender.py),
// which stays on screen until the widget binds.
function withoutCopy(el) {
  if (!el.querySelector(":scope > [data-sd-pre]")) return el.innerHTML;
  const placeholder = el.cloneNode(true);
  for (const copy of placeholder.querySelectorAll(":scope > [data-sd-pre]")) copy.remove();
  return placeholder.innerHTML;
}

function mount(el) {
  if (el.dataset.sdMounted) return;
  el.dataset.sdMounted = "true";
  const entry = {
    controller: new AbortController(),
    charts: new Set(),
    original: withoutCopy(el),
    cleanup: null,
    bound: false,
  };
  mounted.set(el, entry);
  start(el, entry);
  // The module's define() starts it once loaded. Each of the module's widgets gets a banner of its own: one error
  // shown in the first was not shown again, and the second was left an empty box.
  if (!entry.bound)
    loadModule(el.dataset.widget).catch((err) =>
      report(el, new SDError({ title: "This widget failed to load", traceback_last_line: err.message })),
    );
}

export function unmount(el) {
  const entry = mounted.get(el);
  if (!entry) return;
  mounted.delete(el);
  entry.controller.abort();
  try {
    entry.cleanup?.();
  } catch (err) {
    console.error(`[lab] cleanup of widget ${el.dataset.widget} failed`, err);
  }
  for (const chart of entry.charts) purge(chart);
  if (el.isConnected) {
    el.innerHTML = entry.original;
    delete el.dataset.sdMounted;
    delete el.dataset.sdLive;
  }
}

export function mountAll(root = document) {
  mountedAll = true;
  const left = [...mounted.keys()].filter((el) => !el.isConnected); // left behind by instant navigation
  if (left.length) corrections = {};
  for (const el of left) unmount(el);
  for (const el of root.querySelectorAll(".sd-widget[data-widget]")) mount(el);
}

export function remountAll() {
  corrections = {};
  for (const el of [...mounted.keys()]) unmount(el);
  mountAll();
}
