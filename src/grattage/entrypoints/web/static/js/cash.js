// The Cash 500 000 € page: 20 stars (« Vos numéros »), 5 clovers (« Numéros gagnants »).
import { api, ApiError, buyTicket } from "./api.js";
import { formatEuros, formatPrice } from "./money.js";
import { TicketPlay } from "./play.js";
import { paintMetal, ScratchZone } from "./scratch.js";
import { $, el, formatDate, handleError, notify, refreshBalance, startPage } from "./ui.js";

const STARS = 20;
const CLOVERS = 5;
const DEFAULT_ZONES = [
  ...Array.from({ length: STARS }, (_, i) => `your_numbers/${i}`),
  ...Array.from({ length: CLOVERS }, (_, i) => `winning_numbers/${i}`),
];

let config = { inactivity_seconds: 10 };
let play = null;
let buying = false;

function starPath(ctx, cx, cy, outer, inner) {
  ctx.beginPath();
  for (let i = 0; i < 10; i += 1) {
    const radius = i % 2 ? inner : outer;
    const angle = -Math.PI / 2 + (i * Math.PI) / 5;
    ctx.lineTo(cx + radius * Math.cos(angle), cy + radius * Math.sin(angle));
  }
  ctx.closePath();
}

function cloverPath(ctx, cx, cy, size) {
  const leaf = size * 0.2;
  ctx.beginPath();
  for (const [dx, dy] of [[0, -1], [1, 0], [0, 1], [-1, 0]]) {
    ctx.moveTo(cx + dx * leaf + leaf, cy + dy * leaf);
    ctx.arc(cx + dx * leaf, cy + dy * leaf, leaf, 0, Math.PI * 2);
  }
}

function paintStar(ctx, w, h) {
  paintMetal(ctx, w, h, {
    decorate: () => {
      starPath(ctx, w / 2, h / 2, Math.min(w, h) * 0.36, Math.min(w, h) * 0.15);
      ctx.fillStyle = "rgba(200, 146, 20, 0.85)";
      ctx.fill();
    },
  });
}

function paintClover(ctx, w, h) {
  paintMetal(ctx, w, h, {
    decorate: () => {
      cloverPath(ctx, w / 2, h / 2, Math.min(w, h));
      ctx.fillStyle = "rgba(22, 140, 74, 0.85)";
      ctx.fill();
    },
  });
}

function fillZone(zoneId, content, element) {
  element.replaceChildren();
  if (zoneId.startsWith("your_numbers/")) {
    element.dataset.number = String(content.number);
    element.append(
      el("span", { class: "number", text: String(content.number) }),
      el("span", { class: "amount", "data-cents": content.amount_cents, text: formatEuros(content.amount_cents) }),
    );
  } else {
    element.dataset.number = String(content);
    element.append(el("span", { class: "number", text: String(content) }));
  }
}

/** Once a number is revealed in both areas, light both up. */
function highlightMatches() {
  const revealed = play?.ticket?.revealed || {};
  const winning = new Set();
  const yours = new Set();
  for (const [zoneId, content] of Object.entries(revealed)) {
    if (zoneId.startsWith("winning_numbers/")) winning.add(content);
    else yours.add(content.number);
  }
  for (const [zoneId, zone] of play.zones) {
    const content = revealed[zoneId];
    const number = zoneId.startsWith("winning_numbers/") ? content : content?.number;
    const matched = content !== undefined && (zoneId.startsWith("winning_numbers/") ? yours : winning).has(number);
    zone.element.classList.toggle("match", matched);
  }
}

function buildZones(ticket, locked) {
  const yours = $("#yours");
  const winning = $("#winning");
  yours.replaceChildren();
  winning.replaceChildren();
  const zones = new Map();
  for (const zoneId of ticket?.zones || DEFAULT_ZONES) {
    const index = Number(zoneId.split("/")[1]);
    const isStar = zoneId.startsWith("your_numbers/");
    const box = el("div", { class: isStar ? "star" : "clover" }, el("div", { class: "zone-content" }));
    (isStar ? yours : winning).append(box);
    const zone = new ScratchZone(box, {
      zoneId,
      label: isStar ? `Étoile ${index + 1}` : `Trèfle ${index + 1}`,
      paint: isStar ? paintStar : paintClover,
      onScratched: (scratched) => play?.requestReveal(scratched),
      onActivity: () => play?.activity(),
    });
    zone.setLocked(locked);
    zones.set(zoneId, zone);
  }
  return zones;
}

