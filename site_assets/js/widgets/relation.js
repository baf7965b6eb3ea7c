// Not a widget: the note a widget shows when it reports two of the vocabulary's quantities (β, α, the draft
// acceptance rate, tokens per target pass), saying how they relate and linking to the Tuning calculator, which
// converts one into another.

import { el } from "../ui/controls.js";

export function relation(text) {
  const link = Object.assign(el("a", "", "The Tuning calculator converts between them."), { href: "../tuning/#the-calculator" });
  return el("p", "sd-relation", `${text} `, link);
}
