// The pages' math is typeset when the site is built (site_assets/typeset.mjs): here a display equation wider than
// the screen gets keyboard focus, and Material's search results, quoted from the pages' TeX source, are typeset by
// the self-hosted KaTeX, loaded when the first result is listed (or when a page comes untypeset, from a builder's
// own dev server). document$ emits on every page, first load and instant navigation alike.

// A display equation wider than the screen scrolls sideways in its box (css/theme.css): that box then takes keyboard
// focus, so it can be scrolled without a pointer (axe-core scrollable-region-focusable). Checked again whenever the
// box or the equation changes width (a rotated phone, KaTeX's fonts arriving).
const sideways = new ResizeObserver((entries) => {
  for (const box of new Set(entries.map((e) => e.target.closest("div.arithmatex")))) {
    if (box.scrollWidth > box.clientWidth) box.tabIndex = 0;
    else box.removeAttribute("tabindex");
  }
});

const watch = (body) => {
  for (const el of body.querySelectorAll("div.arithmatex")) {
    sideways.observe(el);
    if (el.firstElementChild) sideways.observe(el.firstElementChild);
  }
};

// A page served by `mkdocs serve` or `zensical serve` skipped typeset.mjs: its formulas are typeset here.
document$.subscribe(({ body }) => {
  sideways.disconnect(); // the previous page's boxes are gone
  const raw = [...body.querySelectorAll(".arithmatex")].filter((el) => !el.querySelector(".katex"));
  if (!raw.length) return watch(body);
  loadKatex().then(() => {
    raw.forEach((el) => typeset(el, true));
    watch(body);
  });
});

// KaTeX and its auto-render, loaded once, in order (auto-render needs katex), beside this script under vendor/.
const here = document.currentScript.src;
let katexLoaded = null; // a promise, once asked for
function loadKatex() {
  const load = (path) =>
    new Promise((resolve, reject) => {
      const script = Object.assign(document.createElement("script"), { src: new URL(path, here).href });
      script.onload = resolve;
      script.onerror = () => reject(new Error(`${path} failed to load`));
      document.head.append(script);
    });
  katexLoaded ??= load("../vendor/katex/katex.min.js").then(() => load("../vendor/katex/contrib/auto-render.min.js"));
  return katexLoaded;
}

const typeset = (el, display) =>
  renderMathInElement(el, {
    delimiters: [
      { left: "\\(", right: "\\)", display: false },
      { left: "\\[", right: "\\]", display },
    ],
    throwOnError: false,
  });

// Material's search lists each matching section's text as the search index holds it, TeX source and all: each result
// is typeset as it is listed (a display equation inline, as a snippet has no room for it). A highlight (<mark>) that
// falls inside a formula would split its source, so it goes first: the formula is shown, unhighlighted. Zensical's
// search, which cuts its snippets anywhere (often inside a formula), has no such list: there the source stays.
const insideFormula = (text) =>
  text.lastIndexOf("\\(") > text.lastIndexOf("\\)") || text.lastIndexOf("\\[") > text.lastIndexOf("\\]");

function typesetResult(item) {
  for (const mark of item.querySelectorAll("mark")) {
    const parent = mark.parentNode;
    if (mark.previousSibling?.nodeType !== Node.TEXT_NODE || !insideFormula(mark.previousSibling.data)) continue;
    mark.replaceWith(...mark.childNodes);
    parent.normalize(); // the text around it is one node again, for the next mark and for KaTeX
  }
  typeset(item, false); // a snippet has no room for a display equation
}

const results = document.querySelector(".md-search-result__list");
if (results) {
  new MutationObserver((records) => {
    const items = records.flatMap((r) => [...r.addedNodes]).filter((n) => n.nodeType === Node.ELEMENT_NODE);
    if (!items.length) return;
    // Offline before KaTeX was ever fetched, the results keep their TeX source.
    loadKatex().then(
      () => items.forEach((item) => item.isConnected && typesetResult(item)),
      (err) => {
        katexLoaded = null; // asked again with the next results
        console.warn("[lab] search results keep their TeX source:", err.message);
      },
    );
  }).observe(results, { childList: true });
}
