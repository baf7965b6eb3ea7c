// A first paint without Plotly: draws the lab's figure dicts as a static SVG until Plotly has loaded (for good, for a
// 3D chart in a browser without WebGL: charts.js).
//
// Even Plotly's partial bundles (1.5 MB cartesian, 1.75 MB gl3d) cannot draw a page's first chart within 0.3 s:
// benchmarks/bench_browser.py ("Plotly at once" rows) measured the first Plotly chart at 2.0-2.9 s on the
// Playground and 3.9-4.2 s on the home page of a loaded 2-core machine, against 0.45-0.73 s for this sketch, and
// loading Plotly during Pyodide's boot slowed "ready" by a further 0.1-0.5x a bare worker's start-up. So charts.js
// loads Plotly once Python is ready, and until then every chart is drawn here, from the same figure dict Plotly
// will get. The SVG records what it drew (data-traces, data-ranges per axis, the legend's
// text) so tests/browser/test_site.py can check the sketch against Plotly's own drawing of the same figure.
//
// Scope: the subset of Plotly's figure schema that specdec_core.web builds, read the way Plotly reads it:
//   layout: height, margin, title, legend (horizontal), showlegend, barmode (group | overlay | stack),
//           xaxis/yaxis[N] (title, range, type category, categoryarray, dtick, nticks, tickangle, tickvals,
//           ticktext, tickformat ".Nf", rangemode tozero, domain, anchor, overlaying + side right),
//           annotations and line shapes (data or paper coordinates), one scene (scatter3d, turntable camera)
//   traces: bar (vertical or orientation "h", marker colour, opacity, pattern, error_y), scatter (lines, markers,
//           text; dash, width, opacity; circle, square, diamond, star, x, line-ew and their -open forms),
//           heatmap (Viridis, colour bar at the right, or orientation "h" under the plot as wide as it),
//           scatter3d (lines with gaps, markers)
// No hover, zoom or animation: that is what Plotly is for. Anything unknown is skipped, never an error.

const SVG = "http://www.w3.org/2000/svg";
let sketchCount = 0;
const FALLBACK_WIDTH = 700; // a chart in a hidden tab has no width yet
const DEFAULT_MARGIN = { l: 80, r: 80, t: 100, b: 80 };
const VIRIDIS = [
  "#440154",
  "#482878",
  "#3e4989",
  "#31688e",
  "#26828e",
  "#1f9e89",
  "#35b779",
  "#6ece58",
  "#b5de2b",
  "#fde725",
];
const DASHES = { dot: "2 3", dash: "7 4", dashdot: "7 3 2 3", longdash: "12 4" };

// --- small helpers ------------------------------------------------------------------------------------------

function node(name, attrs = {}, parent = null) {
  const el = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attrs))
    if (value !== undefined && value !== null) el.setAttribute(key, value);
  if (parent) parent.append(el);
  return el;
}

const entities = document.createElement("textarea");

