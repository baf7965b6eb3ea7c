// Charts: a static sketch (sketch.js) until Plotly may load, then Plotly's partial bundles, in the page's theme.
//   render(target, figure): the newest figure for a target wins (one that moves only y values, the axes kept, is
//     animated rather than redrawn: onlyYMoved); redrawn when the palette changes; the target reads
//     data-sd-engine="sketch" | "plotly" and counts data-sd-renders; <html data-sd-charts> says "plotly" once
//     Plotly draws every chart it can (a 3D one without WebGL stays a sketch: drawable). startPlotly():
//     Python is ready or has failed, so load the bundles the sketches need (Plotly parsed during Pyodide's boot
//     slows the boot: sketch.js has the measurement). retryPlotly(),
//     purge(target), preload(root) (prefetch what root's build-time figures need), chartCount() (leak test),
//     figureOf(target).
// plotly.js 4.1.1 ships a "cartesian" bundle (1.5 MB: bar, scatter, heatmap) and a "gl3d" one (1.75 MB), loaded
// only where a 3D trace is. Each sets window.Plotly as it runs; it is taken at once and the global restored, so
// both live in one page and no chart depends on a global.

import { SDError } from "./python.js";
import { sketch } from "./sketch.js";

const SITE = new URL("../../", import.meta.url);
const BUNDLES = { cartesian: "vendor/plotly-cartesian.min.js", gl3d: "vendor/plotly-gl3d.min.js" };
const GL3D = new Set(["scatter3d", "mesh3d", "surface", "isosurface", "volume", "cone", "streamtube"]);
// plotly.js 4.1.1 draws a 3D scene at plotGlPixelRatio (default 2) whatever the screen: on a screen of ratio 1 that
// is four times the pixels shown, and the software renderer a browser without a GPU uses spent ~25 ms a frame on
// the home page's scene. Draw at the screen's ratio (1 to 2).
const glRatio = () => Math.min(2, Math.max(1, window.devicePixelRatio || 1));
// showSendToCloud defaults to true in plotly.js 4.1.1: its "Share chart..." button offers to upload the chart to
// Plotly Cloud, a third party.
const plotConfig = () => ({
  responsive: true,
  displaylogo: false,
  displayModeBar: "hover",
  showSendToCloud: false,
  plotGlPixelRatio: glRatio(),
});

const loads = new Map(); // bundle name -> Promise<Plotly>
const loaded = new Map(); // bundle name -> Plotly, once its script has run
const charts = new Set(); // targets drawn (or about to be), redrawn when the palette changes
let plotlyWanted = false; // Plotly may load: Python is ready, or has failed

function bundleFor(figure) {
  return (figure.data || []).some((trace) => GL3D.has(trace.type)) ? "gl3d" : "cartesian";
}

// A browser without WebGL (turned off, or no graphics driver it trusts) cannot draw a 3D scene: Plotly would put
// "WebGL is not supported by your browser" in its place. Such a chart keeps the sketch, redrawn with every result,
// and reads data-sd-static="no-webgl" under a note. Asked once Plotly may load (not during the first paint: a
// WebGL context costs time to make), when a 3D figure is to be drawn.
let webgl = null;
function drawable(target) {
  if (bundleFor(target._sdFigure) !== "gl3d") return true;
  if (webgl === null) {
    const gl = document.createElement("canvas").getContext("webgl");
    webgl = Boolean(gl);
    gl?.getExtension("WEBGL_lose_context")?.loseContext(); // browsers keep few contexts: give this one back
  }
  if (!webgl && !target.dataset.sdStatic) {
    target.dataset.sdStatic = "no-webgl";
    const note = document.createElement("p");
    note.className = "sd-note sd-chart__static";
    note.textContent =
      "This browser offers no WebGL, which the interactive 3D view needs: this is a static drawing of the same figure, redrawn with every change.";
    target.prepend(note);
  }
  return webgl;
}

function load(bundle) {
  if (loads.has(bundle)) return loads.get(bundle);
  const promise = new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = new URL(BUNDLES[bundle], SITE).href;
    const before = Object.getOwnPropertyDescriptor(window, "Plotly");
    // The load event fires right after the script ran, before any other: window.Plotly is this one.
    script.onload = () => {
      const Plotly = window.Plotly;
      if (before) Object.defineProperty(window, "Plotly", before);
      else delete window.Plotly;
      delete window.moduleName; // the bundles' UMD wrapper also leaves this behind
      script.remove();
      loaded.set(bundle, Plotly);
      resolve(Plotly);
    };
    script.onerror = () => {
      script.remove();
      const title = "Interactive charts unavailable";
      reject(
        new SDError({
          title,
          traceback_last_line: `Plotly failed to load (${BUNDLES[bundle]}): the charts stay static`,
        }),
      );
    };
    document.head.append(script);
  });
  loads.set(bundle, promise);
  return promise;
}

