// Widget "lab3d": the home page's 3D lab (handler home.run). Rounds along x, draft positions along y, the verify test
// as height: each checked proposal stands on a stem as tall as min(1, p/q) with its uniform u as a marker, so
// "accepted" means "below the top of the stem". Run, Step and Reset replay the run one half-step at a time.

import { define } from "../ui/widget.js";
import { el, fixed, output, percent, times } from "../ui/controls.js";
import { param } from "../ui/url.js";

const PACE_MS = 260; // between replay frames, so the eye can follow a round from drafted to checked

const CARDS = [
  {
    name: "target-calls-saved",
    label: "Sequential target calls replaced by one check",
    note: "tokens per target pass, minus the one a plain pass gives",
    format: fixed(2),
  },
  {
    name: "relative-latency",
    label: "Relative latency under the draft cost",
    note: "speculative time ÷ plain time, in target passes",
    format: times,
  },
  {
    name: "discarded-fraction",
    label: "Drafts discarded after the first rejection",
    note: "share of all drafted tokens thrown away unchecked",
    format: percent,
  },
];

const wait = (ms, signal) =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });

function cards() {
  const card = ({ name, label, note }) => {
    const theory = el("span", "sd-tile__sub", "theory ", output(`${name}-theory`));
    return el(
      "div",
      "sd-tile",
      el("span", "sd-tile__label", label),
      output(name, "…", "sd-tile__value"),
      theory,
      el("span", "sd-tile__sub", note),
    );
  };
  return el("div", "sd-tiles sd-tiles--large", ...CARDS.map(card));
}

const th = (text, scope) => Object.assign(el("th", "", text), { scope });

function paintTable(table, rows) {
  const head = ["Round", "Drafts, in order", "Ended with", "Tokens emitted"].map((title) => th(title, "col"));
  const cells = (row) => [
    th(String(row.round), "row"),
    ...[row.drafts.join(", "), row.final, String(row.emitted)].map((t) => el("td", "", t)),
  ];
  table.replaceChildren(
    el("thead", "", el("tr", "", ...head)),
    el("tbody", "", ...rows.map((row) => el("tr", "", ...cells(row)))),
  );
}

// On a narrow screen the wide scene would be cut at the sides and float in blank space under the legend: a less
// elongated box, the camera stepped back along its own direction, and a shorter chart (the legend takes ~140 px).
function fit(figure, width) {
  const scene = figure.layout?.scene;
  const eye = scene?.camera?.eye;
  if (!eye || !width || width >= 640) return figure;
  const far = structuredClone(figure);
  const k = 1.15;
  far.layout.scene.camera.eye = { x: eye.x * k, y: eye.y * k, z: eye.z * k };
  far.layout.scene.aspectratio = { x: 1.3, y: 1, z: 0.8 };
  far.layout.height = Math.min(figure.layout.height || 500, 420);
  // Long axis titles would still reach past the sides on a phone: a short one for the draft position, and none for
  // the height, whose title falls at the very left edge (its ticks, "sampled" and the legend say what it is).
  // Plotly does not thin a 3D axis's ticks on a narrow screen: the round axis's 16 labels ran into each other
  // (below 640 px; one in four below 480 px, one in two above).
  const { xaxis, yaxis, zaxis } = far.layout.scene;
  xaxis.dtick = Math.max(xaxis.dtick || 1, width < 480 ? 4 : 2);
  // The draft position's axis is the scene's shortest: at γ 8 its nine labels (1 to 8, "bonus") ran into one smear.
  // Above six, every other position is labelled, and the bonus.
  const { tickvals: at, ticktext: said } = yaxis;
  if (at?.length > 6) {
    const kept = (_, i) => i % 2 === 0 || i === at.length - 1;
    Object.assign(yaxis, { tickvals: at.filter(kept), ticktext: said?.filter(kept) });
  }
  if (width < 480) {
    yaxis.title = { ...yaxis.title, text: "position" };
    zaxis.title = { ...zaxis.title, text: "" };
  }
  return far;
}