function setButtons({ playing }) {
  $("#play").disabled = playing || buying;
  $("#auto").disabled = playing || buying;
  $("#reveal-all").disabled = !playing;
}

function showResult(ticket) {
  const total = $("#total");
  total.textContent = formatEuros(ticket.prize_cents);
  total.dataset.cents = String(ticket.prize_cents);
  const result = $("#result");
  result.dataset.prizeCents = String(ticket.prize_cents);
  result.className = `result ${ticket.prize_cents > 0 ? "won" : "lost"}`;
  $("#ticket").classList.toggle("won", ticket.prize_cents > 0);
  result.textContent = ticket.prize_cents > 0
    ? `Bravo ! Vous gagnez ${formatEuros(ticket.prize_cents)}.`
    : "Pas de gain cette fois-ci. Retentez votre chance !";
  if (ticket.finished_by === "inactivity") result.textContent += " (découvert automatiquement)";
}

function clearResult() {
  const result = $("#result");
  result.textContent = "";
  result.className = "result";
  delete result.dataset.prizeCents;
  $("#ticket").classList.remove("won");
  $("#total").textContent = "—";
  delete $("#total").dataset.cents;
}

function startTicket(ticket, { replay = false } = {}) {
  clearResult();
  $("#ticket").classList.remove("specimen");
  $("#ticket").dataset.ticketId = String(ticket.id);
  // The address names the ticket on screen, so a reload resumes (or replays) this one.
  window.history.replaceState(null, "", `${location.pathname}?ticket=${encodeURIComponent(ticket.id)}`);
  play?.dispose();
  setButtons({ playing: true });
  const finishedAlready = ticket.state === "finished";
  const zones = buildZones(ticket, false);
  play = new TicketPlay({
    ticket,
    zones,
    fillZone,
    staggerMs: 70,
    inactivitySeconds: ticket.mode === "play" ? config.inactivity_seconds : null,
    onChange: () => highlightMatches(),
    onFinished: async (current) => {
      showResult(current);
      setButtons({ playing: false }); // another ticket only once this one's result is shown
      try {
        await refreshBalance();
      } catch (error) {
        handleError(error);
      }
    },
    onInactivity: () => notify(`Découverte automatique après ${config.inactivity_seconds} s sans grattage.`, "info"),
    onError: handleError,
  });
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
  if (!finishedAlready) {
    if (ticket.mode === "auto") play.revealAll(); // the server left it to the page
    else play.activity(); // the inactivity clock runs from the purchase on
  }
}

async function buy(mode) {
  if (buying) return; // one intent at a time: a double click buys one ticket
  buying = true;
  setButtons({ playing: true });
  notify("");
  try {
    const ticket = await buyTicket("cash", mode, null);
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
    if (ticket.game !== "cash") {
      location.replace(`/astro.html?ticket=${encodeURIComponent(requested)}`);
      return true;
    }
    startTicket(ticket, { replay: ticket.state === "finished" });
    return true;
  }
  try {
    const last = await api.lastTicket();
    if (last.game === "cash" && last.state !== "finished") {
      notify("Votre partie en cours a été reprise.", "info");
      startTicket(last);
      return true;
    }
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
  }
  return false;
}

async function main() {
  $("#play").addEventListener("click", () => buy("play"));
  $("#auto").addEventListener("click", () => buy("auto"));
  $("#reveal-all").addEventListener("click", () => play?.revealAll());
  buildZones(null, true);
  setButtons({ playing: false });
  const me = await startPage();
  if (!me) return;
  try {
    const [serverConfig, { games }] = await Promise.all([api.config(), api.games()]);
    config = serverConfig;
    const cash = games.find((game) => game.name === "cash");
    if (cash) {
      $("#price").textContent = formatPrice(cash.price_cents);
      $("#top-prize").textContent = formatEuros(cash.top_prize_cents);
      if (!cash.on_sale) notify("Ce jeu est épuisé pour le moment : plus aucun ticket n'est disponible.");
    }
    await openRequestedOrUnfinished();
  } catch (error) {
    handleError(error);
  }
}

main();
