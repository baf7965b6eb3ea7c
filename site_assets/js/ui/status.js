// The page's voice: the one status line ([data-sd-status] in the header: loading | ready | error), and error
// banners with a Retry button. Every error shown here also goes to console.error, once.

import { announce, button, el } from "./controls.js";

function statusElement() {
  let node = document.querySelector("[data-sd-status]");
  if (node) return node;
  node = announce("sd-status", "", "div");
  const anchor = document.querySelector(".md-header__title") || document.querySelector(".md-header__inner");
  if (anchor?.classList.contains("md-header__title")) anchor.after(node);
  else if (anchor) anchor.append(node);
  else document.body.prepend(node);
  return node;
}

// On a phone the header has room for the dot and one word (data-sd-short, css/components.css): the whole text
// stays in the page for screen readers, and in the title.
const SHORT = { loading: "Loading", ready: "Ready", error: "Error" };

export function showStatus({ state, text }) {
  const node = statusElement();
  node.dataset.sdStatus = state;
  node.dataset.sdShort = SHORT[state] || "";
  node.replaceChildren(el("span", "sd-status__text", text));
  node.title = text;
}

function titleOf(error) {
  if (error.title) return error.title;
  if (error.phase) return `Python failed to start (${error.phase})`;
  if (error.fatal) return "The Python worker stopped";
  return `Python error${error.handler ? ` in ${error.handler}` : ""}`;
}

// Logs the error (once) and returns its banner; retry is what the button does.
export function banner(error, retry) {
  const detail = error.traceback && error.traceback !== error.message ? [error.traceback] : [];
  if (!error.shown) console.error(`[lab] ${titleOf(error)}: ${error.message}`, ...detail);
  error.shown = true;
  const retryButton = button("Retry", "md-button--primary sd-error__retry");
  retryButton.addEventListener("click", retry);
  const root = el(
    "div",
    "sd-error",
    el("strong", "", titleOf(error)),
    " ",
    el("code", "sd-error__line", error.message),
    " ",
    retryButton,
  );
  root.setAttribute("role", "alert");
  root.dataset.sdError = "";
  return root;
}

// A banner at the top of `where` (the page's content by default), replacing the one there.
export function showError(error, retry, where = document.querySelector(".md-content__inner") || document.body) {
  where.querySelector(":scope > .sd-error")?.remove();
  where.prepend(banner(error, retry));
}
