// Widget "tuning-vllm": the reader pastes vLLM's /metrics output (optionally an earlier and a later dump) or its
// "SpecDecoding metrics" log line; Python (vllm_metrics.py, through tuning.vllm) reads the counters, fits α, tests
// whether acceptance falls with depth and recommends γ under the reader's cost model: the draft cost c (Theorem
// 3.8), or the Cost page's roofline for chosen hardware, models, batch size and context (with a link to that page
// at the same settings). The pasted text stays in the page: it goes to the in-page Python worker only, and never
// into the URL (the settings do: cost, costmodel, hardware, target, draft, batch, context). Text Python cannot read
// comes back as a message, shown in place of the results.

import { define } from "../ui/widget.js";
import { el, fixed, grouped, scroller, select } from "../ui/controls.js";
import { param } from "../ui/url.js";
import { DRAFTS, HARDWARE, TARGETS } from "./presets.js";

const METRICS = [
  { name: "accept-rate", label: "Draft acceptance rate (accepted / drafted)", format: fixed(3) },
  { name: "tokens-per-pass", label: "Tokens per target pass (1 + accepted / drafts)", format: fixed(3) },
  { name: "alpha", label: "α, the i.i.d. fit (accepted / verified)", format: fixed(3) },
  { name: "gamma", label: "Your γ (draft positions)" },
  { name: "optimal-gamma", label: "Best γ under your cost model (measured profile)" },
  { name: "optimal-gamma-iid", label: "Best γ under your cost model (i.i.d. fit)" },
];
const COST_MODELS = [
  ["c", "Draft cost c (Theorem 3.8)"],
  ["roofline", "Roofline: hardware and models"],
];
const ROOFLINE_KEYS = ["hardware", "target", "draft", "batch", "context"];
const COLUMNS = [
  ["position", "Position k", (v) => String(v)],
  ["accepted", "Drafts accepted at k", grouped],
  ["rate", "Per-position acceptance", fixed(3)],
  ["conditional", "α at depth k", (v) => (v === null ? "—" : fixed(3)(v))],
  ["iid", "i.i.d. fit αᵏ", fixed(3)],
];

export default define(import.meta.url, (settings) => {
  const a = settings.args || {};
  return {
    controls: [
      {
        key: "metrics",
        label: "vLLM metrics",
        kind: "textarea",
        rows: 8,
        value: a.metrics ?? "",
        placeholder: "Paste /metrics output or a “SpecDecoding metrics:” log line",
      },
      {
        key: "later",
        label: "Later /metrics dump (optional: the window between the two is analysed)",
        kind: "textarea",
        rows: 4,
        value: a.later ?? "",
      },
      select("costmodel", "Cost model", COST_MODELS, a.costmodel ?? "c"),
      param("cost", a.cost),
      select("hardware", "Hardware", HARDWARE, a.hardware ?? "h100"),
      select("target", "Target model", TARGETS, a.target ?? "llama-3.1-8b"),
      select("draft", "Draft model", DRAFTS, a.draft ?? "llama-3.2-1b"),
      param("batch", a.batch),
      param("context", a.context),
    ],
    metrics: METRICS,
    view,
  };
});

