// Cash 500 000 €, what its page does its own way: 20 stars (« Vos numéros »), 5 clovers
// (« Numéros gagnants »), the matches lit up, the « Gain total » box. The rest: game_page.js.
import { formatEuros } from "./money.js";
import { paintMetal, ScratchZone } from "./scratch.js";
import { $, el } from "./ui.js";

const STARS = 20;
const CLOVERS = 5;
const DEFAULT_ZONES = [
  ...Array.from({ length: STARS }, (_, i) => `your_numbers/${i}`),
  ...Array.from({ length: CLOVERS }, (_, i) => `winning_numbers/${i}`),
];

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

function fillZone(page, zoneId, content, element) {
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
function highlightMatches(page, ticket) {
  const revealed = ticket.revealed || {};
  const winning = new Set();
  const yours = new Set();
  for (const [zoneId, content] of Object.entries(revealed)) {
    if (zoneId.startsWith("winning_numbers/")) winning.add(content);
    else yours.add(content.number);
  }
  for (const [zoneId, zone] of page.play.zones) {
    const content = revealed[zoneId];
    const number = zoneId.startsWith("winning_numbers/") ? content : content?.number;
    const matched = content !== undefined && (zoneId.startsWith("winning_numbers/") ? yours : winning).has(number);
    zone.element.classList.toggle("match", matched);
  }
}

function buildZones(page, ticket, locked) {
  const yours = $("#yours");
  const winning = $("#winning");
  yours.replaceChildren();
  winning.replaceChildren();
  const zones = new Map();
  for (const zoneId of ticket?.zones || DEFAULT_ZONES) {
    const index = Number(zoneId.split("/")[1]);
    const isStar = zoneId.startsWith("your_numbers/");
    const box = el("div", { class: isStar ? "star" : "clover" }, el("div", { class: "zone-content" }));
    // A clover is round: its square takes the finger (scratch.js, hitArea).
    const square = isStar ? box : el("div", { class: "zone-square" }, box);
    (isStar ? yours : winning).append(square);
    const zone = new ScratchZone(box, {
      zoneId,
      label: isStar ? `Étoile ${index + 1}` : `Trèfle ${index + 1}`,
      paint: isStar ? paintStar : paintClover,
      round: !isStar,
      hitArea: square,
      ...page.zoneHandlers(),
    });
    zone.setLocked(locked);
    zones.set(zoneId, zone);
  }
  return zones;
}

function winMessage(ticket) {
  const message = ticket.prize_cents > 0
    ? `Bravo ! Vous gagnez ${formatEuros(ticket.prize_cents)}.`
    : "Pas de gain cette fois-ci. Retentez votre chance !";
  return ticket.finished_by === "inactivity" ? `${message} (découvert automatiquement)` : message;
}

function showTotal(ticket) {
  const total = $("#total");
  total.textContent = formatEuros(ticket.prize_cents);
  total.dataset.cents = String(ticket.prize_cents);
}

function clearTotal() {
  const total = $("#total");
  total.textContent = "—";
  delete total.dataset.cents;
}

export const cash = {
  name: "cash",
  staggerMs: 70,
  revealsAfterInactivity: true,
  buildZones,
  fillZone,
  onChange: highlightMatches,
  winMessage,
  showResult: showTotal,
  clearResult: clearTotal,
  playLabel: "Jouer au Cash",
  /** The lobby card's art: the game's top prize, as the API states it. */
  cardArt: (game) => el("div", { class: "card-art cash-art" }, el("span", { text: formatEuros(game.top_prize_cents) })),
};
