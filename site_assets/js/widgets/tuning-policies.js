// Widget "tuning-policies": fixed γ, confidence threshold τ, dynamic +2/−1 and the oracle, run side by side on the
// n-gram pair with the reader's sampling knobs. Run streams the generation in short chunks (one Python call each,
// the runs' state handed back every time, so the chunks make exactly the run one call would), so progress shows
// and Stop ends it between chunks.
//
//   <div class="sd-widget" data-widget="tuning-policies">
//   <script type="application/json">{"handler": "tuning.policies", "args": {"tokens": 300, "seed": 0}}</script>
//   </div>

const CHUNK = 25; // tokens per policy per call: short enough that Stop answers quickly
const POLICIES = [
  ["fixed", "Fixed γ"],
  ["confidence", "Confidence τ"],
  ["dynamic", "Dynamic +2/−1"],
  ["oracle", "Oracle (upper bound)"],
];
const MEASURES = [
  ["tokens-per-pass", "Tokens per target pass", 3],
  ["draft-per-token", "Draft steps per emitted token", 3],
  ["discarded-fraction", "Discarded share of drafts", 3],
  ["speedup", "Speedup at cost c", 2],
];

SDLab.register("tuning-policies", {
  mount(el, ctx) {
    const base = ctx.settings.args || {};
    const temperature = ctx.slider({ key: "temperature", label: "Temperature", min: 0.1, max: 2, step: 0.1, value: 1, format: (v) => v.toFixed(1) });
    const topK = ctx.number({ key: "top_k", label: "Top-k (0 = off)", min: 0, max: 1000, step: 1, value: 0 });
    const topP = ctx.slider({ key: "top_p", label: "Top-p", min: 0.05, max: 1, step: 0.05, value: 1, format: (v) => v.toFixed(2) });
    const gamma = ctx.slider({ key: "gamma", label: "Speculation length γ (fixed; dynamic starts here)", min: 1, max: 8, step: 1, value: base.gamma ?? 4 });
    const tau = ctx.slider({ key: "tau", label: "Confidence threshold τ", min: 0, max: 1, step: 0.05, value: base.tau ?? 0.5, format: (v) => v.toFixed(2) });
    const cost = ctx.slider({ key: "cost", label: "Draft cost c", min: 0, max: 1, step: 0.01, value: base.cost ?? 0.05, format: (v) => v.toFixed(2) });
    const tokens = ctx.number({ key: "tokens", label: "Tokens per policy N", min: 25, max: 5000, step: 25, value: base.tokens ?? 300 });
    const seed = ctx.number({ key: "seed", label: "Seed", min: 0, max: 2 ** 31 - 1, step: 1, value: base.seed ?? 0 });
    const controls = document.createElement("div");
    controls.className = "sd-tuning-controls";
    controls.append(temperature.root, topK.root, topP.root, gamma.root, tau.root, cost.root, tokens.root, seed.root);

    const run = ctx.button("Run", () => start());
    run.classList.add("md-button--primary");
    const stop = ctx.button("Stop", () => current?.stop());
    stop.disabled = true;
    const progress = document.createElement("progress");
    progress.setAttribute("aria-label", "Run progress");
    progress.max = 1;
    progress.value = 0;
    const status = document.createElement("output");
    status.className = "sd-tuning-progress";
    status.setAttribute("aria-live", "polite");
    status.dataset.state = "idle";
    const bar = document.createElement("div");
    bar.className = "sd-tuning-run";
    bar.append(run, stop, progress, status);

    // The table holds every number the chart shows, as [data-metric] cells (metric names: POLICY-MEASURE).
    const table = document.createElement("table");
    table.className = "sd-tuning-table";
    const head = MEASURES.map(([, label]) => `<th scope="col">${label}</th>`).join("");
    const rows = POLICIES.map(
      ([key, label]) =>
        `<tr><th scope="row">${label}</th>` +
        MEASURES.map(([m]) => `<td><output data-metric="${key}-${m}">…</output></td>`).join("") +
        "</tr>",
    ).join("");
    table.innerHTML = `<caption>Per policy, over the tokens generated so far</caption><thead><tr><th scope="col">Policy</th>${head}</tr></thead><tbody>${rows}</tbody>`;
    const wrap = document.createElement("div");
    wrap.className = "sd-tuning-table-wrap";
    wrap.append(table);

    const measured = document.createElement("p");
    measured.className = "sd-tuning-measured";
    measured.innerHTML = `Measured per-token acceptance rate α under fixed γ: <output data-metric="alpha">…</output>`;
    const chart = ctx.chart("Grouped bar chart comparing the four draft-length policies on four measures");
    const sample = document.createElement("p");
    sample.className = "sd-tuning-sample";
    el.append(controls, bar, chart, wrap, measured, sample);

    const formats = { alpha: (v) => v.toFixed(3) };
    for (const [key] of POLICIES) for (const [m, , digits] of MEASURES) formats[`${key}-${m}`] = (v) => v.toFixed(digits);

    const paint = (result, label) => {
      ctx.render(chart, result.figure);
      ctx.setMetrics(result.metrics, formats);
      sample.textContent = `${label}: “${result.sample.slice(-240).trim()}”`;
    };
    if (ctx.initial) {
      paint(ctx.initial, `Build-time run (${base.tokens ?? 300} tokens per policy, seed ${base.seed ?? 0}), text under fixed γ`);
      status.textContent = "Showing a build-time run; press Run for a live one.";
    }

    let current = null;
    const setRunning = (running) => {
      run.disabled = running;
      stop.disabled = !running;
      el.dataset.running = String(running);
    };

    async function start() {
      const task = ctx.task();
      current = task;
      setRunning(true);
      const total = Math.max(25, Math.round(tokens.value));
      const args = {
        seed: Math.max(0, Math.round(seed.value)),
        gamma: gamma.value,
        tau: tau.value,
        cost: cost.value,
        temperature: temperature.value,
        top_k: Math.max(0, Math.round(topK.value)),
        top_p: topP.value,
      };
      let state = null;
      let done = 0;
      progress.max = total;
      progress.value = 0;
      status.dataset.state = "running";
      status.textContent = `0 / ${total} tokens per policy`;
      try {
        while (done < total && !task.signal.aborted) {
          const size = Math.min(CHUNK, total - done);
          const result = await ctx.call("tuning.policies", { ...args, tokens: size, total, state }, { signal: task.signal });
          state = result.state;
          done += size;
          progress.value = done;
          paint(result, "Latest text under fixed γ");
          status.textContent = `${done} / ${total} tokens per policy`;
        }
        status.dataset.state = done >= total ? "done" : "stopped";
        if (done >= total) status.textContent = `Done: ${total} tokens per policy (seed ${args.seed}).`;
        else status.textContent = `Stopped at ${done} / ${total} tokens per policy.`;
      } catch (err) {
        if (err?.name !== "AbortError") throw err;
        status.dataset.state = "stopped";
        status.textContent = `Stopped at ${done} / ${total} tokens per policy.`;
      } finally {
        if (current === task) current = null;
        setRunning(false);
      }
    }
    // Python's first call trains the n-gram models (a second or two in the browser): do it as soon as Python is up,
    // so Run starts at once. The build-time numbers stay on screen; the same seed run live gives the same ones.
    ctx.ready.then(
      () => ctx.call("tuning.policies", { tokens: 1, seed: 0 }).then(() => {
        if (status.dataset.state === "idle") status.textContent = "Python is ready: press Run for a live run.";
      }),
      () => {},
    ).catch(() => {});
    return () => current?.stop();
  },
});