export default define(import.meta.url, (settings) => ({
  tables: false, // its own table lists the rounds the chart shows
  controls: [
    param("gamma", settings.args.gamma),
    param("alpha", settings.args.alpha),
    param("cost", settings.args.cost),
    param("seed", settings.args.seed),
  ],
  metrics: CARDS.flatMap(({ name, format }) => [
    { name, format },
    { name: `${name}-theory`, format },
  ]),
  view(ctx) {
    const rounds = ctx.settings.args.rounds; // rounds in the run, all drawn in the chart
    // The header's status line mirrored beside the scene, hidden from screen readers: the header's already speaks.
    const status = el("span", "sd-state");
    status.setAttribute("aria-hidden", "true");
    // A touch screen has no wheel and no hover, and plotly.js 4.1.1 offers no pinch zoom in a 3D scene: there a
    // finger orbits, and the table under the lab gives each round's tokens.
    const touch = matchMedia("(pointer: coarse)").matches;
    const hint = el(
      "span",
      "",
      touch
        ? "Drag to orbit · the table under the lab lists each round's tokens"
        : "Drag to orbit · wheel to zoom · hover a token for its test",
    );
    const caption = el("p", "sd-note sd-lab3d__caption", status, hint);
    ctx.onStatus((python) => {
      status.textContent = python.text;
      status.dataset.state = python.state;
    });
    const chart = ctx.chart(
      "3D chart of speculative rounds: round along x, draft position along y, and the verify test as height. " +
        "The text summary and the table below describe the same rounds.",
    );
    chart.classList.add("sd-lab3d__chart");

    let frame = { shown: rounds, pending: false }; // what the chart shows: all rounds, or a replay's progress
    const run = ctx.runButton(play);
    const step = ctx.button("Step", () => advance());
    const latest = el("p", "sd-lab3d__latest");
    latest.setAttribute("aria-live", "polite");
    const replay = el(
      "div",
      "sd-lab3d__replay",
      el(
        "div",
        "sd-buttons",
        run.button,
        step,
        ctx.button("Reset", () => show(1, true)),
      ),
      latest,
    );

    const footnote = el("p", "sd-note");
    const summary = el("p", "sd-lab3d__summary");
    summary.setAttribute("aria-live", "polite");
    const table = el("table", "sd-table");
    const details = el("details", "sd-lab3d__details", el("summary", "", "The rounds in the chart, as a table"), table);
    ctx.el.append(ctx.group("sd-controls"), caption, chart, replay, cards(), footnote, summary, details);

    // A control change shows the whole new run: any replay stops.
    for (const c of Object.values(ctx.controls)) {
      ctx.on(c.input, c.event, () => {
        run.stop();
        frame = { shown: rounds, pending: false };
      });
    }

    // A replay frame: the first rounds of the same seeded run, the newest one drafted (pending) or checked.
    const show = (shown, pending) => {
      frame = { shown, pending };
      return ctx.request({ extra: { shown, pending } });
    };
    const advance = () => {
      if (frame.pending) return show(frame.shown, false);
      if (frame.shown >= rounds) return show(1, true); // Step after the last round starts over
      return show(frame.shown + 1, true);
    };
    async function play(signal) {
      if (frame.shown >= rounds && !frame.pending) await show(1, true);
      while (!signal.aborted && (frame.shown < rounds || frame.pending)) {
        await wait(PACE_MS, signal);
        if (!signal.aborted && (await advance()) === null) break; // the controls moved on
      }
    }

    return {
      // One frame paints everything from one answer: the cards count the same checked rounds as the chart.
      paint(result) {
        // Without WebGL the chart stays a static drawing (its note says so): no orbit, zoom or hover.
        ctx
          .render(chart, fit(result.figure, chart.clientWidth))
          .then(() => (hint.hidden = Boolean(chart.dataset.sdStatic)));
        latest.textContent = result.latest;
        summary.textContent = result.summary;
        paintTable(table, result.table);
        // Before the first check there is nothing to count: a card says so instead of a number.
        for (const { name } of CARDS) if (!(name in result.metrics)) ctx.setMetric(name, "", "—");
        footnote.textContent = result.footnote;
      },
    };
  },
}));
