// The page's voice: the one status line ([data-sd-status] in the header: loading | ready | error), and error
// banners with a Retry button. Every error shown here also goes to console.error, once.

import { onStatus } from "../runtime/python.js";

function statusElement() {
  let el = document.querySelector("[data-sd-status]");
  if (el) return el;
  el = document.createElement("div");
  el.className = "sd-status";
  el.setAttribute("role", "status");
  el.setAttribute("aria-live", "polite");
  const anchor = document.querySelector(".md-header__title") || document.querySelector(".md-header__inner");
  if (anchor?.classList.contains("md-header__title")) anchor.after(el);
  else if (anchor) anchor.append(el);
  else document.body.prepend(el);
  return el;
}

export function showStatus({ state, text }) {
  const el = statusElement();
  el.dataset.sdStatus = state;
  el.textContent = text;
  el.title = text;
}

export function watchStatus() {
  onStatus(showStatus);
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
  const el = document.createElement("div");
  el.className = "sd-error";
  el.setAttribute("role", "alert");
  el.dataset.sdError = "";
  const title = document.createElement("strong");
  title.textContent = titleOf(error);
  const line = document.createElement("code");
  line.className = "sd-error__line";
  line.textContent = error.message;
  const button = document.createElement("button");
  button.type = "button";
  button.className = "md-button md-button--primary sd-error__retry";
  button.textContent = "Retry";
  button.addEventListener("click", retry);
  el.append(title, " ", line, " ", button);
  return el;
}

// A banner at the top of `where` (the page's content by default), replacing the one there.
export function showError(error, retry, where = document.querySelector(".md-content__inner") || document.body) {
  where.querySelector(":scope > .sd-error")?.remove();
  where.prepend(banner(error, retry));
}
