// Widget "exact-broken": the real round against deliberately broken ones. The reader picks an implementation;
// Python returns its exact output distribution (in fractions, then as floats) and, on "Sample 10,000 rounds", a
// seeded sample with its TV and chi-square p-value. The broken variants live in specdec_core/web/exactness.py as
// teaching-only functions; "exact" and "zero-draft" run the real steps.
//
//   <div class="sd-widget" data-widget="exact-broken">
//   <script type="application/json">{"handler": "exactness.broken", "args": {"variant": "exact", "p": [...], "q": [...], "labels": [...]}}</script>
//   </div>

const SAMPLES = 10_000;
const NAMES = {
  exact: "Exact: the real steps",
  unclipped: "Accept with p/q unclipped",
  "correct-from-p": "Correction drawn from p",
  "q-over-p": "Accept with q/p",
  unnormalized: "Residual not normalised",
  "draft-temperature": "Temperature on one side only",
  "greedy-soft": "Greedy draft declared as soft q",
  "zero-draft": "Draft probability 0, honest draft",
  "zero-naive": "Draft probability 0, naive p/0",
};

const fixed = (digits) => (v) => Number(v).toFixed(digits);

SDLab.register("exact-broken", {
  mount(el, ctx) {
    const args = { variant: "exact", ...(ctx.settings.args || {}) };
    const variants = ctx.initial?.variants || NAMES;

    const id = `sd-exact-broken-${Math.random().toString(36).slice(2, 8)}`;
    const pick = document.createElement("div");
    pick.className = "sd-control sd-control--select";
    pick.innerHTML = `<label for="${id}">Implementation</label><select id="${id}" name="variant"></select>`;
    const select = pick.querySelector("select");
    for (const key of Object.keys(variants)) select.append(new Option(NAMES[key] || key, key));
    select.value = args.variant;

    const description = document.createElement("p");
    description.className = "sd-cbe-variant";
    const seed = ctx.number({ key: "seed", label: "Seed", min: 0, max: 2 ** 31 - 1, step: 1, value: 0 });
    const sampleButton = ctx.button(`Sample ${SAMPLES.toLocaleString("en")} rounds`, () => send(SAMPLES));
    sampleButton.classList.add("md-button--primary");
    const row = document.createElement("div");
    row.className = "sd-cbe-sample-row";
    row.append(seed.root, sampleButton);

    const verdict = document.createElement("p");
    verdict.className = "sd-cbe-verdict";
    verdict.setAttribute("role", "status");
    verdict.setAttribute("aria-live", "polite");
    const chart = ctx.chart("Bar chart of the target p against this implementation's exact output distribution and, after sampling, its sampled frequencies");
    const metrics = ctx.metrics([
      { name: "exact-tv", label: "Exact TV(output, p)" },
      { name: "tv-distance", label: "Sampled TV(output, p)" },
      { name: "tv-noise", label: "Typical TV from noise alone" },
      { name: "p-value", label: "χ² p-value" },
      { name: "exact", label: "Sample consistent with p?" },
    ]);
    el.append(pick, description, row, verdict, metrics, chart);

    const paint = (result) => {
      const m = result.metrics;
      const law = (row) => row.map((x, i) => `${result.labels[i]} ${x}`).join(", ");
      description.textContent = `${result.description} Exact output law: ${law(result.law)}; target p: ${law(result.target)}.`;
      ctx.render(chart, result.figure);
      if (m.samples) {
        ctx.setMetrics(m, {
          "tv-distance": fixed(4),
          "tv-noise": fixed(4),
          "p-value": (v) => (v < 1e-4 ? Number(v).toExponential(1) : fixed(3)(v)),
          exact: (v) => (v ? "consistent ✓" : "rejected ✗"),
        });
        verdict.textContent = m.exact
          ? `${m.samples.toLocaleString("en")} rounds: TV ${fixed(4)(m["tv-distance"])}, about the ${fixed(4)(m["tv-noise"])} that noise alone gives; p-value ${fixed(3)(m["p-value"])}. No evidence against exactness.`
          : `${m.samples.toLocaleString("en")} rounds: TV ${fixed(4)(m["tv-distance"])}, far above the ${fixed(4)(m["tv-noise"])} of noise; p-value ${Number(m["p-value"]).toExponential(1)}. The output is not p.`;
      } else {
        for (const name of ["tv-distance", "tv-noise", "p-value", "exact"]) {
          const out = el.querySelector(`[data-metric="${name}"]`);
          delete out.dataset.value; // nothing measured yet: no number to report
          out.textContent = "not sampled";
        }
        verdict.textContent = m["exact-equal"]
          ? "In exact arithmetic this implementation emits p exactly. Sample it to see the statistics agree."
          : `In exact arithmetic this implementation is off by TV ${fixed(4)(m["exact-tv"])}. Sample it to watch the test catch it.`;
      }
      // Last, so the sampled metrics above never overwrite its wording.
      ctx.setMetric("exact-tv", m["exact-tv"], m["exact-equal"] ? "0 (exactly p)" : fixed(4)(m["exact-tv"]));
    };
    if (ctx.initial) paint(ctx.initial);

    const update = ctx.latest("exactness.broken", (result, sent) => {
      paint(result);
      if (sent.n) seed.value = sent.seed + 1; // the next press draws a fresh sample
    });
    const send = (n = 0) =>
      update({ variant: select.value, p: args.p, q: args.q, labels: args.labels, n, seed: Math.max(0, Math.floor(seed.value) || 0) });
    select.addEventListener("change", () => send(0));
    ctx.ready.then(() => send(0), () => {});
  },
});