function view(ctx) {
  let example = ctx.initial?.example || null;
  const privacy = el(
    "p",
    "sd-note",
    "Everything you paste stays in this browser tab: Python running in the page reads it; it is never uploaded and never put into the link.",
  );
  const fill = ctx.button(
    "Example",
    () => example && ctx.set({ metrics: example.metrics, later: example.later }),
    "md-button--primary",
  );
  const clear = ctx.button("Clear", () => ctx.set({ metrics: "", later: "" }));
  const bar = el(
    "div",
    "sd-buttons",
    fill,
    clear,
    el("span", "sd-note", "The example is invented, in the format of vLLM 0.11.0: two dumps of a two-engine server."),
  );
  const message = el("p", "sd-verdict sd-vllm-message");
  const results = el("div", "sd-vllm-results");
  const summary = el("p", "sd-vllm-summary");
  const verdict = el("p", "sd-verdict sd-verdict--strong sd-vllm-verdict");
  const evidence = el("p", "sd-note sd-vllm-evidence");
  const advice = el("p", "sd-vllm-advice");
  // Under the roofline: what a draft step costs there, where verification turns compute-bound, and the Cost page.
  const roofText = el("span");
  const costLink = el("a", "", "See these settings on the Cost page");
  const roofline = el("p", "sd-note sd-vllm-roofline", roofText, " ", costLink, ".");
  const notes = el("ul", "sd-note sd-vllm-notes");
  const table = el("table", "sd-table sd-table--numeric sd-vllm-table");
  const wrap = scroller("Accepted drafts per position", table);
  // The charts are made with the first analysis: until then there is nothing to draw (or to restyle on a theme
  // change), and the page's charts are all drawn ones.
  const charts = el("div", "sd-charts");
  let positions = null;
  let gammas = null;
  results.append(summary, verdict, evidence, ctx.tiles(), advice, roofline, notes, wrap, charts);
  results.hidden = true; // until a paint says what the text held
  ctx.el.append(
    privacy,
    ctx.group("sd-controls sd-vllm-areas", ["metrics", "later"]),
    bar,
    ctx.group("sd-controls", ["costmodel", "cost", ...ROOFLINE_KEYS]),
    message,
    results,
  );

  // Only the chosen cost model's settings show.
  const { costmodel } = ctx.controls;
  const chooseModel = () => {
    const onRoofline = costmodel.value === "roofline";
    ctx.controls.cost.root.hidden = onRoofline;
    for (const key of ROOFLINE_KEYS) ctx.controls[key].root.hidden = !onRoofline;
  };
  chooseModel();
  ctx.on(costmodel.input, "change", chooseModel);

  const show = (state, text) => {
    results.hidden = state !== "ok";
    message.hidden = state === "ok";
    message.dataset.state = state;
    message.classList.toggle("sd-verdict--bad", state === "error");
    message.classList.toggle("sd-verdict--strong", state === "error");
    message.textContent = text;
    // An unreadable paste is announced at once; the empty prompt is not news.
    if (state === "error") message.setAttribute("role", "alert");
    else message.removeAttribute("role");
  };

  function table_(rows) {
    table.replaceChildren();
    const caption = el(
      "caption",
      "",
      "Counts over the window analysed; α at depth k is the share of drafts reaching position k that were accepted there.",
    );
    const head = el("tr");
    for (const [, label] of COLUMNS) {
      const th = el("th", "", label);
      th.scope = "col";
      head.append(th);
    }
    const body = el("tbody");
    for (const row of rows) {
      const tr = el("tr");
      for (const [key, , format] of COLUMNS) tr.append(el("td", "", format(row[key])));
      body.append(tr);
    }
    const thead = el("thead");
    thead.append(head);
    table.append(caption, thead, body);
  }

  return {
    paint(result) {
      example = result.example || example;
      fill.disabled = !example;
      if (result.status !== "ok") {
        for (const { name } of METRICS) ctx.clearMetric(name, "—");
        show(result.status, result.message);
        return;
      }
      show("ok", "");
      ctx.setMetrics(result.metrics);
      summary.textContent = result.summary;
      verdict.textContent = result.verdict.text;
      verdict.dataset.kind = result.verdict.kind;
      // The sentence says which case applies; green marks the i.i.d. model standing (no trend, or one too small to
      // matter). A falling profile is the common case, not a fault: no red.
      verdict.classList.toggle("sd-verdict--ok", ["flat", "slight"].includes(result.verdict.kind));
      evidence.textContent = result.verdict.evidence;
      advice.textContent = result.recommendation;
      roofline.hidden = result.costmodel !== "roofline";
      roofText.textContent = result.roofline.text;
      costLink.href = `../cost/?${new URLSearchParams(result.roofline.query)}`;
      notes.replaceChildren(...result.notes.map((note) => el("li", "", note)));
      notes.hidden = !result.notes.length;
      table_(result.rows);
      if (!positions) {
        positions = ctx.chart(
          "Line chart of the acceptance at each draft position: measured, against the i.i.d. curve α to the power k",
        );
        gammas = ctx.chart(
          "Line chart of the expected tokens per target pass against γ under the i.i.d. fit and under the measured profile, with your γ and the best γ marked",
        );
        charts.append(positions, gammas);
      }
      ctx.render(positions, result.figures.positions);
      ctx.render(gammas, result.figures.gamma);
    },
  };
}
