// Widget "pair": one position of verification. Target p, draft q, the accepted mass min(p, q) and the residual a
// correction is drawn from, for the settings' p and q; a slider blends the draft toward the target.
// The smallest complete widget: build-time figure first, then live calls through the worker.
//
//   <div class="sd-widget" data-widget="pair">
//   <script type="application/json">{"handler": "verify.pair", "args": {"p": [...], "q": [...]}}</script>
//   </div>

SDLab.register("pair", {
  mount(el, ctx) {
    const { handler, args } = ctx.settings;
    const blend = ctx.slider({
      key: "blend",
      label: "Draft blend toward the target",
      min: 0,
      max: 1,
      step: 0.05,
      value: args.blend ?? 0,
      format: (v) => `${Math.round(v * 100)}%`,
    });
    const chart = ctx.chart("Bar chart of the target p, the draft q, min(p, q) and the residual, per token");
    const metrics = ctx.metrics([
      { name: "beta", label: "β = Σ min(p, q): P(a draft token is accepted)" },
      { name: "reject-rate", label: "Rejection probability 1 − β" },
      { name: "tv-distance", label: "Total variation TV(p, q)" },
    ]);
    el.append(blend.root, chart, metrics);

    const paint = (result) => {
      ctx.render(chart, result.figure);
      ctx.setMetrics(result.metrics);
    };
    if (ctx.initial) paint(ctx.initial);

    const update = ctx.latest(handler, paint);
    blend.input.addEventListener("input", () => update({ ...args, blend: blend.value }));
    // Live takeover: the same call, now answered by Python in the browser.
    ctx.ready.then(() => update({ ...args, blend: blend.value }), () => {});
  },
});
