// Charts: Plotly's partial bundles loaded on demand, the light/dark theme applied to every figure, render and purge.
//
//   render(target, figure)   Promise: Plotly.react with the current theme; the newest figure for a target wins.
//                            Redrawn by itself when the reader toggles the palette. Marks the target with
//                            data-sd-engine="plotly" and counts data-sd-renders.
//   purge(target)            Plotly.purge, and the target leaves every registry here
//   preload(root)            starts loading the bundles that root's build-time figures need
//   chartCount()             charts registered (for the leak test)
//
// Two bundles of plotly.js 4.1.1 (PLATFORM.md): "cartesian" (1.5 MB: bar, scatter, heatmap) for 2D figures, and
// "gl3d" (1.75 MB) only where a figure holds a 3D trace. Each defines window.Plotly when it runs; it is taken from
// there at once and the global restored, so both can live in one page and no chart depends on a global.
// <html data-sd-charts> reads "plotly" once a bundle has loaded, "unavailable" if one failed.

import { SDError } from "./python.js";

const SITE = new URL("../../", import.meta.url);
const BUNDLES = { cartesian: "vendor/plotly-cartesian.min.js", gl3d: "vendor/plotly-gl3d.min.js" };
const GL3D = new Set(["scatter3d", "mesh3d", "surface", "isosurface", "volume", "cone", "streamtube"]);
const PLOT_CONFIG = { responsive: true, displaylogo: false, displayModeBar: "hover" };

const loads = new Map(); // bundle name -> Promise<Plotly>
const charts = new Set(); // targets drawn (or about to be), redrawn when the palette changes

export function bundleFor(figure) {
  return (figure.data || []).some((trace) => GL3D.has(trace.type)) ? "gl3d" : "cartesian";
}

function load(bundle) {
  if (loads.has(bundle)) return loads.get(bundle);
  const promise = new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = new URL(BUNDLES[bundle], SITE).href;
    const before = Object.getOwnPropertyDescriptor(window, "Plotly");
    // The load event fires right after the script has run, before any other script: window.Plotly is this one.
    script.onload = () => {
      const Plotly = window.Plotly;
      if (before) Object.defineProperty(window, "Plotly", before);
      else delete window.Plotly;
      delete window.moduleName; // the bundles' UMD wrapper also leaves this behind
      script.remove();
      document.documentElement.dataset.sdCharts = "plotly";
      resolve(Plotly);
    };
    script.onerror = () => {
      script.remove();
      loads.delete(bundle); // Retry may try again
      document.documentElement.dataset.sdCharts = "unavailable";
      const title = "Interactive charts unavailable";
      reject(new SDError({ title, traceback_last_line: `Plotly failed to load (${BUNDLES[bundle]}): the charts cannot be drawn` }));
    };
    document.head.append(script);
  });
  loads.set(bundle, promise);
  return promise;
}

// Start fetching the bundles root's build-time results will need, before any widget has mounted.
export function preload(root) {
  const types = new Set();
  for (const t of root.querySelectorAll("template[data-sd-initial]")) {
    for (const [, type] of t.content.textContent.matchAll(/"type":"([a-z0-9]+)"/g)) types.add(type);
  }
  for (const bundle of new Set([...types].map((type) => (GL3D.has(type) ? "gl3d" : "cartesian")))) {
    load(bundle).catch(() => {}); // a failure is reported by the render that needs the bundle
  }
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
  layout.xaxis ??= axis({});
  layout.yaxis ??= axis({});
  for (const key of Object.keys(layout)) {
    if (!/^scene\d*$/.test(key)) continue;
    const scene = layout[key];
    scene.bgcolor ??= "rgba(0,0,0,0)";
    for (const ax of ["xaxis", "yaxis", "zaxis"]) scene[ax] = { backgroundcolor: "rgba(0,0,0,0)", ...axis(scene[ax] || {}) };
  }
  return { data: structuredClone(figure.data || []), layout };
}

export async function render(target, figure) {
  target._sdFigure = figure;
  charts.add(target);
  const Plotly = await load(bundleFor(figure));
  if (target._sdFigure !== figure || !charts.has(target)) return; // a newer figure came, or the chart was purged
  if (target._sdPlotly && target._sdPlotly !== Plotly) target._sdPlotly.purge(target);
  target._sdPlotly = Plotly;
  const { data, layout } = themed(figure);
  await Plotly.react(target, data, layout, PLOT_CONFIG);
  if (!charts.has(target)) return;
  target.dataset.sdEngine = "plotly";
  target.dataset.sdRenders = String(Number(target.dataset.sdRenders || 0) + 1);
}

export function purge(target) {
  charts.delete(target);
  target._sdPlotly?.purge(target);
  delete target._sdPlotly;
  delete target._sdFigure;
}

export function chartCount() {
  return charts.size;
}

// The palette toggle: every chart on the page is drawn again in the new colours.
new MutationObserver(() => {
  for (const target of charts) {
    if (target._sdFigure) render(target, target._sdFigure).catch((err) => console.error("[lab] chart redraw failed", err));
  }
}).observe(document.body, { attributes: true, attributeFilter: ["data-md-color-scheme"] });
