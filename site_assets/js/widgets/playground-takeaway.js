// Widget "playground-takeaway": expected tokens per pass against alpha for gamma = 1..8, with the Playground's
// current setting marked. It paints its build-time figure, then follows the "sd-playground" document event that
// the playground widget (playground.js) dispatches with every result, so the two stay in step without a second
// call to Python.
//
//   <div class="sd-widget" data-widget="playground-takeaway">
//   <script type="application/json">{"handler": "playground.run", "args": {"quality": 0.85, "gamma": 4}}</script>
//   </div>

const EVENT = "sd-playground";

function el(tag, className) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  return node;
}

SDLab.register("playground-takeaway", {
  mount(root, ctx) {
    const chart = ctx.chart("Line chart: expected tokens per target pass against alpha, one line per γ, your setting marked");
    const note = el("p", "sd-pg-caption");
    note.setAttribute("aria-live", "polite");
    root.append(chart, note);
    let frame = null;
    let pending = null;
    // A Run sends a result per chunk; draw at most once per frame.
    const draw = () => {
      frame = null;
      ctx.render(chart, pending.figure);
    };
    let shown = null; // JSON of the figure on screen: a Run sends the same one chunk after chunk
    const show = (figure, s) => {
      const key = JSON.stringify(figure);
      if (key === shown) return;
      shown = key;
      pending = { figure };
      frame ??= requestAnimationFrame(draw);
      if (s) note.textContent = `Marked: draft quality ${s.quality}, γ = ${s.gamma}. The star sits at the α this pair behaves like (the α whose formula gives its exact expected tokens per pass).`;
    };
    if (ctx.initial) show(ctx.initial.figures.takeaway, ctx.initial.settings);
    // Results that arrive once Python is ready come from live calls: the widget is live (the tests' data-sd-live).
    let ready = false;
    ctx.ready.then(() => (ready = true), () => {});
    const listener = (event) => {
      show(event.detail.figure, event.detail.settings);
      if (ready) root.dataset.sdLive = "true";
    };
    document.addEventListener(EVENT, listener);
    return () => {
      document.removeEventListener(EVENT, listener);
      if (frame) cancelAnimationFrame(frame);
    };
  },
});
