// Astro, what its page does its own way: pick one of the 12 signs (remembered, shown in the
// centre), 5 discs and the « Gain » box (phase 1), then the banner (phase 2, locked until the
// server says phase 1 is done), and a win message that shows the multiplier. The rest of the
// page's flow: game_page.js.
import { formatEuros } from "./money.js";
import { paintMetal, ScratchZone } from "./scratch.js";
import { drawGlyph, signById, signSvg, SIGNS, symbolSvg } from "./signs.js";
import { $, el, notify } from "./ui.js";

const DISCS = 5;
// A no-break space keeps « 1 000 » on one line when the text wraps on the coating.
const BANNER_TEXT = "Grattez ici pour multiplier jusqu'à 1\u00a0000 fois vos gains";
const DEFAULT_ZONES = [...Array.from({ length: DISCS }, (_, i) => `symbols/${i}`), "gain", "banner"];
const SIGN_KEY = "grattage.astro.sign";

let chosenSign = null;

/** The sign the player last picked on this page, if it is one of the twelve. */
export function favouriteSign() {
  const stored = localStorage.getItem(SIGN_KEY);
  return stored && signById(stored) ? stored : null;
}

function wrapText(ctx, text, maxWidth) {
  const lines = [];
  let line = "";
  for (const word of text.split(" ")) {
    const attempt = line ? `${line} ${word}` : word;
    if (ctx.measureText(attempt).width > maxWidth && line) {
      lines.push(line);
      line = word;
    } else {
      line = attempt;
    }
  }
  if (line) lines.push(line);
  return lines;
}

function paintText(text, { tint, color, weight = 800, scale = 0.34 }) {
  return (ctx, w, h) => paintMetal(ctx, w, h, {
    tint,
    decorate: () => {
      let size = Math.round(h * scale);
      ctx.font = `${weight} ${size}px system-ui, sans-serif`;
      let lines = wrapText(ctx, text, w * 0.9);
      while (lines.length * size * 1.15 > h * 0.85 && size > 8) {
        size -= 1;
        ctx.font = `${weight} ${size}px system-ui, sans-serif`;
        lines = wrapText(ctx, text, w * 0.9);
      }
      ctx.fillStyle = color;
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      const top = h / 2 - ((lines.length - 1) * size * 1.15) / 2;
      lines.forEach((line, i) => ctx.fillText(line, w / 2, top + i * size * 1.15));
    },
  });
}

function discPainter(page) {
  return (ctx, w, h) => paintMetal(ctx, w, h, {
    decorate: () => {
      const size = Math.min(w, h) * 0.62;
      const sign = page.ticketChoice || chosenSign;
      if (sign) drawGlyph(ctx, sign, (w - size) / 2, (h - size) / 2, size, "#28306e");
    },
  });
}

function fillZone(page, zoneId, content, element) {
  element.replaceChildren();
  if (zoneId === "gain") {
    element.dataset.cents = String(content);
    element.append(el("span", { class: "gain-label", text: "Gain" }), el("span", { class: "gain-amount", text: formatEuros(content) }));
  } else if (zoneId === "banner") {
    element.dataset.multiplier = String(content.multiplier ?? "");
    element.append(el("span", { class: "banner-text", text: content.text }));
  } else {
    element.dataset.symbol = content;
    const sign = page.ticketChoice || chosenSign;
    element.innerHTML = content === "sign" ? signSvg(sign) : symbolSvg(content);
    element.parentElement.classList.toggle("is-sign", content === "sign");
  }
}

function buildZones(page, ticket, locked) {
  const discs = $("#discs");
  discs.replaceChildren();
  $("#gain-slot").replaceChildren();
  $("#banner-slot").replaceChildren();
  const zones = new Map();
  for (const zoneId of ticket?.zones || DEFAULT_ZONES) {
    const box = el("div", {}, el("div", { class: "zone-content" }));
    let options;
    if (zoneId.startsWith("symbols/")) {
      const index = Number(zoneId.split("/")[1]);
      box.className = "disc";
      // A disc is round: its square, placed on the ring, takes the finger (scratch.js).
      const square = el("div", { class: "zone-square disc-square" }, box);
      square.style.setProperty("--angle", `${-90 + index * (360 / DISCS)}deg`);
      discs.append(square);
      options = { label: `Pastille ${index + 1}`, paint: discPainter(page), round: true, hitArea: square };
    } else if (zoneId === "gain") {
      box.className = "gain-box";
      // Its rounded corners clip the pointer too: a square-cornered frame takes the finger.
      const frame = el("div", { class: "zone-frame gain-frame" }, box);
      $("#gain-slot").append(frame);
      options = { label: "Case Gain", paint: paintText("Gain", { color: "#3b2a6b", scale: 0.42 }), hitArea: frame };
    } else {
      box.className = "banner";
      const frame = el("div", { class: "zone-frame banner-frame" }, box);
      $("#banner-slot").append(frame);
      options = { label: "Bandeau multiplicateur", paint: paintText(BANNER_TEXT, { tint: "gold", color: "#5a2d00", weight: 700, scale: 0.3 }), hitArea: frame };
    }
    const zone = new ScratchZone(box, { zoneId, ...options, onScratched: page.zoneHandlers().onScratched });
    zone.setLocked(locked || (ticket ? (ticket.locked_zones || []).includes(zoneId) : zoneId === "banner"));
    zones.set(zoneId, zone);
  }
  return zones;
}

