// Not a widget: the note of a widget that reports two of β, α, the draft acceptance rate and tokens per target
// pass, saying how they relate, with a link to the Tuning calculator, which converts one into another.

import { el, powers } from "../ui/controls.js";

export function relation(text) {
  const link = Object.assign(el("a", "", "The Tuning calculator converts between them."), {
    href: "../tuning/#the-calculator",
  });
  return el("p", "sd-relation", ...powers(`${text} `), link);
}
