// Typeset math with the self-hosted KaTeX. pymdownx.arithmatex (generic mode) leaves \( \) and \[ \] inside
// .arithmatex elements; only those are touched, so a "$" in a widget or a code block is left alone.
// document$ emits on every page, first load and instant navigation alike.
document$.subscribe(({ body }) => {
  for (const el of body.querySelectorAll(".arithmatex")) {
    renderMathInElement(el, {
      delimiters: [
        { left: "\\(", right: "\\)", display: false },
        { left: "\\[", right: "\\]", display: true },
      ],
      throwOnError: false,
    });
  }
});
