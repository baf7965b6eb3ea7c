// Not a widget: the note a widget shows when it reports two of the vocabulary's quantities (β, α, the draft
// acceptance rate, tokens per target pass), saying how they relate and linking to the Tuning calculator, which
// converts one into another.

export function relation(text) {
  const note = document.createElement("p");
  note.className = "sd-relation";
  const link = document.createElement("a");
  link.href = "../tuning/#the-calculator";
  link.textContent = "The Tuning calculator converts between them.";
  note.append(`${text} `, link);
  return note;
}