// Idle-priority prefetch, not parsed: on a real network the bundle is at hand once Python is ready.
export function preload(root) {
  const types = new Set();
  for (const t of root.querySelectorAll("template[data-sd-initial]")) {
    for (const [, type] of t.content.textContent.matchAll(/"type":"([a-z0-9]+)"/g)) types.add(type);
  }
  for (const bundle of new Set([...types].map((type) => (GL3D.has(type) ? "gl3d" : "cartesian")))) {
    const href = new URL(BUNDLES[bundle], SITE).href;
    if (loads.has(bundle) || document.head.querySelector(`link[rel=prefetch][href="${href}"]`)) continue;
    document.head.append(Object.assign(document.createElement("link"), { rel: "prefetch", href }));
  }
}

// Material's palette as concrete colours, cached per scheme: reading custom properties forces a style recalculation.
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
  const axis = (ax) => ({
    gridcolor: c.lightest,
    zerolinecolor: c.lighter,
    linecolor: c.lighter,
    tickcolor: c.lighter,
    ...ax,
  });
  layout.paper_bgcolor = "rgba(0,0,0,0)";
  layout.plot_bgcolor = "rgba(0,0,0,0)";
  layout.font = { family: c.font, color: c.fg, ...(layout.font || {}) };
  layout.hoverlabel = { bgcolor: c.bg, bordercolor: c.lighter, font: { color: c.fg }, ...(layout.hoverlabel || {}) };
  layout.legend = { bgcolor: "rgba(0,0,0,0)", ...(layout.legend || {}) };
  for (const key of Object.keys(layout)) if (/^[xy]axis\d*$/.test(key)) layout[key] = axis(layout[key]);
  layout.xaxis ??= axis({});
  layout.yaxis ??= axis({});
  for (const key of Object.keys(layout)) {
    if (!/^scene\d*$/.test(key)) continue;
    const scene = layout[key];
    scene.bgcolor ??= "rgba(0,0,0,0)";
    for (const ax of ["xaxis", "yaxis", "zaxis"])
      scene[ax] = { backgroundcolor: "rgba(0,0,0,0)", ...axis(scene[ax] || {}) };
  }
  return { data: structuredClone(figure.data || []), layout };
}

// Sketches are drawn in one batch per task: every chart's width is read first (one layout), then all are drawn.
const sketches = new Map(); // target -> themed figure
let sketching = null;

function queueSketch(target, figure) {
  document.documentElement.dataset.sdCharts = "sketch";
  sketches.set(target, figure);
  sketching ??= Promise.resolve().then(() => {
    const jobs = [...sketches];
    sketches.clear();
    sketching = null;
    const c = palette(); // the sketch's colours: the same palette themed() gives Plotly
    const theme = { fg: c.fg, grid: c.lightest, zero: c.lighter, font: c.font, series: ["#1f77b4"] };
    const widths = jobs.map(([el]) => el.clientWidth);
    jobs.forEach(([el, fig], i) => {
      if (el._sdFigure !== fig || !charts.has(el)) return; // Plotly took over, or the chart went, meanwhile
      if (el._sdPlotly) el._sdPlotly.purge(el);
      delete el._sdPlotly;
      delete el._sdShown;
      el.querySelector(":scope > svg.sd-sketch")?.remove();
      sketch(el, themed(fig), theme, widths[i]);
      el.dataset.sdEngine = "sketch";
      el.dataset.sdRenders = String(Number(el.dataset.sdRenders || 0) + 1);
    });
  });
  return sketching;
}

// A figure that differs from the one Plotly shows only in its traces' y values, none of which moves an autoranged
// axis (the same extremes), is drawn by Plotly.animate without a redraw: the bars and lines move, the axes stay as
// Plotly.react would draw them. On the Playground's distributions chart a slider change then takes ~13 ms of the
// main thread instead of ~23 ms (plotly.js 4.1.1, medians on a 2-core machine). Only bars and plain lines qualify:
// Plotly pads an autoranged axis by the size of a marker or text at its extremes, and by error bars.
const json = (value) => JSON.stringify(value);
const movable = (t) =>
  (t.type === "bar" || ((t.type ?? "scatter") === "scatter" && /^lines$|^none$/.test(t.mode ?? ""))) &&
  !t.error_x &&
  !t.error_y &&
  (t.y || []).every((v) => v === null || typeof v === "number");

// What a figure shows besides its y values, as strings (taken before Plotly, which writes into what it is given):
// the layout, each trace without its y (null where a trace cannot move), and each autoranged y axis's extent.
function outline({ data, layout }) {
  const extents = {};
  for (const axis of new Set(data.map((t) => t.yaxis || "y"))) {
    if (layout[`yaxis${axis.slice(1)}`]?.range) continue;
    // A loop, not Math.min(...values): spreading a long series as arguments overflows the stack.
    let low = Infinity;
    let high = -Infinity;
    for (const t of data) {
      if ((t.yaxis || "y") !== axis) continue;
      for (const v of t.y || []) {
        if (v === null) continue;
        low = Math.min(low, v);
        high = Math.max(high, v);
      }
    }
    extents[axis] = low <= high ? [low, high] : null;
  }
  const traces = data.map((t) => (movable(t) ? json({ ...t, y: null }) : null));
  return { layout: json(layout), traces, extents: json(extents) };
}

