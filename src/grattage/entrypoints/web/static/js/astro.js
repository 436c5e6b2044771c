// The Astro page: pick one of the 12 signs, then 5 discs and the « Gain » box (phase 1), then
// the banner (phase 2, locked until the server says phase 1 is done).
import { api, ApiError, buyTicket } from "./api.js";
import { formatEuros, formatPrice } from "./money.js";
import { TicketPlay } from "./play.js";
import { paintMetal, ScratchZone } from "./scratch.js";
import { drawGlyph, signById, signSvg, SIGNS, symbolSvg } from "./signs.js";
import { $, el, formatDate, handleError, notify, refreshBalance, startPage } from "./ui.js";

const DISCS = 5;
// A no-break space keeps « 1 000 » on one line when the text wraps on the coating.
const BANNER_TEXT = "Grattez ici pour multiplier jusqu'à 1\u00a0000 fois vos gains";
const DEFAULT_ZONES = [...Array.from({ length: DISCS }, (_, i) => `symbols/${i}`), "gain", "banner"];
const SIGN_KEY = "grattage.astro.sign";

let chosenSign = localStorage.getItem(SIGN_KEY);
let play = null;
let buying = false;

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

function paintDisc(ctx, w, h) {
  paintMetal(ctx, w, h, {
    decorate: () => {
      const size = Math.min(w, h) * 0.62;
      if (chosenSign) drawGlyph(ctx, play?.ticket?.sign || chosenSign, (w - size) / 2, (h - size) / 2, size, "#28306e");
    },
  });
}

function fillZone(zoneId, content, element) {
  element.replaceChildren();
  if (zoneId === "gain") {
    element.dataset.cents = String(content);
    element.append(el("span", { class: "gain-label", text: "Gain" }), el("span", { class: "gain-amount", text: formatEuros(content) }));
  } else if (zoneId === "banner") {
    element.dataset.multiplier = String(content.multiplier ?? "");
    element.append(el("span", { class: "banner-text", text: content.text }));
  } else {
    element.dataset.symbol = content;
    const sign = play?.ticket?.sign || chosenSign;
    element.innerHTML = content === "sign" ? signSvg(sign) : symbolSvg(content);
    element.parentElement.classList.toggle("is-sign", content === "sign");
  }
}

function buildZones(ticket, locked) {
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
      box.style.setProperty("--angle", `${-90 + index * (360 / DISCS)}deg`);
      discs.append(box);
      options = { label: `Pastille ${index + 1}`, paint: paintDisc, round: true };
    } else if (zoneId === "gain") {
      box.className = "gain-box";
      $("#gain-slot").append(box);
      options = { label: "Case Gain", paint: paintText("Gain", { color: "#3b2a6b", scale: 0.42 }) };
    } else {
      box.className = "banner";
      $("#banner-slot").append(box);
      options = { label: "Bandeau multiplicateur", paint: paintText(BANNER_TEXT, { tint: "gold", color: "#5a2d00", weight: 700, scale: 0.3 }) };
    }
    const zone = new ScratchZone(box, {
      zoneId,
      ...options,
      onScratched: (scratched) => play?.requestReveal(scratched),
    });
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
}

/** Arrow keys move through the signs, as in any radio group. */
function moveChoice(event) {
  const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[event.key];
  if (!step) return;
  event.preventDefault();
  const buttons = [...document.querySelectorAll(".sign-choice")];
  const current = Math.max(0, buttons.indexOf(document.activeElement));
  const next = buttons[(current + step + buttons.length) % buttons.length];
  next.focus();
  chooseSign(next.dataset.sign);
}

function buildPicker() {
  const picker = $("#signs");
  picker.addEventListener("keydown", moveChoice);
  for (const sign of SIGNS) {
    const button = el("button", {
      class: "sign-choice", type: "button", role: "radio", "aria-checked": "false", "data-sign": sign.id,
      "aria-label": sign.name, html: signSvg(sign.id, { title: false }),
    }, el("span", { text: sign.name }));
    button.addEventListener("click", () => chooseSign(sign.id));
    picker.append(button);
  }
}

function chooseSign(signId) {
  $("#banner-hint").hidden = true;
  if (play && !play.finished) return; // the sign of a ticket in play is fixed
  chosenSign = signId;
  localStorage.setItem(SIGN_KEY, signId);
  showChosenSign(signId);
  if (!play || play.finished) {
    play?.dispose();
    play = null;
    clearResult();
    $("#ticket").classList.add("specimen");
    buildZones(null, true);
  }
}

