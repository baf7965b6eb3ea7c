// Widget "playground-takeaway": expected tokens per pass against alpha for gamma = 1..8, with the Playground's
// current setting marked. It paints its build-time figure, then follows the "sd-playground" document event that
// the playground widget (playground.js) dispatches with every result, so the two stay in step without a second
// call to Python.
//
//   <div class="sd-widget" data-widget="playground-takeaway">
//   <script type="application/json">{"handler": "playground.run", "args": {"quality": 0.85, "gamma": 4}}</script>
//   </div>

import { el } from "../ui/controls.js";

const EVENT = "sd-playground";

export default {
  live: false, // no call of its own: the Playground's results arrive as events
  view(ctx) {
    const chart = ctx.chart("Line chart: expected tokens per target pass against alpha, one line per γ, your setting marked");
    const note = el("p", "sd-pg-caption");
    note.setAttribute("aria-live", "polite");
    ctx.el.append(chart, note);
    let shown = null; // JSON of the figure on screen: a Run sends the same one chunk after chunk
    const paint = (result) => {
      const key = JSON.stringify(result.figures.takeaway);
      if (key === shown) return;
      shown = key;
      ctx.render(chart, result.figures.takeaway);
      const s = result.settings;
      if (s) note.textContent = `Marked: draft quality ${s.quality}, γ = ${s.gamma}. The star sits at the α this pair behaves like (the α whose formula gives its exact expected tokens per pass).`;
    };
    // Results that arrive once Python is ready come from live calls: the widget is live (the tests' data-sd-live).
    ctx.on(document, EVENT, (event) => {
      paint({ figures: { takeaway: event.detail.figure }, settings: event.detail.settings });
      if (ctx.el.closest("body") && document.querySelector('[data-sd-status="ready"]')) ctx.markLive();
    });
    return { paint };
  },
};