const onlyYMoved = (a, b) =>
  a.layout === b.layout &&
  a.extents === b.extents &&
  a.traces.length === b.traces.length &&
  b.traces.every((t, i) => t !== null && t === a.traces[i]);

async function draw(target, Plotly, figure) {
  if (target._sdFigure !== figure || !charts.has(target)) return; // a newer figure came, or the chart was purged
  if (target._sdPlotly && target._sdPlotly !== Plotly) {
    target._sdPlotly.purge(target);
    delete target._sdShown;
  }
  target._sdPlotly = Plotly;
  sketches.delete(target);
  target.querySelector(":scope > svg.sd-sketch")?.remove();
  const { data, layout } = themed(figure);
  const shown = target._sdShown; // the outline of what Plotly shows, or is drawing (a later draw compares)
  target._sdShown = outline({ data, layout });
  try {
    if (shown && onlyYMoved(shown, target._sdShown)) {
      const frame = { data: data.map(({ y }) => ({ y })), traces: data.map((_, i) => i) };
      const options = { mode: "immediate", transition: { duration: 0 }, frame: { redraw: false } };
      // plotly.js 4.1.1 draws this frame (duration 0) in the next animation frame, but settles its promise only
      // when a later animation starts, and rejects it with no reason when that one interrupts it: a widget showed
      // "This widget failed: undefined" during a Tuning run. So the draw waits for that frame, not the promise; a
      // newer figure that came meanwhile counts its own draw.
      Plotly.animate(target, frame, options).catch((err) => {
        if (err !== undefined) console.error("[lab] a chart's animation failed", err);
      });
      await new Promise((resolve) => requestAnimationFrame(resolve));
      if (target._sdFigure !== figure) return;
    } else {
      // A window resize makes Plotly (responsive) size the plot to the chart's height: give it the figure's.
      target.style.height = layout.height ? `${layout.height}px` : "";
      await Plotly.react(target, data, layout, plotConfig());
    }
  } catch (err) {
    delete target._sdShown; // unknown: the next figure is drawn in full
    throw err;
  }
  if (!charts.has(target)) return;
  // Plotly's SVG layers read to a screen reader as images named by their tick labels ("0 20 40 0 0.2 …"): the
  // chart's own name (role=figure) and its table of numbers (ui/numbers.js) say what it shows.
  for (const layer of target.querySelectorAll(".main-svg:not([aria-hidden])"))
    layer.setAttribute("aria-hidden", "true");
  target.dataset.sdEngine = "plotly";
  target.dataset.sdRenders = String(Number(target.dataset.sdRenders || 0) + 1);
}

export async function render(target, figure) {
  target._sdFigure = figure;
  charts.add(target);
  const Plotly = loaded.get(bundleFor(figure)); // the gl3d bundle is loaded only where WebGL is (upgrade)
  if (Plotly) return draw(target, Plotly, figure);
  await queueSketch(target, figure);
  if (plotlyWanted) await upgrade();
}

// Loads the bundles the sketched charts need, and lets Plotly draw them.
async function upgrade() {
  const sketched = () => [...charts].filter((t) => t.isConnected && t._sdFigure && !t._sdPlotly && drawable(t));
  await Promise.all([...new Set(sketched().map((t) => bundleFor(t._sdFigure)))].map(load));
  await Promise.all(sketched().map((t) => draw(t, loaded.get(bundleFor(t._sdFigure)), t._sdFigure)));
  if (!sketched().length) document.documentElement.dataset.sdCharts = "plotly";
}

// Retry: a bundle that failed to load is asked for again by the next render.
export function retryPlotly() {
  for (const bundle of loads.keys()) if (!loaded.has(bundle)) loads.delete(bundle);
}

export function startPlotly() {
  plotlyWanted = true;
  return upgrade();
}

export function purge(target) {
  charts.delete(target);
  sketches.delete(target);
  // Plotly.purge (4.1.1) leaves a 3D scene's WebGL context alive until the canvas is collected, and browsers keep
  // only 16: give it back now.
  for (const canvas of target.querySelectorAll("canvas"))
    canvas.getContext("webgl")?.getExtension("WEBGL_lose_context")?.loseContext();
  target._sdPlotly?.purge(target);
  delete target._sdPlotly;
  delete target._sdFigure;
  delete target._sdShown;
}

export const chartCount = () => charts.size;
// The figure a target shows, or is about to (null before its first render and after purge).
export const figureOf = (target) => target._sdFigure ?? null;

// The palette toggle: every chart on the page is drawn again in the new colours. The theme's start-up sets the
// scheme the page already has: that drew every sketch already on the page a second time (~30 ms of the theme's
// start-up, in one profiled load of the home page).
new MutationObserver((records) => {
  const scheme = document.body.getAttribute("data-md-color-scheme");
  if (records.every((r) => r.oldValue === scheme)) return;
  for (const target of charts) {
    if (target._sdFigure)
      render(target, target._sdFigure).catch((err) => console.error("[lab] chart redraw failed", err));
  }
}).observe(document.body, { attributes: true, attributeFilter: ["data-md-color-scheme"], attributeOldValue: true });
