// ESLint (flat config) for the page side: a small rule set that catches real mistakes, nothing stylistic.
import js from "@eslint/js";
import globals from "globals";

export default [
  {
    files: ["site_assets/**/*.js", "site_assets/**/*.mjs", "benchmarks/**/*.mjs", "tests/**/*.mjs"],
    languageOptions: {
      ecmaVersion: 2024,
      sourceType: "module",
      globals: { ...globals.browser, ...globals.worker },
    },
    rules: {
      "no-unused-vars": ["error", { args: "after-used", caughtErrors: "none" }],
      "no-undef": "error",
      "no-empty": "error",
    },
  },
  {
    // Scripts run by Node (build and benchmark helpers).
    files: ["site_assets/compile_core.mjs", "site_assets/typeset.mjs", "benchmarks/**/*.mjs", "tests/**/*.mjs"],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
  {
    // Material's document$ and the vendored KaTeX's auto-render, both globals of the page.
    files: ["site_assets/js/math.js"],
    languageOptions: { globals: { document$: "readonly", renderMathInElement: "readonly" } },
  },
];