// Plotly's text is a little HTML: <b>, <br>, entities. Plain text for SVG.
function plain(text) {
  // Only Plotly's own tags: a word such as "<unk>" is text.
  const tags = /<\/?(?:b|i|em|sup|sub|span|a)\b[^>]*>/gi;
  entities.innerHTML = String(text ?? "")
    .replace(/<br\s*\/?>/gi, " ")
    .replace(tags, "")
    .replace(/&(?![#a-z0-9]+;)/gi, "&amp;")
    .replace(/</g, "&lt;");
  return entities.value;
}

function label(parent, text, x, y, { anchor = "start", baseline = "middle", size, weight, fill, rotate } = {}) {
  const t = node(
    "text",
    {
      x,
      y,
      "text-anchor": anchor,
      "dominant-baseline": baseline,
      "font-size": size,
      "font-weight": weight,
      fill,
      transform: rotate ? `rotate(${rotate} ${x} ${y})` : undefined,
    },
    parent,
  );
  // A power (α<sup>γ</sup>) is raised and smaller, as Plotly draws it; the text reads the same ("αγ").
  String(text ?? "")
    .split(/<sup>(.*?)<\/sup>/i)
    .forEach((part, i) => {
      if (i % 2 === 0) t.append(plain(part));
      else node("tspan", { "baseline-shift": "super", "font-size": "70%" }, t).textContent = plain(part);
    });
  return t;
}

// An SVG path through [x, y] points; a null point lifts the pen (Plotly's gaps, connectgaps false).
function pathThrough(points) {
  let d = "";
  let pen = false;
  for (const p of points) {
    if (p) d += `${pen ? "L" : "M"}${p[0].toFixed(1)},${p[1].toFixed(1)}`;
    pen = Boolean(p);
  }
  return d;
}

const isNumber = (v) => typeof v === "number" && Number.isFinite(v);
const titleOf = (obj) => (typeof obj?.title === "string" ? obj.title : obj?.title?.text) || "";

function niceStep(span, count) {
  const raw = span / Math.max(count, 1);
  const power = 10 ** Math.floor(Math.log10(raw));
  const unit = raw / power;
  return (unit <= 1 ? 1 : unit <= 2 ? 2 : unit <= 5 ? 5 : 10) * power;
}

function formatTick(value, step, format) {
  const fixed = /^\.(\d+)f$/.exec(format || "");
  if (fixed) return value.toFixed(Number(fixed[1]));
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  return Number(value.toFixed(Math.min(decimals + 1, 10))).toString();
}

// --- axes ---------------------------------------------------------------------------------------------------

// Plotly's axis ids: trace.xaxis "x2" <-> layout.xaxis2.
const layoutKey = (id) => id[0] + "axis" + id.slice(1);

function axisValues(trace, letter) {
  // The values a trace puts on its x or y axis (a horizontal bar swaps its roles).
  if (trace.type === "bar" && trace.orientation === "h") return letter === "x" ? trace.x || [] : trace.y || [];
  return trace[letter] || [];
}

function buildAxis(id, spec, traces, letter, axLen) {
  const values = traces.flatMap((t) => axisValues(t, letter)).filter((v) => v !== null && v !== undefined);
  const category = spec.type === "category" || values.some((v) => typeof v === "string");
  const axis = { id, spec, letter, category, title: titleOf(spec) };
  if (category) {
    const order = spec.categoryorder === "array" && spec.categoryarray ? spec.categoryarray.map(String) : [];
    for (const v of values) if (!order.includes(String(v))) order.push(String(v));
    axis.categories = order;
    axis.range = spec.range ? [...spec.range] : [-0.5, Math.max(order.length, 1) - 0.5];
    axis.position = (v) => order.indexOf(String(v));
    return axis;
  }
  axis.position = (v) => v;
  if (spec.range) {
    axis.range = [...spec.range];
    return axis;
  }
  // Plotly's autorange (plotly.js 4.1, plots/cartesian/autorange.js): each trace contributes its extremes with a
  // padding in pixels, a marker's radius, plus 5% of the axis length where the trace is "padded"; the range is the
  // narrowest that keeps every extreme that far inside. Scatter pads x only with markers or text, y always; a bar's
  // position axis spans its bars unpadded, its value axis reaches 0 and is padded at the far end; a heatmap spans
  // its cells unpadded; "tozero" pins 0 unpadded.
  const extremes = []; // [value, padding in pixels]
  const pad5 = 0.05 * axLen;
  let tozero = spec.rangemode === "tozero";
  for (const t of traces) {
    const vs = axisValues(t, letter).filter(isNumber);
    if (!vs.length) continue;
    const [min, max] = [Math.min(...vs), Math.max(...vs)];
    const valueAxis = t.type === "bar" && (t.orientation === "h" ? letter === "x" : letter === "y");
    if (t.type === "heatmap") {
      const step = vs.length > 1 ? (vs[vs.length - 1] - vs[0]) / (vs.length - 1) : 1;
      extremes.push([vs[0] - step / 2, 0], [vs[vs.length - 1] + step / 2, 0]);
    } else if (valueAxis) {
      tozero = true;
      const errors = t.error_y?.array || [];
      const tops = vs.map((v, i) => v + (errors[i] || 0));
      extremes.push([min, pad5], [Math.max(...tops, ...tracesStackTotals(traces, letter)), pad5]);
    } else if (t.type === "bar") {
      extremes.push([min - 0.5, 0], [max + 0.5, 0]);
    } else {
      const mode = t.mode || "lines+markers";
      const markers = /markers/.test(mode);
      const ppad = markers ? (t.marker?.size ?? 6) / 2 + (t.marker?.line?.width ?? 0) : 0;
      const padded =
        letter === "y"
          ? !/^tozero|^tonext/.test(t.fill || "")
          : markers || /text/.test(mode) || Boolean(t.error_y?.visible);
      extremes.push([min, ppad + (padded ? pad5 : 0)], [max, ppad + (padded ? pad5 : 0)]);
    }
  }
  if (!extremes.length) extremes.push([0, 0], [1, 0]);
  if (tozero) {
    // 0 is in the range, and an end at 0 has no padding.
    extremes.push([0, 0]);
    for (const e of extremes) if (e[0] === 0) e[1] = 0;
  }
  let best = null;
  for (const a of extremes) {
    for (const b of extremes) {
      const dv = b[0] - a[0];
      const dp = axLen - a[1] - b[1];
      if (dv > 0 && dp > 0 && (!best || dv / dp > best.m)) best = { m: dv / dp, a, b };
    }
  }
  let lo;
  let hi;
  if (best) [lo, hi] = [best.a[0] - best.m * best.a[1], best.b[0] + best.m * best.b[1]];
  else [lo, hi] = [extremes[0][0] - 1, extremes[0][0] + 1];
  axis.range = [lo, hi];
  return axis;
}

// Stacked bars reach the sum of their values: the value axis must fit the totals.
function tracesStackTotals(traces, letter) {
  const bars = traces.filter((t) => t.type === "bar" && t._stacked);
  if (!bars.length) return [];
  const totals = new Map();
  for (const t of bars) {
    const keys = t.orientation === "h" ? t.y : t.x;
    const vals = axisValues(t, letter);
    keys.forEach((k, i) => totals.set(String(k), (totals.get(String(k)) || 0) + (isNumber(vals[i]) ? vals[i] : 0)));
  }
  return [...totals.values()];
}

function ticks(axis, pixels) {
  const spec = axis.spec;
  if (spec.tickvals) return spec.tickvals.map((v, i) => ({ value: v, text: spec.ticktext?.[i] ?? String(v) }));
  if (axis.category) {
    const every = Math.max(1, Math.ceil(axis.categories.length / Math.max(1, pixels / 14)));
    return axis.categories
      .filter((_, i) => i % every === 0)
      .map((c) => ({ value: axis.categories.indexOf(c), text: c }));
  }
  const [lo, hi] = axis.range;
  const wanted = spec.nticks || Math.max(2, Math.min(10, Math.round(pixels / (axis.letter === "x" ? 80 : 40))));
  const step = spec.dtick || niceStep(hi - lo, wanted);
  const out = [];
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) {
    out.push({ value: v, text: formatTick(Math.abs(v) < step * 1e-9 ? 0 : v, step, spec.tickformat) });
    if (out.length > 60) break;
  }
  return out;
}

// --- legend -------------------------------------------------------------------------------------------------

function legendEntries(figure) {
  if (figure.layout.showlegend === false) return [];
  const seen = new Set();
  const out = [];
  for (const t of figure.data) {
    if (t.showlegend === false || !t.name || t.type === "heatmap") continue;
    if (!(t.x || []).length) continue; // Plotly leaves a trace without points out of the legend
    const key = t.legendgroup ? `group:${t.legendgroup}` : null;
    if (key && seen.has(key)) continue;
    if (key) seen.add(key);
    out.push(t);
  }
  // Stacked bars and stacked fills list top first (Plotly's default traceorder "reversed" for them).
  const order = figure.layout.legend?.traceorder;
  const stacked = figure.data.some(
    (t) => (t.type === "bar" && ["stack", "relative"].includes(figure.layout.barmode)) || /^tonext/.test(t.fill || ""),
  );
  if (order ? order.includes("reversed") : stacked) out.reverse();
  // Plotly hides the legend of a single trace unless asked to show it.
  return out.length > 1 || figure.layout.showlegend === true ? out : [];
}

const measure = document.createElement("canvas").getContext("2d");

function textWidth(text, fontSize, family) {
  measure.font = `${fontSize}px ${family}`;
  return measure.measureText(plain(text)).width;
}

function layoutLegend(entries, width, fontSize, family) {
  const rows = [];
  let row = [];
  let x = 0;
  for (const t of entries) {
    const w = 40 + textWidth(t.name, fontSize, family) + 10;
    if (row.length && x + w > width) {
      rows.push(row);
      row = [];
      x = 0;
    }
    row.push({ trace: t, x });
    x += w;
  }
  if (row.length) rows.push(row);
  return rows;
}

function swatch(g, t, x, y, defs, theme) {
  if (t.type === "bar") {
    node("rect", { x: x + 4, y: y - 6, width: 26, height: 12, ...barFill(t, 0, defs, theme) }, g);
    return;
  }
  const mode = t.mode || "lines";
  if (mode.includes("lines")) {
    node(
      "line",
      {
        x1: x,
        y1: y,
        x2: x + 34,
        y2: y,
        stroke: t.line?.color || theme.fg,
        "stroke-width": Math.min(t.line?.width ?? 2, 4),
        "stroke-dasharray": DASHES[t.line?.dash],
        opacity: t.opacity,
      },
      g,
    );
  }
  if (mode.includes("markers")) {
    const marker = t.marker || {};
    symbol(
      g,
      x + 17,
      y,
      Math.min(marker.size ?? 6, 12),
      marker.symbol,
      marker.color || theme.fg,
      marker.line,
      t.opacity,
    );
  }
}

// --- marks --------------------------------------------------------------------------------------------------

function patternId(defs, shape, colour) {
  const id = `${defs.dataset.prefix}-${"/x.-+\\|".indexOf(shape)}-${colour.replace(/[^0-9a-z]/gi, "")}`;
  if (defs.querySelector(`#${CSS.escape(id)}`)) return id;
  // As Plotly draws a pattern by default: the marker colour as ink on a transparent ground.
  const p = node("pattern", { id, width: 8, height: 8, patternUnits: "userSpaceOnUse" }, defs);
  const ink = colour;
  const stroke = { stroke: ink, "stroke-width": 2.2 };
  const path = {
    "/": "M-2,10 L10,-2 M-2,2 L2,-2 M6,10 L10,6",
    "\\": "M-2,-2 L10,10 M6,-2 L10,2 M-2,6 L2,10",
    x: "M0,0 L8,8 M8,0 L0,8",
    "-": "M0,4 L8,4",
    "|": "M4,0 L4,8",
    "+": "M0,4 L8,4 M4,0 L4,8",
  }[shape];
  if (path) node("path", { d: path, ...stroke, fill: "none" }, p);
  else if (shape === ".") node("circle", { cx: 4, cy: 4, r: 1.8, fill: ink }, p);
  return id;
}

function barFill(t, i, defs, theme) {
  const marker = t.marker || {};
  const colour = (Array.isArray(marker.color) ? marker.color[i] : marker.color) || theme.series[0];
  const shape = marker.pattern?.shape;
  return {
    fill: shape ? `url(#${patternId(defs, shape, colour)})` : colour,
    opacity: marker.opacity ?? t.opacity,
  };
}

// One marker of Plotly's symbol set (the ones the lab uses), centred on (x, y) with diameter `size`.
function symbol(g, x, y, size, name = "circle", colour, line, opacity) {
  const open = String(name).endsWith("-open");
  const shape = String(name).replace(/-open$/, "");
  const r = size / 2;
  const outline = line?.width ? { stroke: line.color || colour, "stroke-width": line.width } : {};
  const paint =
    open || shape === "line-ew"
      ? { fill: "none", stroke: colour, "stroke-width": Math.max(line?.width ?? 1.5, 1.5) }
      : { fill: colour, ...outline };
  const common = { ...paint, opacity };
  if (shape === "square") return node("rect", { x: x - r, y: y - r, width: size, height: size, ...common }, g);
  if (shape === "diamond")
    return node(
      "path",
      { d: `M${x},${y - r * 1.3}L${x + r * 1.3},${y}L${x},${y + r * 1.3}L${x - r * 1.3},${y}Z`, ...common },
      g,
    );
  if (shape === "line-ew") return node("path", { d: `M${x - r},${y}H${x + r}`, ...common }, g);
  if (shape === "x") {
    const d = `M${x - r},${y - r}L${x + r},${y + r}M${x + r},${y - r}L${x - r},${y + r}`;
    if (line?.color && !open) node("path", { d, stroke: line.color, "stroke-width": r * 0.9, opacity }, g);
    return node("path", { d, stroke: colour, "stroke-width": r * 0.5, opacity }, g);
  }
  if (shape === "star") {
    const points = [];
    for (let k = 0; k < 10; k++) {
      const a = -Math.PI / 2 + (k * Math.PI) / 5;
      const rr = k % 2 ? r * 0.45 : r * 1.1;
      points.push(`${x + rr * Math.cos(a)},${y + rr * Math.sin(a)}`);
    }
    return node("polygon", { points: points.join(" "), ...common }, g);
  }
  return node("circle", { cx: x, cy: y, r, ...common }, g);
}

function drawBars(g, bars, mode, defs, theme) {
  if (!bars.length) return;
  const slot = 0.8; // Plotly's default bargap 0.2
  const stackBase = new Map();
  bars.forEach((b, n) => {
    const t = b.trace;
    const horizontal = t.orientation === "h";
    const keys = horizontal ? t.y || [] : t.x || [];
    const vals = horizontal ? t.x || [] : t.y || [];
    const keyAxis = horizontal ? b.y : b.x;
    const valAxis = horizontal ? b.x : b.y;
    const numericKeys = !keyAxis.category;
    let spacing = 1;
    if (numericKeys && keys.length > 1) {
      const sorted = [...keys].filter(isNumber).sort((a, c) => a - c);
      spacing =
        Math.min(
          ...sorted
            .slice(1)
            .map((v, i) => v - sorted[i])
            .filter((d) => d > 0),
          1,
        ) || 1;
    }
    const width = mode === "group" ? (slot * spacing) / bars.length : slot * spacing;
    const offset = mode === "group" ? (-slot * spacing) / 2 + width * n : -width / 2;
    keys.forEach((k, i) => {
      const v = vals[i];
      if (!isNumber(v)) return;
      const at = keyAxis.position(k);
      if (at < 0 && keyAxis.category) return;
      let base = 0;
      if (mode === "stack") {
        base = stackBase.get(String(k)) || 0;
        stackBase.set(String(k), base + v);
      }
      const k0 = keyAxis.scale(at + offset);
      const k1 = keyAxis.scale(at + offset + width);
      const v0 = valAxis.scale(base);
      const v1 = valAxis.scale(base + v);
      const rect = horizontal
        ? { x: Math.min(v0, v1), y: Math.min(k0, k1), width: Math.abs(v1 - v0), height: Math.abs(k1 - k0) }
        : { x: Math.min(k0, k1), y: Math.min(v0, v1), width: Math.abs(k1 - k0), height: Math.abs(v1 - v0) };
      node("rect", { ...rect, ...barFill(t, i, defs, theme) }, g);
      const err = t.error_y?.array?.[i];
      if (!horizontal && isNumber(err) && err > 0) {
        const cx = (k0 + k1) / 2;
        const top = valAxis.scale(base + v + err);
        const bottom = valAxis.scale(base + v - err);
        const cap = Math.min(4, Math.abs(k1 - k0) / 3);
        node(
          "path",
          {
            d: `M${cx},${top}V${bottom}M${cx - cap},${top}H${cx + cap}M${cx - cap},${bottom}H${cx + cap}`,
            stroke: theme.fg,
            "stroke-width": 1.5,
            fill: "none",
          },
          g,
        );
      }
    });
  });
}

function drawScatter(g, t, xa, ya, theme) {
  const mode = t.mode || (t.x?.length > 20 ? "lines" : "lines+markers");
  const xs = t.x || [];
  const ys = t.y || [];
  const at = (axis, v) => {
    if (v === null || v === undefined) return null;
    const p = axis.position(v);
    return axis.category ? (p === -1 ? null : p) : isNumber(p) ? p : null;
  };
  const points = xs.map((x, i) => {
    const px = at(xa, x);
    const py = at(ya, ys[i]);
    return px === null || py === null ? null : [xa.scale(px), ya.scale(py)];
  });
  const colour = t.line?.color || t.marker?.color || theme.series[0];
  if (mode.includes("lines")) {
    node(
      "path",
      {
        d: pathThrough(points),
        fill: "none",
        stroke: colour,
        "stroke-width": t.line?.width ?? 2,
        "stroke-dasharray": DASHES[t.line?.dash],
        "stroke-linejoin": "round",
        opacity: t.opacity,
      },
      g,
    );
  }
  if (mode.includes("markers")) {
    const m = t.marker || {};
    for (const p of points) if (p) symbol(g, p[0], p[1], m.size ?? 6, m.symbol, m.color || colour, m.line, t.opacity);
  }
  if (mode.includes("text")) {
    const texts = Array.isArray(t.text) ? t.text : [];
    // One position for every point, or one each ("top right" sets a label above its marker).
    const at = (i) => String((Array.isArray(t.textposition) ? t.textposition[i] : t.textposition) || "");
    points.forEach((p, i) => {
      if (!p || !texts[i]) return;
      const right = at(i).includes("right");
      const above = at(i).startsWith("top") ? (t.marker?.size ?? 6) / 2 + 6 : 0;
      label(g, texts[i], p[0] + (right ? 2 : 0), p[1] - above, { anchor: right ? "start" : "middle", fill: theme.fg });
    });
  }
}

function viridis(f) {
  const x = Math.min(1, Math.max(0, f)) * (VIRIDIS.length - 1);
  return VIRIDIS[Math.round(x)];
}

// A colour as [r, g, b, a], from "#rrggbb" or "rgb(…)" / "rgba(…)".
function channels(colour) {
  if (colour.startsWith("#")) return [1, 3, 5].map((i) => parseInt(colour.slice(i, i + 2), 16)).concat(1);
  const [r, g, b, a = 1] = colour.match(/[\d.]+/g).map(Number);
  return [r, g, b, a];
}

// The colour at f (0 to 1) of a heatmap's colorscale: its [position, colour] stops, linear between two, as Plotly
// draws them (Tuning's map greys its 0, "none pays"; Trees' mask runs from a pale grey to blue); Viridis where the
// figure names no stops.
function scaleColour(scale, f) {
  if (!Array.isArray(scale)) return viridis(f);
  const x = Math.min(1, Math.max(0, f));
  const i = scale.findIndex(([at]) => at >= x);
  if (i <= 0) return scale[Math.max(0, i)][1];
  const [[p0, c0], [p1, c1]] = [scale[i - 1], scale[i]];
  const [from, to] = [channels(c0), channels(c1)];
  const mix = from.map((v, k) => v + (to[k] - v) * (p1 > p0 ? (x - p0) / (p1 - p0) : 1));
  const [r, g, b] = mix.slice(0, 3).map(Math.round);
  if (mix[3] >= 1) return `#${[r, g, b].map((v) => v.toString(16).padStart(2, "0")).join("")}`;
  return `rgba(${r}, ${g}, ${b}, ${Number(mix[3].toFixed(3))})`;
}

function drawHeatmap(g, t, xa, ya) {
  const z = t.z || [];
  const flat = z.flat().filter(isNumber);
  const zmin = t.zmin ?? Math.min(...flat);
  const zmax = t.zmax ?? Math.max(...flat);
  const xs = t.x || (z[0] || []).map((_, i) => i);
  const ys = t.y || z.map((_, i) => i);
  const edges = (vs) =>
    vs.map((v, i) => {
      const prev = i > 0 ? (v + vs[i - 1]) / 2 : v - ((vs[1] ?? v + 1) - v) / 2;
      const next = i < vs.length - 1 ? (v + vs[i + 1]) / 2 : v + (v - (vs[i - 1] ?? v - 1)) / 2;
      return [prev, next];
    });
  const xe = edges(xs);
  const ye = edges(ys);
  // A run of equal cells in a row is one rect: Tuning's map of the best γ (50 x 51 cells) took 2,550 rects, ~300 KB
  // of SVG, and takes ~430, ~48 KB.
  z.forEach((row, j) => {
    if (!ye[j]) return;
    const y0 = ya.scale(ye[j][0]);
    const y1 = ya.scale(ye[j][1]);
    for (let i = 0, end = 0; i < row.length && xe[i]; i = end + 1) {
      end = i;
      while (row[end + 1] === row[i] && xe[end + 1]) end += 1;
      if (!isNumber(row[i])) continue;
      const x0 = xa.scale(xe[i][0]);
      const x1 = xa.scale(xe[end][1]);
      node(
        "rect",
        {
          x: Math.min(x0, x1),
          y: Math.min(y0, y1),
          width: Math.abs(x1 - x0) + 0.5,
          height: Math.abs(y1 - y0) + 0.5,
          fill: scaleColour(t.colorscale, (row[i] - zmin) / (zmax - zmin || 1)),
        },
        g,
      );
    }
  });
  return { zmin, zmax, title: titleOf(t.colorbar), scale: t.colorscale, ticks: t.colorbar || {} };
}

// box: [x, y, width, height] of the bar; the longer side is the scale's.
function drawColorbar(g, defs, bar, [x, top, width, height], theme) {
  const across = width > height;
  const id = `${defs.dataset.prefix}-scale`;
  const grad = node("linearGradient", { id, x1: 0, y1: across ? 0 : 1, x2: across ? 1 : 0, y2: 0 }, defs);
  const stops = Array.isArray(bar.scale) ? bar.scale : VIRIDIS.map((c, i) => [i / (VIRIDIS.length - 1), c]);
  for (const [offset, colour] of stops) node("stop", { offset, "stop-color": colour }, grad);
  node("rect", { x, y: top, width, height, fill: `url(#${id})` }, g);
  const step = niceStep(bar.zmax - bar.zmin || 1, 5);
  const values = bar.ticks.tickvals;
  const at = [];
  if (values) values.forEach((v, i) => at.push([v, bar.ticks.ticktext?.[i] ?? formatTick(v, step)]));
  else
    for (let v = Math.ceil(bar.zmin / step) * step; v <= bar.zmax + 1e-9; v += step) at.push([v, formatTick(v, step)]);
  for (const [v, text] of at) {
    const f = (v - bar.zmin) / (bar.zmax - bar.zmin || 1);
    if (across) label(g, text, x + f * width, top + height + 10, { fill: theme.fg, size: 11, anchor: "middle" });
    else label(g, text, x + 16, top + height - f * height, { fill: theme.fg, size: 11 });
  }
  if (!bar.title) return;
  if (across) label(g, bar.title, x + width / 2, top + height + 28, { fill: theme.fg, anchor: "middle" });
  else label(g, bar.title, x, top - 8, { fill: theme.fg, baseline: "auto" });
}

// --- 3D -----------------------------------------------------------------------------------------------------

function drawScene(g, figure, box, theme) {
  const scene = figure.layout.scene || {};
  const traces = figure.data.filter((t) => t.type === "scatter3d");
  const letters = ["x", "y", "z"];
  const ranges = letters.map((l) => {
    const spec = scene[`${l}axis`] || {};
    if (spec.range) return spec.range;
    const vs = traces.flatMap((t) => t[l] || []).filter(isNumber);
    return vs.length ? [Math.min(...vs), Math.max(...vs)] : [0, 1];
  });
  const aspect = scene.aspectratio || { x: 1, y: 1, z: 1 };
  const eye = scene.camera?.eye || { x: 1.25, y: 1.25, z: 1.25 };
  const center = scene.camera?.center || { x: 0, y: 0, z: 0 };
  // Scene coordinates: each axis range mapped onto [-aspect, aspect] (Plotly's cube, scaled).
  // Scene coordinates: each axis range mapped onto [-aspect / 2, aspect / 2]; the eye looks at the centre from
  // camera.eye in the same units, with perspective.
  const toScene = (p) =>
    letters.map((l, i) => ((p[i] - ranges[i][0]) / (ranges[i][1] - ranges[i][0] || 1) - 0.5) * aspect[l]);
  const e = [eye.x, eye.y, eye.z];
  const c = [center.x, center.y, center.z];
  const sub = (a, b) => a.map((v, i) => v - b[i]);
  const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const unit = (a) => {
    const n = Math.hypot(...a) || 1;
    return a.map((v) => v / n);
  };
  const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  const forward = unit(sub(c, e));
  const right = unit(cross(forward, [0, 0, 1]));
  const up = cross(right, forward);
  const project = (p) => {
    const v = sub(toScene(p), e);
    const depth = dot(v, forward);
    return [dot(v, right) / depth, dot(v, up) / depth, depth];
  };
  // The height's tick labels stand left of the scene ("sampled" is 7 letters): on a phone, where the margins are
  // thin, the scene moves right to keep them on screen.
  const zTicks = ticks({ spec: scene.zaxis || {}, letter: "x", category: false, range: ranges[2] }, 300);
  const inset = Math.max(0, Math.max(0, ...zTicks.map((tk) => String(tk.text).length)) * 6 + 10 - box.x);
  box = { ...box, x: box.x + inset, w: box.w - inset };
  // Fit the projected bounding box into the scene's box.
  const corners = [];
  for (const x of ranges[0]) for (const y of ranges[1]) for (const z of ranges[2]) corners.push(project([x, y, z]));
  const minX = Math.min(...corners.map((p) => p[0]));
  const maxX = Math.max(...corners.map((p) => p[0]));
  const minY = Math.min(...corners.map((p) => p[1]));
  const maxY = Math.max(...corners.map((p) => p[1]));
  const scale = Math.min(box.w / (maxX - minX || 1), box.h / (maxY - minY || 1)) * 0.86;
  const screen = (p) => {
    const q = project(p);
    return [
      box.x + box.w / 2 + (q[0] - (minX + maxX) / 2) * scale,
      box.y + box.h / 2 - (q[1] - (minY + maxY) / 2) * scale,
    ];
  };
  // The floor and the two back walls' edges, then the tick labels along the front edges.
  const [[x0, x1], [y0, y1], [z0, z1]] = ranges;
  const far = e[1] < 0 ? y1 : y0; // the wall away from the camera
  const side = e[0] < 0 ? x1 : x0;
  const edges = [
    [
      [x0, y0, z0],
      [x1, y0, z0],
    ],
    [
      [x0, y1, z0],
      [x1, y1, z0],
    ],
    [
      [x0, y0, z0],
      [x0, y1, z0],
    ],
    [
      [x1, y0, z0],
      [x1, y1, z0],
    ],
    [
      [x0, far, z0],
      [x0, far, z1],
    ],
    [
      [x1, far, z0],
      [x1, far, z1],
    ],
    [
      [x0, far, z1],
      [x1, far, z1],
    ],
    [
      [side, y0, z0],
      [side, y0, z1],
    ],
    [
      [side, y1, z0],
      [side, y1, z1],
    ],
    [
      [side, y0, z1],
      [side, y1, z1],
    ],
  ];
  const grid = node("g", { stroke: theme.grid, "stroke-width": 1, fill: "none" }, g);
  for (const [a, b] of edges) {
    const [p, q] = [screen(a), screen(b)];
    node("line", { x1: p[0], y1: p[1], x2: q[0], y2: q[1] }, grid);
  }
  const near = e[1] < 0 ? y0 : y1;
  const front = e[0] < 0 ? x0 : x1;
  const axisTicks = (letter, at) => {
    const spec = scene[`${letter}axis`] || {};
    const i = letters.indexOf(letter);
    const axis = { spec, letter: "x", category: false, range: ranges[i] };
    return ticks(axis, 300).map((tk) => {
      const p = [...at];
      p[i] = tk.value;
      return [screen(p), tk.text];
    });
  };
  const text = { fill: theme.fg, size: 10, anchor: "middle" };
  for (const [p, t] of axisTicks("x", [0, near, z0])) label(g, t, p[0], p[1] + 12, text);
  for (const [p, t] of axisTicks("y", [front, 0, z0])) label(g, t, p[0] + 10, p[1] + 10, { ...text, anchor: "start" });
  const left = e[0] > 0 ? x0 : x1;
  for (const [p, t] of axisTicks("z", [left, near, 0])) label(g, t, p[0] - 6, p[1], { ...text, anchor: "end" });
  const titles = [
    ["x", [(x0 + x1) / 2, near, z0], [0, 30]],
    ["y", [front, (y0 + y1) / 2, z0], [40, 18]],
    ["z", [left, near, (z0 + z1) / 2], [-30, 0]],
  ];
  for (const [letter, at, [dx, dy]] of titles) {
    const title = titleOf(scene[`${letter}axis`]);
    const p = screen(at);
    if (title) label(g, title, p[0] + dx, p[1] + dy, { fill: theme.fg, size: 11, anchor: "middle" });
  }
  // Marks, far to near, so nearer markers cover farther ones as in the WebGL scene.
  for (const t of traces) {
    const xs = t.x || [];
    const pts = xs.map((x, i) =>
      isNumber(x) && isNumber(t.y?.[i]) && isNumber(t.z?.[i]) ? screen([x, t.y[i], t.z[i]]) : null,
    );
    if ((t.mode || "markers").includes("lines")) {
      node(
        "path",
        {
          d: pathThrough(pts),
          fill: "none",
          stroke: t.line?.color || theme.fg,
          "stroke-width": Math.min(t.line?.width ?? 2, 4),
        },
        g,
      );
    }
  }
  for (const t of traces) {
    if (!(t.mode || "markers").includes("markers")) continue;
    const m = t.marker || {};
    (t.x || []).forEach((x, i) => {
      if (!isNumber(x) || !isNumber(t.y?.[i]) || !isNumber(t.z?.[i])) return;
      const p = screen([x, t.y[i], t.z[i]]);
      symbol(g, p[0], p[1], (m.size ?? 6) * 1.2, m.symbol, m.color || theme.fg, m.line, t.opacity);
    });
  }
  return ranges;
}

// --- the figure ---------------------------------------------------------------------------------------------

// theme: {fg, grid, zero, font, series: [colour]} (charts.js resolves them from Material's palette)
// width: the target's width in pixels, if the caller has read it already (reading it forces a layout)
export function sketch(target, figure, theme, width = target.clientWidth) {
  const layout = figure.layout || {};
  const data = (figure.data || []).filter((t) => t.visible !== false);
  const fig = { data, layout };
  width = Math.round(width || FALLBACK_WIDTH);
  const height = layout.height || 450;
  const margin = { ...DEFAULT_MARGIN, ...(layout.margin || {}) };
  const fontSize = layout.font?.size || 12;

  const svg = node("svg", {
    class: "sd-sketch",
    width: "100%",
    height,
    viewBox: `0 0 ${width} ${height}`,
    "aria-hidden": "true",
    "font-family": layout.font?.family || theme.font,
    "font-size": fontSize,
    fill: theme.fg,
  });
  // Ids of patterns and gradients are unique per sketch: a page holds many, and url(#id) resolves page-wide.
  const defs = node("defs", { "data-prefix": `sd-sketch-${++sketchCount}` }, svg);

  // The legend's bottom edge sits at paper y (1.02: just above the plot); when it does not fit in the top margin,
  // the plot moves down, as Plotly's automargin does.
  const entries = legendEntries(fig);
  const family = layout.font?.family || theme.font;
  const legendRows = layoutLegend(entries, width - margin.l - margin.r, fontSize, family);
  const legendHeight = legendRows.length * 20;
  const hasScene = data.some((t) => t.type === "scatter3d");
  const heat = data.find((t) => t.type === "heatmap");
  const bar = heat && heat.showscale !== false ? heat.colorbar || {} : null;
  const beside = bar && bar.orientation !== "h"; // a bar at the right takes width from the plot
  const plot = { x: margin.l, y: margin.t, w: width - margin.l - margin.r - (beside ? 80 : 0), h: 0 };
  plot.h = Math.max(40, height - plot.y - margin.b);
  const legendY = layout.legend?.y ?? 1.02;
  let legendTop = plot.y + (1 - legendY) * plot.h - legendHeight - 2;
  if (!hasScene && legendRows.length && legendTop < 2) {
    plot.y += 2 - legendTop;
    plot.h = Math.max(40, height - plot.y - margin.b);
    legendTop = plot.y + (1 - legendY) * plot.h - legendHeight - 2;
  }
  if (hasScene) legendTop = 4;

  if (titleOf(layout)) label(svg, titleOf(layout), margin.l, 18, { weight: "bold", size: fontSize + 2 });

  const legend = node("g", { class: "sd-sketch-legend" }, svg);
  legendRows.forEach((row, r) => {
    for (const item of row) {
      const y = legendTop + r * 20 + 10;
      swatch(legend, item.trace, margin.l + item.x, y, defs, theme);
      label(legend, item.trace.name, margin.l + item.x + 40, y, { fill: theme.fg });
    }
  });

  // Plotly hides a trace without points (visible: false): it is not counted as drawn.
  svg.dataset.traces = String(data.filter((t) => (t.type === "heatmap" ? t.z : t.x || t.y || [])?.length).length);
  if (hasScene) {
    const top = legendTop + legendHeight + 4;
    const ranges = drawScene(
      node("g", { class: "sd-sketch-scene" }, svg),
      fig,
      { x: margin.l, y: top, w: width - margin.l - margin.r, h: height - top - margin.b },
      theme,
    );
    svg.dataset.ranges = JSON.stringify({ "scene.x": ranges[0], "scene.y": ranges[1], "scene.z": ranges[2] });
    target.append(svg);
    return svg;
  }

  // Axes: each trace names its pair; each id gets its layout spec, domain and pixel scale.
  const barmode = layout.barmode || "group";
  for (const t of data) if (t.type === "bar" && barmode === "stack") t._stacked = true;
  const ids = { x: new Set(["x"]), y: new Set(["y"]) };
  for (const t of data) {
    ids.x.add(t.xaxis || "x");
    ids.y.add(t.yaxis || "y");
  }
  for (const key of Object.keys(layout)) {
    const m = /^([xy])axis(\d*)$/.exec(key);
    if (m) ids[m[1]].add(m[1] + m[2]);
  }
  const axes = {};
  for (const letter of ["x", "y"]) {
    for (const id of ids[letter]) {
      const spec = layout[layoutKey(id)] || {};
      const own = data.filter((t) => (t[`${letter}axis`] || letter) === id);
      const overlay = spec.overlaying ? layout[layoutKey(spec.overlaying)] || {} : null;
      const domain = (overlay || spec).domain || [0, 1];
      const axis = buildAxis(
        id,
        spec,
        own,
        letter,
        Math.abs(domain[1] - domain[0]) * (letter === "x" ? plot.w : plot.h),
      );
      if (letter === "x") {
        const [a, b] = [plot.x + domain[0] * plot.w, plot.x + domain[1] * plot.w];
        axis.pixels = [a, b];
        axis.scale = (v) => a + ((v - axis.range[0]) / (axis.range[1] - axis.range[0] || 1)) * (b - a);
      } else {
        const [a, b] = [plot.y + (1 - domain[0]) * plot.h, plot.y + (1 - domain[1]) * plot.h];
        axis.pixels = [a, b];
        axis.scale = (v) => a + ((v - axis.range[0]) / (axis.range[1] - axis.range[0] || 1)) * (b - a);
      }
      axis.used = own.length > 0 || Boolean(layout[layoutKey(id)]);
      axes[id] = axis;
    }
  }
  for (const t of data) delete t._stacked;
  svg.dataset.ranges = JSON.stringify(
    Object.fromEntries(
      Object.values(axes)
        .filter((a) => a.used)
        .map((a) => [a.id, a.range]),
    ),
  );

  const gridLayer = node("g", { class: "sd-sketch-grid" }, svg);
  const marks = node("g", { class: "sd-sketch-marks" }, svg);
  const axisLayer = node("g", { class: "sd-sketch-axes", fill: theme.fg }, svg);

  // Grid lines and tick labels.
  for (const axis of Object.values(axes)) {
    if (!axis.used) continue;
    const spec = axis.spec;
    const partner = axes[spec.anchor || (axis.letter === "x" ? "y" : "x")] || axes[axis.letter === "x" ? "y" : "x"];
    const cross = partner.pixels;
    const rightSide = spec.side === "right";
    const list = ticks(axis, Math.abs(axis.pixels[1] - axis.pixels[0]));
    let widest = 0; // the widest tick label drawn on a y axis: its title stands beyond it, as Plotly's does
    for (const tk of list) {
      const p = axis.scale(tk.value);
      if (!Number.isFinite(p) || p < Math.min(...axis.pixels) - 1 || p > Math.max(...axis.pixels) + 1) continue;
      if (axis.letter === "x") {
        if (!axis.category && spec.showgrid !== false)
          node("line", { x1: p, x2: p, y1: cross[0], y2: cross[1], stroke: theme.grid }, gridLayer);
        const angle = spec.tickangle;
        label(axisLayer, tk.text, p, cross[0] + 14, {
          anchor: angle ? "end" : "middle",
          rotate: angle || undefined,
          fill: theme.fg,
        });
      } else {
        if (spec.showgrid !== false && !spec.overlaying && !(axis.category && data.some((t) => t.type === "bar"))) {
          node(
            "line",
            { x1: cross[0], x2: cross[1], y1: p, y2: p, stroke: Math.abs(tk.value) < 1e-12 ? theme.zero : theme.grid },
            gridLayer,
          );
        }
        label(axisLayer, tk.text, rightSide ? cross[1] + 6 : cross[0] - 6, p, {
          anchor: rightSide ? "start" : "end",
          fill: theme.fg,
        });
        widest = Math.max(widest, textWidth(String(tk.text), fontSize, family));
      }
    }
    if (axis.title) {
      const mid = (axis.pixels[0] + axis.pixels[1]) / 2;
      if (axis.letter === "x")
        label(axisLayer, axis.title, mid, cross[0] + (spec.tickangle ? 58 : 36), {
          anchor: "middle",
          fill: theme.fg,
          size: fontSize + 2,
        });
      else {
        // 44 px from the axis, or beyond the widest tick label (Trees' mask labels its rows "4:small"), within the
        // chart.
        const off = Math.max(44, widest + 6 + fontSize);
        const x = rightSide ? Math.min(width - fontSize, cross[1] + off) : Math.max(fontSize, cross[0] - off);
        label(axisLayer, axis.title, x, mid, {
          anchor: "middle",
          rotate: rightSide ? 90 : -90,
          fill: theme.fg,
          size: fontSize + 2,
        });
      }
    }
  }

  // Marks: heatmaps, then bars (grouped per axis pair), then lines, markers and text, in trace order.
  let colourbar = null;
  for (const t of data)
    if (t.type === "heatmap") colourbar = drawHeatmap(marks, t, axes[t.xaxis || "x"], axes[t.yaxis || "y"]);
  const pairs = new Map();
  for (const t of data) {
    if (t.type !== "bar") continue;
    const key = `${t.xaxis || "x"} ${t.yaxis || "y"}`;
    if (!pairs.has(key)) pairs.set(key, []);
    pairs.get(key).push({ trace: t, x: axes[t.xaxis || "x"], y: axes[t.yaxis || "y"] });
  }
  for (const bars of pairs.values()) drawBars(marks, bars, barmode, defs, theme);
  for (const t of data)
    if (t.type === "scatter") drawScatter(marks, t, axes[t.xaxis || "x"], axes[t.yaxis || "y"], theme);
  // A horizontal bar sits in the bottom margin, its ticks and then its title under it (as the map on Tuning has
  // it: yref "container", y 0, title side "bottom"), above Plotly's 10 px pad.
  if (colourbar && beside)
    drawColorbar(axisLayer, defs, colourbar, [plot.x + plot.w + 16, plot.y + 14, 12, plot.h - 14], theme);
  else if (colourbar && bar) drawColorbar(axisLayer, defs, colourbar, [plot.x, height - 59, plot.w, 12], theme);

  // Shapes (lines) and annotations, in data or paper coordinates.
  const where = (ref, value, letter) => {
    if (ref === "paper") return letter === "x" ? plot.x + value * plot.w : plot.y + (1 - value) * plot.h;
    const axis = axes[ref || letter];
    return axis ? axis.scale(axis.position(value)) : NaN;
  };
  for (const s of layout.shapes || []) {
    if (s.type !== "line") continue;
    node(
      "line",
      {
        x1: where(s.xref, s.x0, "x"),
        x2: where(s.xref, s.x1, "x"),
        y1: where(s.yref, s.y0, "y"),
        y2: where(s.yref, s.y1, "y"),
        stroke: s.line?.color || theme.fg,
        "stroke-width": s.line?.width ?? 2,
        "stroke-dasharray": DASHES[s.line?.dash],
      },
      marks,
    );
  }
  for (const a of layout.annotations || []) {
    const x = where(a.xref, a.x, "x");
    const y = where(a.yref, a.y, "y");
    if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
    label(axisLayer, a.text, x, y, {
      anchor: { left: "start", right: "end" }[a.xanchor] || "middle",
      baseline: { bottom: "auto", top: "hanging" }[a.yanchor] || "middle",
      size: a.font?.size,
      weight: /<b>/.test(a.text || "") ? "bold" : undefined,
      fill: theme.fg,
    });
  }
  target.append(svg);
  return svg;
}