function setButtons({ playing }) {
  $("#play").disabled = playing || buying;
  $("#auto").disabled = playing || buying;
  $("#reveal-all").disabled = !playing;
  for (const button of document.querySelectorAll(".sign-choice")) button.disabled = playing;
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

function showResult(ticket) {
  const result = $("#result");
  result.dataset.prizeCents = String(ticket.prize_cents);
  result.className = `result ${ticket.prize_cents > 0 ? "won" : "lost"}`;
  $("#ticket").classList.toggle("won", ticket.prize_cents > 0);
  result.textContent = winMessage(ticket);
}

function clearResult() {
  const result = $("#result");
  result.textContent = "";
  result.className = "result";
  delete result.dataset.prizeCents;
  $("#ticket").classList.remove("won");
}

function startTicket(ticket, { replay = false } = {}) {
  clearResult();
  if (ticket.sign) {
    chosenSign = ticket.sign;
    showChosenSign(ticket.sign);
  }
  $("#ticket").classList.remove("specimen");
  $("#ticket").dataset.ticketId = String(ticket.id);
  // The address names the ticket on screen, so a reload resumes (or replays) this one.
  window.history.replaceState(null, "", `${location.pathname}?ticket=${encodeURIComponent(ticket.id)}`);
  play?.dispose();
  setButtons({ playing: true });
  play = new TicketPlay({
    ticket,
    zones: new Map(),
    fillZone,
    staggerMs: 260,
    onChange: (current) => {
      $("#banner-hint").hidden = !(current.locked_zones || []).includes("banner");
    },
    onFinished: async (current) => {
      showResult(current);
      setButtons({ playing: false }); // another ticket only once this one's result is shown
      try {
        await refreshBalance();
      } catch (error) {
        handleError(error);
      }
    },
    onError: handleError,
  });
  play.zones = buildZones(ticket, false);
  const replayBanner = $("#replay-banner");
  replayBanner.hidden = !replay;
  if (replay) {
    const how = ticket.mode === "auto" ? "en mode Auto" : "en grattant";
    replayBanner.replaceChildren(
      `Ticket n° ${ticket.id} du ${formatDate(ticket.created_at)}, joué ${how} — tel qu'il s'est terminé. `,
      el("a", { href: "/history.html", text: "Retour à l'historique" }),
    );
  }
  play.apply(ticket, { animate: !replay && ticket.mode === "auto" });
  if (ticket.state !== "finished" && ticket.mode === "auto") play.revealAll();
}

async function buy(mode) {
  if (buying) return; // one intent at a time: a double click buys one ticket
  if (!chosenSign) {
    notify("Choisissez d'abord votre signe parmi les douze.");
    return;
  }
  buying = true;
  setButtons({ playing: true });
  notify("");
  try {
    const ticket = await buyTicket("astro", mode, chosenSign);
    buying = false;
    startTicket(ticket);
    await refreshBalance();
  } catch (error) {
    buying = false;
    setButtons({ playing: play !== null && !play.finished });
    handleError(error);
  }
}

async function openRequestedOrUnfinished() {
  const requested = new URLSearchParams(location.search).get("ticket");
  if (requested) {
    const ticket = await api.ticket(requested);
    if (ticket.game !== "astro") {
      location.replace(`/cash.html?ticket=${encodeURIComponent(requested)}`);
      return;
    }
    startTicket(ticket, { replay: ticket.state === "finished" });
    return;
  }
  try {
    const last = await api.lastTicket();
    if (last.game === "astro" && last.state !== "finished") {
      notify("Votre partie en cours a été reprise.", "info");
      startTicket(last);
    }
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
  }
}

async function main() {
  buildPicker();
  if (!signById(chosenSign)) chosenSign = null;
  showChosenSign(chosenSign);
  $("#play").addEventListener("click", () => buy("play"));
  $("#auto").addEventListener("click", () => buy("auto"));
  $("#reveal-all").addEventListener("click", () => play?.revealAll());
  buildZones(null, true);
  setButtons({ playing: false });
  const me = await startPage();
  if (!me) return;
  try {
    const { games } = await api.games();
    const astro = games.find((game) => game.name === "astro");
    if (astro) {
      $("#price").textContent = formatPrice(astro.price_cents);
      $("#top-prize").textContent = formatEuros(astro.top_prize_cents);
      if (astro.reconstruction) {
        $(".game-sub").append(" ", el("span", { class: "badge", text: "tableau de lots reconstitué" }));
      }
      if (!astro.on_sale) notify("Ce jeu est épuisé pour le moment : plus aucun ticket n'est disponible.");
    }
    await openRequestedOrUnfinished();
  } catch (error) {
    handleError(error);
  }
}

main();
