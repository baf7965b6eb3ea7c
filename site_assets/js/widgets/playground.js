// Widget "playground": speculative decoding on the 24-word quality pair, round by round. Python keeps nothing: each
// answer carries the run's state, sent back with the next call (after a Retry, the run goes on from there), and every
// answer is adopted in call order, so a slider refresh can never overtake a Step and undo it.

import { define } from "../ui/widget.js";
import { announce, el, grouped, output as metricOutput } from "../ui/controls.js";
import { param } from "../ui/url.js";

const CHART_GAP = 300; // ms between chart redraws while a Run streams
const SHOWN_ROUNDS = 24; // rounds in the token stream
const REST_MS = 150; // answers closer than this defer the smaller charts until the controls rest

const fmt =
  (digits, unit = "") =>
  (v) =>
    typeof v === "number" ? `${v.toFixed(digits)}${unit}` : "—";
const int = (v) => (typeof v === "number" ? grouped(v) : "—");
const FORMATS = {}; // metric -> its text on the tiles
for (const [names, format] of [
  ["accept-rate alpha tv-distance tv-noise p-value accept-rate-recent", fmt(3)],
  ["tokens-per-pass tokens-per-pass-recent", fmt(2)],
  ["speedup speedup-recent", fmt(2, "×")],
]) {
  for (const name of names.split(" ")) FORMATS[name] = FORMATS[`${name}-theory`] = format;
}
FORMATS["tokens-emitted"] = FORMATS.rounds = int;

// The takeaway widget (playground-takeaway.js) follows the Playground's results: `latest` (null until the first, and
// once this page's Playground is gone) and a "result" event for each one.
export const takeaway = Object.assign(new EventTarget(), { latest: null });

function publish(detail) {
  takeaway.latest = detail;
  takeaway.dispatchEvent(new CustomEvent("result", { detail }));
}

// [below or at, word]
const QUALITY = [
  [0.05, "random guesser"],
  [0.4, "weak"],
  [0.75, "fair"],
  [1, "good"],
];
const qualityText = (v) =>
  v >= 1 ? "1.00 · matches target" : `${v.toFixed(2)} · ${QUALITY.find(([top], i) => (i ? v < top : v <= top))[1]}`;
const gammaText = (v) => ({ 1: "1 · cautious", 8: "8 · long drafts" })[v] ?? String(v);

const output = (name, className = "") => metricOutput(name, "—", className);

// A metric tile with a line under its value ("theory …"), inside the dd: a dl's groups may hold only dt and dd.
function tile(label, main, ...below) {
  return el("div", "sd-tile", el("dt", "", label), el("dd", "", main, el("span", "sd-tile__sub", ...below)));
}
const theoryTile = (label, name) => tile(label, output(name), "theory ", output(`${name}-theory`));

const LEGEND = {
  accepted: "accepted (draft agreed)",
  rejected: "rejected",
  correction: "→ resampled (correction)",
  discarded: "discarded (after the rejection)",
  bonus: "bonus token (all accepted)",
};

function legend() {
  const token = (kind) => el("span", `sd-token sd-token--${kind}`, kind === "correction" ? "dog" : "cat");
  const root = el(
    "ul",
    "sd-pg-legend",
    ...Object.entries(LEGEND).map(([kind, text]) => el("li", "", token(kind), " ", text)),
  );
  root.setAttribute("aria-label", "Legend of the token stream");
  return root;
}

export default define(import.meta.url, (settings) => {
  const d = settings.args || {};
  return {
    controls: [
      param("quality", d.quality, { format: qualityText }),
      param("gamma", d.gamma, { format: gammaText }),
      param("cost", d.cost, { format: (v) => `${v.toFixed(2)} × a pass` }),
      param("seed", d.seed),
    ],
    view,
  };
});

