// Typeset math with the self-hosted KaTeX. pymdownx.arithmatex (generic mode) leaves \( \) and \[ \] inside
// .arithmatex elements; only those are touched, so a "$" in a widget or a code block is left alone.
// document$ emits on every page, first load and instant navigation alike.

// A display equation wider than the screen scrolls sideways in its box (css/theme.css): that box then takes keyboard
// focus, so it can be scrolled without a pointer (axe-core scrollable-region-focusable). Checked again whenever the
// box or the equation changes width (a rotated phone, KaTeX's fonts arriving).
const sideways = new ResizeObserver((entries) => {
  for (const box of new Set(entries.map((e) => e.target.closest("div.arithmatex")))) {
    if (box.scrollWidth > box.clientWidth) box.tabIndex = 0;
    else box.removeAttribute("tabindex");
  }
});

const typeset = (el, display = true) =>
  renderMathInElement(el, {
    delimiters: [
      { left: "\\(", right: "\\)", display: false },
      { left: "\\[", right: "\\]", display },
    ],
    throwOnError: false,
  });

document$.subscribe(({ body }) => {
  sideways.disconnect(); // the previous page's boxes are gone
  for (const el of body.querySelectorAll(".arithmatex")) {
    typeset(el);
    if (el.tagName !== "DIV") continue;
    sideways.observe(el);
    if (el.firstElementChild) sideways.observe(el.firstElementChild);
  }
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
  typeset(item, false);
}

const results = document.querySelector(".md-search-result__list");
if (results) {
  new MutationObserver((records) => {
    for (const { addedNodes } of records)
      for (const node of addedNodes) if (node.nodeType === Node.ELEMENT_NODE) typesetResult(node);
  }).observe(results, { childList: true });
}
