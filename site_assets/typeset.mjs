// After the site builder: the pages' math typeset once, at build time, by the KaTeX the site ships (make site and
// make site-zensical run it on the built folder).
//
// pymdownx.arithmatex (generic mode) writes each formula as TeX in <span class="arithmatex">\( … \)</span> or
// <div class="arithmatex">\[ … \]</div>. Typeset in the browser (KaTeX's auto-render after DOMContentLoaded), the
// text around the formulas moved as they were drawn (README, "A page holds still while it loads"), and KaTeX's
// script and typesetting took the main thread during Python's boot. Here each formula's TeX becomes KaTeX's own
// HTML (katex.renderToString), so the page arrives as it will stay and reads typeset without JavaScript. Search
// results, quoted from the pages' source text, are still typeset in the browser (js/math.js).
//
// Usage: node site_assets/typeset.mjs SITE_DIR. Fails on a formula KaTeX cannot parse, naming the page and the TeX.

import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import katex from "katex";

const FORMULA = /<(span|div) class="arithmatex">([\s\S]*?)<\/\1>/g;
const DELIMITED = { span: /^\\\(([\s\S]*)\\\)$/, div: /^\\\[([\s\S]*)\\\]$/ };
const ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", "#39": "'", "#x27": "'" };

const unescapeHtml = (html) => html.replace(/&(amp|lt|gt|quot|apos|#39|#x27);/g, (_, name) => ENTITIES[name]);

function* pages(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* pages(path);
    else if (entry.name.endsWith(".html")) yield path;
  }
}

function typeset(html, where) {
  let count = 0;
  const out = html.replace(FORMULA, (_, tag, inner) => {
    const tex = DELIMITED[tag].exec(unescapeHtml(inner).trim());
    if (!tex) throw new Error(`${where}: a ${tag}.arithmatex without its delimiters: ${inner.slice(0, 80)}`);
    let rendered;
    try {
      rendered = katex.renderToString(tex[1], { displayMode: tag === "div", throwOnError: true });
    } catch (err) {
      throw new Error(`${where}: KaTeX cannot typeset ${JSON.stringify(tex[1])}: ${err.message}`);
    }
    count += 1;
    return `<${tag} class="arithmatex">${rendered}</${tag}>`;
  });
  return { html: out, count };
}

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node site_assets/typeset.mjs SITE_DIR");
  process.exit(2);
}
let formulas = 0;
let files = 0;
for (const path of pages(dir)) {
  const { html, count } = typeset(readFileSync(path, "utf8"), path);
  if (count) {
    writeFileSync(path, html);
    formulas += count;
    files += 1;
  }
}
console.log(`typeset: ${formulas} formulas in ${files} pages of ${dir}`);