function view(ctx) {
  const root = ctx.el;
  const runRounds = ctx.settings.runRounds || 2000;
  const runner = ctx.runButton(run, "md-button--primary");
  const runNote = el("span", "sd-note", `Run plays ${grouped(runRounds)} more rounds; Stop ends it early.`);
  const buttons = el(
    "div",
    "sd-buttons",
    runner.button,
    ctx.button("Step", () => play(1)),
    ctx.button("Reset", () => play(0)),
    runNote,
  );

  const explain = announce(
    "sd-pg-explain",
    "Press Step to play one round and read what happened, or Run to stream many.",
  );

  const sd = el("span", "sd-pg-sd");
  const roundsWord = el("span", "", " rounds");
  const metrics = el(
    "dl",
    "sd-tiles",
    tile("Draft acceptance rate", output("accept-rate"), "theory ", output("accept-rate-theory"), sd),
    theoryTile("Per-token acceptance rate α", "alpha"),
    theoryTile("Tokens / target pass", "tokens-per-pass"),
    theoryTile("Speedup (cost c)", "speedup"),
    tile("Tokens emitted", output("tokens-emitted"), "in ", output("rounds"), roundsWord),
    // Each figure stays with its name when the line wraps ("χ² p" above its "—" read as two lines of one).
    tile(
      "Output = target?",
      output("exact", "sd-verdict-value"),
      el("span", "sd-nowrap", "TV ", output("tv-distance")),
      " ",
      el("span", "sd-nowrap", "(noise ≈ ", output("tv-noise"), ")"),
      " · ",
      el("span", "sd-nowrap", "χ² p ", output("p-value")),
    ),
  );
  // The whole-run numbers average every round so far; these show what the settings of the last rounds give.
  const recentHead = el("p", "sd-note", "The last rounds alone: none played yet.");
  const recent = el(
    "dl",
    "sd-tiles",
    theoryTile("Draft acceptance rate, last rounds", "accept-rate-recent"),
    theoryTile("Tokens / target pass, last rounds", "tokens-per-pass-recent"),
    theoryTile("Speedup (cost c), last rounds", "speedup-recent"),
  );
  recent.setAttribute("aria-label", "Metrics over the last rounds only");
  const theoryNote = el(
    "p",
    "sd-note",
    "Theory here is exact for the rounds you played: this pair's acceptance depends on the previous word, so " +
      "each round adds its expected accepted count given the word it started from (± one standard deviation of " +
      "the whole run). Speedup is tokens ÷ (passes + c × drafted): one target pass is the time unit.",
  );
  // Why the two acceptance rates differ, and where to convert one into the other.
  const converter = Object.assign(el("a", "", "Tuning converter"), {
    href: new URL("../tuning/#the-calculator", document.baseURI).href,
  });
  const rates = el(
    "p",
    "sd-note sd-pg-rates",
    "The draft acceptance rate is accepted ÷ drafted, as vLLM (0.11.0) reports it. α is accepted ÷ checked: drafts after " +
      "a rejection are discarded without ever being checked, so they count against the draft acceptance rate " +
      "only, and it sits below α (at γ = 1 nothing is discarded and the two agree). At γ = 4, α = 0.90 gives a draft acceptance rate of 0.77. The ",
    converter,
    " turns one into the other.",
  );

  const streamHead = el("p", "sd-note sd-pg-streamhead", "No rounds yet.");
  const stream = el("div", "sd-pg-stream");
  stream.setAttribute("role", "group");
  stream.setAttribute("aria-label", "Token stream of the last rounds");

  const windowChart = ctx.chart("Line chart: draft acceptance rate over the last 50 rounds, played and theory");
  const acceptedChart = ctx.chart("Bar chart: share of rounds by drafts accepted, played and theory");
  const distChart = ctx.chart("Bar chart: target distribution, emitted output and draft distribution per word");
  const chartRow = el("div", "sd-charts sd-charts--small", windowChart, acceptedChart);
  const distCaption = el(
    "p",
    "sd-note",
    "Like with like: the target's and the draft's rows are averaged over the words each output token followed, " +
      "so the bars match the output only if the output follows the target. The check above tests it per " +
      "context: for each previous word, the words that came next against the target's row there (Pearson's " +
      "χ², cells expected to hold under 5 tokens pooled; the degrees of freedom add up over contexts). A verdict " +
      "needs 100 tokens; p below 0.001 would say the output is not the target's.",
  );

  const cards = (ctx.settings.experiments || []).map((exp) => {
    const go = ctx.button(exp.button || `Try: ${exp.title}`, () => experiment(exp));
    go.dataset.experiment = exp.id || "";
    const look = el("details", "", el("summary", "", "What to look for"), el("p", "", exp.look));
    return el("div", "sd-pg-card", el("h3", "", exp.title), el("p", "sd-pg-predict", exp.predict), go, look);
  });
  // Under the page's h1, before its first h2: an h3 here skipped a level for a reader who moves by headings.
  const experiments = el(
    "section",
    "sd-pg-experiments",
    el("h2", "", "Predict, then test"),
    el("div", "sd-pg-cards", ...cards),
  );
  experiments.setAttribute("aria-label", "Predict, then test");

  root.append(
    ctx.group("sd-controls sd-controls--values"),
    buttons,
    explain,
    metrics,
    recentHead,
    recent,
    rates,
    theoryNote,
  );
  root.append(legend(), streamHead, stream, chartRow, distChart, distCaption, experiments);

  let state = null; // the run, as the last answer returned it (null: a fresh run from the seed)
  let shownRounds = []; // the token stream's rounds, newest last
  let frame = null; // pending chart redraw (a timeout id)
  let rest = null; // pending redraw of the smaller charts once the controls rest (a timeout id)
  let lastDraw = -Infinity; // when the charts were last drawn
  let latest = null;
  let lastRound = null; // the last round played, in words
  const emittedWords = (tokens) =>
    tokens
      .filter(([, k]) => k !== "rejected" && k !== "discarded")
      .map(([w]) => w)
      .join(" ");

  const fresh = () => {
    state = null;
    shownRounds = [];
    lastRound = null;
  };
  const restart = () => {
    fresh();
    explain.textContent = "Reset: a fresh run from the same seed.";
  };
  ctx.on(ctx.controls.seed.input, "change", restart); // a new seed is a new run

  // Charts are the costly part of a paint (Plotly lays out SVG text on the main thread): while a Run streams they
  // redraw at most every CHART_GAP ms, the worker computing the next chunk meanwhile, and the rest of a paint
  // follows every chunk.
  function scheduleCharts() {
    if (!runner.running()) return paintCharts(); // a slider or Step: draw in this very task, no frame to wait for
    if (frame !== null) return;
    frame = setTimeout(() => requestAnimationFrame(paintCharts), Math.max(0, lastDraw + CHART_GAP - performance.now()));
  }

  // An unchanged figure is not redrawn (before a Run, the window chart is the same whatever the sliders say). The
  // others are spread over frames, the distributions first, so the page answers a slider within one chart's drawing
  // time; while answers come in quick succession (a slider dragged), the smaller charts wait until the controls rest.
  const drawn = new Map(); // chart -> JSON of the figure it shows
  function draw(target, figure) {
    const key = JSON.stringify(figure);
    if (drawn.get(target) === key) return false;
    drawn.set(target, key);
    ctx.render(target, figure);
    return true;
  }

  function paintCharts() {
    frame = null;
    if (!latest || ctx.signal.aborted) return;
    draw(distChart, latest.figures.distributions);
    const now = performance.now();
    const quick = !runner.running() && now - lastDraw < REST_MS;
    lastDraw = now;
    clearTimeout(rest);
    if (quick) rest = setTimeout(() => requestAnimationFrame(paintRest), REST_MS);
    else requestAnimationFrame(paintRest);
  }

  function paintRest() {
    if (!latest || ctx.signal.aborted) return;
    // Each later step draws from the newest result, so a Run that outpaces the frames still shows every chart.
    const steps = [
      () => draw(acceptedChart, latest.figures.accepted),
      () => draw(windowChart, latest.figures.window),
      () => publish({ figure: latest.figures.takeaway, settings: latest.settings, live: Boolean(root.dataset.sdLive) }),
    ];
    const next = () => {
      if (ctx.signal.aborted) return;
      while (steps.length) if (steps.shift()() !== false) return void requestAnimationFrame(next);
    };
    next();
  }

  function paint(result) {
    const m = result.metrics;
    for (const [name, format] of Object.entries(FORMATS)) ctx.setMetric(name, m[name] ?? "", format(m[name]));
    roundsWord.textContent = m.rounds === 1 ? " round" : " rounds";
    sd.textContent = m["accept-rate-sd"] !== undefined ? ` ± ${m["accept-rate-sd"].toFixed(3)}` : " (preview)";
    const last = m["recent-rounds"] === 1 ? "The last round" : `The last ${m["recent-rounds"]} rounds`;
    recentHead.textContent = m["recent-rounds"]
      ? `${last} alone (the numbers above average all ${int(m.rounds)}): after a change of settings, these show it.`
      : "The last rounds alone: none played yet.";
    root.querySelector('[data-metric="exact"]').dataset.state = result.verdict.state;
    ctx.setMetric("exact", m.exact ?? "", result.verdict.text);

    renderStream(shownRounds, m.rounds);
    if (result.explanation && result.stream.length) {
      lastRound = result.explanation;
      // A Run's rounds are not read out one by one (a live region), nor do they move the page: its sentence, of
      // one to three lines, changed with every chunk and the tiles under it jumped by as much.
      if (!runner.running()) explain.textContent = lastRound;
    } else if (!m.rounds)
      explain.textContent =
        "No rounds yet: press Step to play one round and read what happened, or Run to stream many.";

    latest = result;
    scheduleCharts();
  }

  function renderStream(rounds, total) {
    const groups = rounds.map((r) => {
      const tokens = r.tokens.map(([word, kind]) =>
        Object.assign(el("span", `sd-token sd-token--${kind}`, word), { title: kind }),
      );
      const group = el("span", "sd-pg-round", el("span", "sd-pg-round__n", String(r.round)), ...tokens);
      group.title = `Round ${r.round}: γ = ${r.gamma}, draft quality ${r.quality}`;
      group.setAttribute("aria-label", `Round ${r.round}: ${r.tokens.map(([w, k]) => `${w} ${k}`).join(", ")}`);
      return group;
    });
    stream.replaceChildren(...groups);
    streamHead.textContent = total
      ? `Showing the last ${rounds.length} of ${grouped(total)} rounds (the last round wrote “${emittedWords(rounds.at(-1).tokens)}”).`
      : "No rounds yet.";
  }

  async function run(signal, total = runRounds) {
    explain.textContent = `Running ${grouped(total)} rounds: the last one played is told here when the run ends.`;
    try {
      // Each chunk is adopted even if the controls moved meanwhile.
      await ctx.chunked(signal, total, (rounds) => ctx.request({ extra: { rounds } }));
    } finally {
      clearTimeout(frame);
      paintCharts(); // the final state, drawn at once
      if (lastRound) explain.textContent = lastRound;
    }
  }

  // Step plays one round, Reset none (a fresh run): a running Run stops first.
  async function play(rounds) {
    await runner.stop();
    if (!rounds) restart();
    await ctx.request({ extra: { rounds } });
  }

  async function experiment(exp) {
    if (exp.reset) await runner.stop();
    if (exp.reset) fresh();
    // A running Run picks the new settings up at its next chunk: the run goes on, no reset.
    ctx.set(Object.fromEntries(Object.entries(exp.set).filter(([key]) => key in ctx.controls)), { quiet: true });
    if (!runner.running()) await runner.run();
  }

  return {
    args: (values, settings, extra) => ({ ...values, rounds: extra?.rounds ?? 0, state }),
    adopt(result) {
      state = result.state;
      shownRounds = [...shownRounds, ...result.stream].slice(-SHOWN_ROUNDS);
    },
    paint,
    cleanup() {
      clearTimeout(frame);
      clearTimeout(rest);
      takeaway.latest = null; // it belonged to this page's Playground
    },
  };
}