function showChosenSign(signId) {
  const sign = signById(signId);
  const centre = $("#chosen-sign");
  centre.innerHTML = sign ? signSvg(signId) : '<span class="no-sign">Choisissez un signe</span>';
  centre.dataset.sign = signId || "";
  if (sign) centre.append(el("span", { class: "sign-name", text: sign.name }));
  for (const button of document.querySelectorAll(".sign-choice")) {
    button.setAttribute("aria-checked", String(button.dataset.sign === signId));
  }
  const summary = $("#sign-summary-name");
  summary.innerHTML = sign ? signSvg(signId, { title: false }) : "";
  if (sign) summary.append(el("span", { text: sign.name }));
}

/**
 * The twelve signs take two to three rows: once one is chosen they fold into one line
 * (« Votre signe : Lion — Changer », a disclosure button), so that the ticket and its result
 * fit the screen. Without a chosen sign they stay open: there is nothing to fold to.
 */
function foldPicker(folded) {
  const open = !(folded && chosenSign);
  $("#sign-summary").hidden = !chosenSign;
  $("#sign-choices").hidden = !open;
  $("#sign-change").setAttribute("aria-expanded", String(open));
}

/** `fold`: the player picked this sign (click, Enter, Space), as opposed to going through
 * the signs with the arrow keys, which must leave the group open under the keyboard. */
function chooseSign(page, signId, { fold = false } = {}) {
  $("#banner-hint").hidden = true;
  if (page.play && !page.play.finished) return; // the sign of a ticket in play is fixed
  chosenSign = signId;
  localStorage.setItem(SIGN_KEY, signId);
  showChosenSign(signId);
  page.showSpecimen();
  if (fold) {
    const focusInside = $("#sign-choices").contains(document.activeElement);
    foldPicker(true);
    // The radio under the focus is gone: on to what comes next, buying the ticket.
    if (focusInside) $("#play").focus();
  }
}

function toggleFolded() {
  const open = $("#sign-change").getAttribute("aria-expanded") === "true";
  foldPicker(open);
  if (!open) $(".sign-choice[aria-checked='true']")?.focus();
}

/** Arrow keys move through the signs, as in any radio group. */
function moveChoice(page, event) {
  const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[event.key];
  if (!step) return;
  event.preventDefault();
  const buttons = [...document.querySelectorAll(".sign-choice")];
  const current = Math.max(0, buttons.indexOf(document.activeElement));
  const next = buttons[(current + step + buttons.length) % buttons.length];
  next.focus();
  chooseSign(page, next.dataset.sign, { fold: false });
}

/** The twelve signs as a radio group, the remembered one checked. */
function setUp(page) {
  const picker = $("#signs");
  picker.addEventListener("keydown", (event) => moveChoice(page, event));
  for (const sign of SIGNS) {
    const button = el("button", {
      class: "sign-choice", type: "button", role: "radio", "aria-checked": "false", "data-sign": sign.id,
      "aria-label": sign.name, html: signSvg(sign.id, { title: false }),
    }, el("span", { text: sign.name }));
    button.addEventListener("click", () => chooseSign(page, sign.id, { fold: true }));
    picker.append(button);
  }
  $("#sign-change").addEventListener("click", toggleFolded);
  chosenSign = favouriteSign();
  showChosenSign(chosenSign);
  foldPicker(true);
}

function onTicket(page, ticket) {
  if (ticket.sign) {
    chosenSign = ticket.sign;
    showChosenSign(ticket.sign);
  }
  foldPicker(true); // the ticket's sign is fixed: the twelve only take room now
}

function winMessage(ticket) {
  const revealed = ticket.revealed || {};
  const gain = revealed.gain ?? ticket.document?.gain_cents;
  const multiplier = (revealed.banner ?? ticket.document?.banner)?.multiplier ?? null;
  const prize = ticket.prize_cents;
  if (prize > 0) {
    return multiplier
      ? `Gagné ! Gain ${formatEuros(gain)} × ${multiplier} = ${formatEuros(prize)}`
      : `Gagné ! Deux signes ${signById(ticket.sign)?.name ?? ""} : vous gagnez ${formatEuros(prize)}`;
  }
  return "Pas de gain cette fois-ci : il fallait deux dessins de votre signe.";
}

function readyToBuy() {
  if (chosenSign) return true;
  notify("Choisissez d'abord votre signe parmi les douze.", "error", null, "#play-notice");
  return false;
}

export const astro = {
  name: "astro",
  staggerMs: 260,
  revealsAfterInactivity: false,
  offersRevealAll: false,
  setUp,
  buildZones,
  fillZone,
  onTicket,
  onChange: (page, ticket) => {
    $("#banner-hint").hidden = !(ticket.locked_zones || []).includes("banner");
  },
  setButtons: ({ playing }) => {
    for (const button of document.querySelectorAll(".sign-choice")) button.disabled = playing;
    $("#sign-change").disabled = playing;
  },
  winMessage,
  readyToBuy,
  choice: () => chosenSign,
  playLabel: "Jouer à Astro",
  /** The lobby card's art: the sign the player last picked here (the Lion until then), and
   * the top prize of the block on sale, as the API states it. */
  cardArt: (game) => {
    const art = el("div", { class: "card-art astro-art", html: signSvg(favouriteSign() ?? "leo", { title: false }) });
    art.append(el("span", { class: "art-prize", text: formatEuros(game.top_prize_cents) }));
    return art;
  },
};
