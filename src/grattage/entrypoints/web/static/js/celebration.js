// A win, celebrated: the amount of the result counts up from its first euro to the prize (about a second,
// requestAnimationFrame), and from BIG_WIN_CENTS on a big-win screen (a modal dialog with the
// amount, a glow and confetti drawn in CSS, « Continuer »; Escape closes it too and the focus
// goes back where it was). Sound comes from sound.js. With `prefers-reduced-motion: reduce`
// the amount is final at once and the confetti stay still. A replay is never celebrated (the
// caller shows its result plainly). Money stays integer cents: every step of the count is an
// integer share of the prize, formatted by money.js.
import { formatEuros } from "./money.js";
import { sound } from "./sound.js";
import { el } from "./ui.js";

export const BIG_WIN_CENTS = 100_000; // 1 000 €
const COUNT_MS = 1000;
const STEPS = 1000; // the count's progress, in thousandths: integer arithmetic on the cents
const CONFETTI = 36;

export function reducedMotion() {
  return window.matchMedia?.("(prefers-reduced-motion: reduce)").matches ?? false;
}

/** Ease-out: fast at first, slowing down on the prize. An integer 0…STEPS. */
function progress(elapsed) {
  if (elapsed >= COUNT_MS) return STEPS;
  const t = elapsed / COUNT_MS;
  return Math.floor((1 - (1 - t) ** 3) * STEPS);
}

/**
 * Count `element`'s text up to `finalText`, in which the last « formatEuros(cents) » is the
 * amount counted; the end is exactly `finalText`. Returns a function that stops the count
 * (leaving the text where it is — the caller clears it or sets it).
 */
export function countUp(element, finalText, cents, { onEnd = () => {} } = {}) {
  const amount = formatEuros(cents);
  const at = finalText.lastIndexOf(amount);
  if (at < 0 || cents <= 0 || reducedMotion()) {
    element.textContent = finalText;
    onEnd();
    return () => {};
  }
  const before = finalText.slice(0, at);
  const after = finalText.slice(at + amount.length);
  let frame = null;
  let started = null;
  element.dataset.counting = "";
  element.setAttribute("aria-busy", "true"); // a screen reader waits for the final amount
  const stop = () => {
    if (frame !== null) cancelAnimationFrame(frame);
    frame = null;
    delete element.dataset.counting;
    element.removeAttribute("aria-busy");
  };
  // Each text written once: the first frames round down to the same whole euro, and a live
  // region (or an observer) must not hear « Vous gagnez 0 € », nor any amount twice.
  let written = null;
  const write = (text) => {
    if (text !== written) element.textContent = text;
    written = text;
  };
  const tick = (now) => {
    started ??= now;
    const step = progress(now - started);
    if (step >= STEPS) {
      write(finalText);
      stop();
      onEnd();
      return;
    }
    // An integer share of the prize, in whole euros while counting: 12 €, 57 €, 98 €… and
    // never below the first euro (or the prize itself, under a euro).
    const shown = Math.min(cents, Math.max(100, Math.floor((cents * step) / STEPS / 100) * 100));
    write(`${before}${formatEuros(shown)}${after}`);
    frame = requestAnimationFrame(tick);
  };
  write(`${before}${formatEuros(Math.min(cents, 100))}${after}`);
  frame = requestAnimationFrame(tick);
  return stop;
}

/** The big-win screen: a modal dialog, closed by « Continuer » or Escape; focus returns. */
function showBigWin(cents, { onClose = () => {} } = {}) {
  const returnTo = document.activeElement;
  const amount = el("p", { class: "big-win-amount", text: formatEuros(0) });
  const go = el("button", { class: "btn primary", type: "button", text: "Continuer" });
  const confetti = el("div", { class: "confetti", "aria-hidden": "true" });
  const still = reducedMotion();
  for (let i = 0; i < CONFETTI; i += 1) {
    const piece = el("span", { class: `piece piece-${i % 4}` });
    // Styles through the CSSOM, which the Content-Security-Policy allows.
    piece.style.left = `${(i * 97) % 100}%`;
    piece.style.animationDelay = `${(i * 53) % 1200}ms`;
    piece.style.animationDuration = `${1800 + ((i * 131) % 1400)}ms`;
    if (still) piece.style.top = `${(i * 37) % 90}%`;
    confetti.append(piece);
  }
  const dialog = el(
    "dialog",
    { class: "modal big-win", id: "big-win", "aria-labelledby": "big-win-title", "aria-describedby": "big-win-amount" },
    confetti,
    el("h2", { id: "big-win-title", text: "Gros lot !" }),
    el("p", { class: "big-win-lead", text: "Félicitations, vous gagnez" }),
    amount,
    el("div", { class: "modal-actions" }, go),
  );
  amount.id = "big-win-amount";
  go.addEventListener("click", () => dialog.close());
  let stopCount = () => {};
  dialog.addEventListener("close", () => {
    stopCount();
    dialog.remove();
    if (returnTo instanceof HTMLElement && returnTo.isConnected && !returnTo.disabled) returnTo.focus();
    onClose();
  });
  document.body.append(dialog);
  dialog.showModal();
  go.focus();
  stopCount = countUp(amount, formatEuros(cents), cents);
  return dialog;
}

/** One result's celebration; `cancel()` when the page moves on (a new ticket). */
export class Celebration {
  constructor() {
    this.stopCount = () => {};
    this.dialog = null;
  }

  /**
   * Show `text` in `element` for a ticket that won `cents`: counted up, with its sound, and
   * the big-win screen from BIG_WIN_CENTS; `replay`: the text at once, nothing else.
   */
  show(element, text, cents, { replay = false } = {}) {
    this.cancel();
    if (replay || cents <= 0) {
      element.textContent = text;
      return;
    }
    this.stopCount = countUp(element, text, cents);
    if (cents >= BIG_WIN_CENTS) {
      sound.bigWin();
      this.dialog = showBigWin(cents, { onClose: () => { this.dialog = null; } });
    } else {
      sound.win();
    }
  }

  cancel() {
    this.stopCount();
    this.stopCount = () => {};
    if (this.dialog?.open) this.dialog.close();
    this.dialog = null;
  }
}
