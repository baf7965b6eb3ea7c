// Widget "correct-split": one position where a draft token may be rejected. The reader picks a starting pair
// (presets) and morphs the draft q with three sliders; Python returns p, q, min(p, q) and the residual, plus the
// stacked "proof" chart where accepted mass and correction mass add up to p(x). "Sample 10,000 rounds" runs the
// real steps (steps.draft, then steps.speculative_round) in the worker and compares the emitted tokens with p.
//
//   <div class="sd-widget" data-widget="correct-split">
//   <script type="application/json">{"handler": "correct.split", "args": {"preset": "worked", "temperature": 1, "shift": 0, "blend": 0}}</script>
//   </div>

const PRESETS = [
  ["worked", "Our example"],
  ["disjoint", "Disjoint supports"],
  ["equal", "p = q"],
  ["one-hot", "One-hot draft"],
];
const DEFAULTS = { temperature: 1, shift: 0, blend: 0 };
const SAMPLES = 10_000;

const fixed = (digits) => (v) => Number(v).toFixed(digits);

SDLab.register("correct-split", {
  mount(el, ctx) {
    const args = { preset: "worked", ...DEFAULTS, ...(ctx.settings.args || {}) };

    // Presets: a group of toggle buttons; the pressed one is the current starting pair.
    const presets = document.createElement("div");
    presets.className = "sd-cbe-presets";
    presets.setAttribute("role", "group");
    presets.setAttribute("aria-label", "Starting pair");
    const presetButtons = new Map();
    for (const [name, label] of PRESETS) {
      const button = ctx.button(label, () => choose(name));
      button.setAttribute("aria-pressed", String(name === args.preset));
      presetButtons.set(name, button);
      presets.append(button);
    }

    const temperature = ctx.slider({
      key: "temperature",
      label: "Draft temperature",
      min: 0.25,
      max: 4,
      step: 0.25,
      value: args.temperature,
      format: (v) => (v < 1 ? `${fixed(2)(v)} (sharper)` : v > 1 ? `${fixed(2)(v)} (flatter)` : "1 (as is)"),
    });
    const shift = ctx.slider({
      key: "shift",
      label: "Draft shift (tokens)",
      min: -2,
      max: 2,
      step: 1,
      value: args.shift,
      format: (v) => (v > 0 ? `+${v}` : String(v)),
    });
    const blend = ctx.slider({
      key: "blend",
      label: "Blend draft toward target",
      min: 0,
      max: 1,
      step: 0.05,
      value: args.blend,
      format: (v) => `${Math.round(v * 100)}%`,
    });
    const controls = document.createElement("div");
    controls.className = "sd-cbe-controls";
    controls.append(temperature.root, shift.root, blend.root);

    const dists = ctx.chart("Grouped bar chart of the target p, the draft q, the accepted mass min(p, q) and the residual, per token");
    const proof = ctx.chart(
      "Stacked bar chart per token: the mass emitted through an accepted draft, min(p, q), stacked on the mass emitted through a correction, (1 − β) times the residual; a marker shows p(x) at the top of each stack",
    );
    const metrics = ctx.metrics([
      { name: "beta", label: "β = Σ min(p, q): P(a draft token is accepted)" },
      { name: "reject-rate", label: "Rejection probability 1 − β" },
      { name: "draft-tv", label: "TV(p, q) = 1 − β" },
      { name: "identity-gap", label: "Largest |stack − p(x)|" },
    ]);

    // The Monte Carlo part: the real round, 10,000 times, in the reader's browser.
    const sampleBox = document.createElement("div");
    sampleBox.className = "sd-cbe-sample";
    const seed = ctx.number({ key: "seed", label: "Seed", min: 0, max: 2 ** 31 - 1, step: 1, value: 0 });
    const sampleButton = ctx.button(`Sample ${SAMPLES.toLocaleString("en")} rounds`, () => runSample());
    sampleButton.classList.add("md-button--primary");
    const sampleRow = document.createElement("div");
    sampleRow.className = "sd-cbe-sample-row";
    sampleRow.append(seed.root, sampleButton);
    const sampleChart = ctx.chart("Bar chart of the emitted-token frequencies of the sampled rounds against the target p, with two-standard-error bars");
    sampleChart.hidden = true;
    const verdict = document.createElement("p");
    verdict.className = "sd-cbe-verdict";
    verdict.setAttribute("role", "status");
    verdict.setAttribute("aria-live", "polite");
    verdict.textContent = "Not sampled yet: the charts above are exact; press the button to test the real algorithm.";
    const sampleMetrics = ctx.metrics([
      { name: "tv-distance", label: "TV(emitted, p)" },
      { name: "tv-noise", label: "Typical TV from noise alone" },
      { name: "p-value", label: "χ² p-value" },
      { name: "correction-share", label: "Rounds ending in a correction" },
      { name: "exact", label: "Output = target?" },
    ]);
    sampleBox.append(sampleRow, verdict, sampleChart, sampleMetrics);

    el.append(presets, controls, metrics, dists, proof, sampleBox);

    let current = null; // the latest split result: p, q and labels for the sampler
    const formats = {
      beta: fixed(3),
      "reject-rate": fixed(3),
      "draft-tv": fixed(3),
      "identity-gap": (v) => (v === 0 ? "0 (exact)" : Number(v).toExponential(1)),
    };
    const paint = (result) => {
      current = result;
      ctx.render(dists, result.figures.dists);
      ctx.render(proof, result.figures.proof);
      ctx.setMetrics(result.metrics, formats);
    };
    if (ctx.initial) paint(ctx.initial);

    const forgetSample = () => {
      if (sampleChart.hidden) return;
      sampleChart.hidden = true;
      for (const out of sampleMetrics.querySelectorAll("[data-metric]")) {
        out.textContent = "…";
        delete out.dataset.value;
      }
      verdict.textContent = "The pair changed: sample again to test it.";
    };
    const update = ctx.latest("correct.split", paint);
    const send = () => {
      forgetSample();
      update({ preset: args.preset, temperature: temperature.value, shift: shift.value, blend: blend.value });
    };
    function choose(name) {
      args.preset = name;
      for (const [key, button] of presetButtons) button.setAttribute("aria-pressed", String(key === name));
      temperature.value = DEFAULTS.temperature;
      shift.value = DEFAULTS.shift;
      blend.value = DEFAULTS.blend;
      send();
    }
    for (const control of [temperature, shift, blend]) control.input.addEventListener("input", send);

    async function runSample() {
      if (!current) return;
      sampleButton.disabled = true;
      verdict.textContent = `Running ${SAMPLES.toLocaleString("en")} rounds of the real algorithm…`;
      try {
        const result = await ctx.call("correct.sample", {
          p: current.p,
          q: current.q,
          labels: current.labels,
          n: SAMPLES,
          seed: Math.max(0, Math.floor(seed.value) || 0),
        });
        sampleChart.hidden = false;
        await ctx.render(sampleChart, result.figure);
        const m = result.metrics;
        ctx.setMetrics(m, {
          "tv-distance": fixed(4),
          "tv-noise": fixed(4),
          "p-value": (v) => (v < 1e-4 ? Number(v).toExponential(1) : fixed(3)(v)),
          "correction-share": (v) => `${fixed(3)(v)} (theory ${fixed(3)(m["correction-share-theory"])})`,
          exact: (v) => (v ? "consistent ✓" : "rejected ✗"),
        });
        verdict.textContent = m.exact
          ? `TV ${fixed(4)(m["tv-distance"])} against a typical ${fixed(4)(m["tv-noise"])} from sampling noise alone; ` +
            `χ² p-value ${fixed(3)(m["p-value"])}: the emitted tokens are consistent with p. ` +
            "A different seed gives a different, equally honest sample."
          : `χ² p-value ${Number(m["p-value"]).toExponential(1)}: this sample looks unlike p. An exact sampler does this ` +
            "about once in a thousand seeds; try another seed before suspecting the algorithm.";
        seed.value = (Math.floor(seed.value) || 0) + 1; // the next press draws a fresh sample
      } catch {
        verdict.textContent = "The sample failed; see the error above.";
      } finally {
        sampleButton.disabled = false;
      }
    }

    ctx.ready.then(send, () => {});
  },
});
