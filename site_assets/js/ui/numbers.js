// A widget's charts as tables, for a reader who cannot hover them: Plotly's hover needs a pointer, and a screen
// reader hears only a chart's label. One closed <details> under the widget (ui/widget.js appends it); its tables
// are built from the figures on screen when it opens, and again after each new figure while it is open. Per chart
// and per pair of axes (a panel), one table:
// - series with one point each (a bar per series): a category and its value per row;
// - else a category per row and a series per column (the categories of all the panel's series, in order); where
//   that would leave most cells blank (series at different x), a table per series, the series of one point
//   together in one;
// - a series with a category more than once (a scatter of points), a heatmap (y by x) or a 3D series: its own
//   table of its points (x, y, and z or its text labels);
// - a panel whose value axis is hidden (a drawing, such as the Trees page's tree): its points by category, with
//   their labels and series.
// Values are read as the axes show them (tick names; a log scale drawn on a linear axis as 10 to the value). Series
// that only label (text, or hoverinfo "skip") are left out; a table holds at most MAX_ROWS rows and says how many
// it left out.

import { el, grouped, scroller } from "./controls.js";

const MAX_ROWS = 200;
const THREE_D = new Set(["scatter3d", "surface", "mesh3d"]);

// Plotly's text markup as plain text: "α<sup>γ</sup>" as "α^γ", "<br>" as a space, its style tags dropped and
// entities ("&#947;") read. Any other "<...>" is text, as Plotly shows it (the tokenizer's "<end>").
const ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };
function plain(text) {
  return String(text ?? "")
    .replace(/<sup>(.*?)<\/sup>/gi, "^$1")
    .replace(/<sub>(.*?)<\/sub>/gi, "_$1")
    .replace(/<br\s*\/?>/gi, " ")
    .replace(/<\/?(?:b|i|em|strong|span|a|s|u)(?:\s[^>]*)?>/gi, "")
    .replace(/&(?:#(\d+)|#x([\da-f]+)|([a-z]+));/gi, (entity, dec, hex, name) =>
      dec || hex ? String.fromCodePoint(dec ? Number(dec) : parseInt(hex, 16)) : (ENTITIES[name] ?? entity),
    )
    .trim();
}

function cell(value) {
  if (typeof value !== "number") return value === null || value === undefined ? "" : plain(value);
  return Number.isInteger(value) ? grouped(value) : String(Number(value.toPrecision(4)));
}

const words = (values) => Array.isArray(values) && values.length > 0 && values.every((v) => typeof v === "string");
const titleOf = (axis) => plain(axis?.title?.text ?? axis?.title ?? "");
const axisKey = (id, letter) => `${letter}axis${(id || letter).slice(1)}`;

// A panel's own title, when the chart has several: an annotation on its x axis's domain, or on the paper at the
// panel's top left corner.
function panelTitle(layout, xid, yid) {
  if (!Object.keys(layout).some((key) => /^[xy]axis\d+$/.test(key))) return "";
  const x = layout[axisKey(xid, "x")]?.domain;
  const y = layout[axisKey(yid, "y")]?.domain;
  const note = (layout.annotations || []).find(
    (a) => a.xref === `${xid || "x"} domain` || (a.xref === "paper" && x && y && a.x === x[0] && a.y === y[1]),
  );
  return note ? plain(note.text) : "";
}

// An axis's values as its reader sees them: where the axis names its ticks (tickvals and ticktext), a tick's name;
// where those names are the powers of ten of the values (a log scale drawn on a linear axis, as Cost's roofline
// is), 10 to the value.
function ticks(axis) {
  const [vals, text] = [axis?.tickvals || [], axis?.ticktext || []];
  const powers =
    vals.length > 1 && vals.every((v, i) => Math.abs(Number(String(text[i]).replace(/,/g, "")) / 10 ** v - 1) < 1e-9);
  if (powers) return (v) => (typeof v === "number" ? 10 ** v : v);
  const names = new Map(vals.map((v, i) => [v, text[i]]));
  return (v) => names.get(v) ?? v;
}

// One series' points as rows: [x, y, (z or label)]; a heatmap as a matrix.
function pointsTable(t, layout, name) {
  const [tx, ty] = [ticks(layout[axisKey(t.xaxis, "x")]), ticks(layout[axisKey(t.yaxis, "y")])];
  if (Array.isArray(t.z?.[0])) {
    const xs = (t.x || t.z[0].map((_, i) => i)).map(tx);
    const ys = (t.y || t.z.map((_, i) => i)).map(ty);
    const corner = titleOf(layout[axisKey(t.yaxis, "y")]) || "y";
    return { name, head: [corner, ...xs], rows: t.z.map((row, i) => [ys[i], ...row]) };
  }
  const axes = THREE_D.has(t.type)
    ? ["x", "y", "z"].map((a) => titleOf(layout[t.scene || "scene"]?.[`${a}axis`]) || a)
    : [titleOf(layout[axisKey(t.xaxis, "x")]) || "x", titleOf(layout[axisKey(t.yaxis, "y")]) || "y"];
  const third = THREE_D.has(t.type) ? t.z : Array.isArray(t.text) ? t.text : null;
  if (third && !THREE_D.has(t.type)) axes.push("label");
  const rows = (t.x || []).map((x, i) => [tx(x), ty(t.y?.[i]), ...(third ? [third[i]] : [])]);
  return { name, head: axes, rows };
}

// [{name, head: [...], rows: [[...], ...]}] for one figure; name says what the table holds within the chart. On a
// panel whose value axis is hidden (a drawing, such as a tree: its values only place the marks), the points are
// listed by category with their labels and series instead.
function tablesOf(figure) {
  const layout = figure.layout || {};
  const panels = new Map(); // "x y" -> {xid, yid, across, series: [{name, cats, values, text}], drawing}
  const out = [];
  for (const t of figure.data || []) {
    if (t.visible === false || t.hoverinfo === "skip" || t.mode === "text") continue;
    const name = plain(t.name) || "value";
    // Horizontal bars, or markers at words on y: the categories are on y.
    const across = t.orientation === "h" || (words(t.y) && !words(t.x));
    const values = ((across ? t.x : t.y) || []).map(
      ticks(layout[across ? axisKey(t.xaxis, "x") : axisKey(t.yaxis, "y")]),
    );
    const cats = ((across ? t.y : t.x) || values.map((_, i) => i)).map(
      ticks(layout[across ? axisKey(t.yaxis, "y") : axisKey(t.xaxis, "x")]),
    );
    const drawing = layout[across ? axisKey(t.xaxis, "x") : axisKey(t.yaxis, "y")]?.visible === false;
    if (t.type === "heatmap" || THREE_D.has(t.type) || (!drawing && new Set(cats).size < cats.length)) {
      out.push(pointsTable(t, layout, name));
      continue;
    }
    const key = `${t.xaxis || "x"} ${t.yaxis || "y"}`;
    if (!panels.has(key)) panels.set(key, { xid: t.xaxis, yid: t.yaxis, across, drawing, series: [] });
    panels.get(key).series.push({ name, cats, values, text: Array.isArray(t.text) ? t.text : [] });
  }
  for (const { xid, yid, across, drawing, series } of panels.values()) {
    const catTitle = titleOf(layout[across ? axisKey(yid, "y") : axisKey(xid, "x")]) || "category";
    const valueTitle = titleOf(layout[across ? axisKey(xid, "x") : axisKey(yid, "y")]);
    const title = panelTitle(layout, xid, yid);
    const cats = series.flatMap((s) => s.cats);
    if (drawing) {
      const rows = series.flatMap((s) => s.cats.map((c, i) => [c, s.text[i], s.name]));
      if (rows.every((r) => typeof r[0] === "number")) rows.sort((a, b) => a[0] - b[0]);
      out.push({ name: title || catTitle, head: [catTitle, "label", "series"], rows });
    } else if (series.every((s) => s.cats.length === 1) && new Set(cats).size === cats.length) {
      const rows = series.map((s) => [s.cats[0], s.values[0]]);
      out.push({ name: title || valueTitle, head: [catTitle, valueTitle || "value"], rows });
    } else {
      let order = [...new Set(cats)];
      if (order.every((c) => typeof c === "number")) order = order.sort((a, b) => a - b);
      if (order.length * series.length > 2 * cats.length) {
        // Series at different x (the Trees page's chain against its trees): a table per series, and one for the
        // series of a single point (Cost's marked passes), a series per row.
        const named = (name) => (title ? `${title}: ${name}` : name);
        const single = series.filter((s) => s.cats.length === 1);
        for (const s of series.filter((s) => s.cats.length > 1)) {
          const rows = s.cats.map((c, i) => [c, s.values[i]]);
          out.push({ name: named(s.name), head: [catTitle, valueTitle || s.name], rows });
        }
        if (single.length) {
          const rows = single.map((s) => [s.name, s.cats[0], s.values[0]]);
          const name = named(single.map((s) => s.name).join(", "));
          out.push({ name, head: ["series", catTitle, valueTitle || "value"], rows });
        }
      } else {
        const at = series.map((s) => new Map(s.cats.map((c, i) => [c, s.values[i]])));
        const rows = order.map((c) => [c, ...at.map((m) => m.get(c))]);
        const name = title || series.map((s) => s.name).join(", ");
        out.push({ name, head: [catTitle, ...series.map((s) => s.name)], rows });
      }
    }
  }
  return out.filter((t) => t.rows.length); // a series with no points yet (no rounds played) has no table
}

// One chart's tables, each captioned with the chart's label (and which of its tables it is).
function captioned(figure, label) {
  const tables = tablesOf(figure);
  return tables.map((t, i) =>
    tables.length > 1
      ? { ...t, caption: `${label} (${i + 1} of ${tables.length}: ${t.name})` }
      : { ...t, caption: label },
  );
}

function tableElement({ caption, head, rows }) {
  const kept = rows.slice(0, MAX_ROWS);
  const left = rows.length - kept.length;
  const text = left ? `${caption}; the first ${MAX_ROWS} of ${grouped(rows.length)} rows` : caption;
  const headRow = el("tr", "", ...head.map((h) => Object.assign(el("th", "", cell(h)), { scope: "col" })));
  const body = kept.map((row) =>
    el(
      "tr",
      "",
      Object.assign(el("th", "", cell(row[0])), { scope: "row" }),
      ...row.slice(1).map((v) => el("td", "", cell(v))),
    ),
  );
  const table = el(
    "table",
    "sd-table sd-table--titled",
    el("caption", "", text),
    el("thead", "", headRow),
    el("tbody", "", ...body),
  );
  return scroller(caption, table);
}

// charts(): [[chart element, its label, its figure or null], ...]. Returns {root, changed}: changed() after a chart
// has a new figure.
// The summary counts the tables: one chart may give several (a panel each), so a lone chart's summary is
// recounted after each new figure even while closed.
export function chartNumbers(charts, signal) {
  const one = () => charts().length === 1; // a widget can add charts later (ui/widget.js)
  const body = el("div", "sd-data__tables");
  const summary = el("summary", "", one() ? "The chart's numbers, as a table" : "The charts' numbers, as tables");
  const root = el("details", "sd-data", summary, body);
  let frame = null;
  // Written only when it changes: a summary rewritten with every draw made the page lay out again.
  const say = (text) => summary.textContent !== text && (summary.textContent = text);
  const build = () => {
    frame = null;
    const tables = charts().flatMap(([, label, figure]) => (figure ? captioned(figure, label) : []));
    if (one()) say(`The chart's numbers, as ${tables.length > 1 ? "tables" : "a table"}`);
    if (!root.open) return;
    body.replaceChildren(...tables.map(tableElement));
    root.dataset.sdTables = String(Number(root.dataset.sdTables || 0) + 1); // tests wait on it
  };
  root.addEventListener("toggle", build, { signal });
  signal.addEventListener("abort", () => cancelAnimationFrame(frame));
  return {
    root,
    // A closed disclosure of several charts has nothing to recount: only its summary, once a chart is added.
    changed() {
      if (!one()) say("The charts' numbers, as tables");
      if ((root.open || one()) && frame === null) frame = requestAnimationFrame(build);
    },
  };
}
