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

document$.subscribe(({ body }) => {
  sideways.disconnect(); // the previous page's boxes are gone
  for (const el of body.querySelectorAll(".arithmatex")) {
    renderMathInElement(el, {
      delimiters: [
        { left: "\\(", right: "\\)", display: false },
        { left: "\\[", right: "\\]", display: true },
      ],
      throwOnError: false,
    });
    if (el.tagName !== "DIV") continue;
    sideways.observe(el);
    if (el.firstElementChild) sideways.observe(el.firstElementChild);
  }
});
