// Widget "playground-takeaway": expected tokens per pass against alpha for gamma = 1..8, with the Playground's
// current setting marked. It has no result of its own, built or called: it paints each one the playground widget
// publishes (takeaway), from that widget's first paint on, so the page carries that result once.

import { define } from "../ui/widget.js";
import { el } from "../ui/controls.js";
import { takeaway } from "./playground.js";

export default define(import.meta.url, {
  live: false, // no call of its own: the Playground's results come to it
  view(ctx) {
    const chart = ctx.chart(
      "Line chart: expected tokens per target pass against alpha, one line per γ, your setting marked",
    );
    const note = el("p", "sd-note");
    note.setAttribute("aria-live", "polite");
    ctx.el.append(chart, note);
    let shown = null; // JSON of the figure on screen: a Run sends the same one chunk after chunk
    const paint = ({ figure, settings: s }) => {
      const key = JSON.stringify(figure);
      if (key === shown) return;
      shown = key;
      ctx.render(chart, figure);
      if (s)
        note.textContent = `Marked: draft quality ${s.quality}, γ = ${s.gamma}. The star sits at the α this pair behaves like (the α whose formula gives its exact expected tokens per pass).`;
    };
    // A result from a live call makes this widget live too (the tests' data-sd-live).
    const follow = (result) => {
      ctx.paint(result);
      if (result.live) ctx.markLive();
    };
    ctx.on(takeaway, "result", (event) => follow(event.detail));
    if (takeaway.latest) follow(takeaway.latest);
    return { paint };
  },
});
