// « Règles du jeu » (/regles/<game>), public: a visitor reads them before signing up. How to play
// and the regulation are the template's; the figures are those of the block on sale, from
// GET /api/games (which needs no log-in), divided here from the API's exact integers: each
// prize's odds, the overall odds, the payout, the prizes left, the table's source, the
// regulation's date. The game is the page's <body data-game>.
import { api } from "./api.js";
import { findGame, loadGames } from "./catalogue.js";
import { formatEuros, formatPrice, formatShortPercent, formatShortRatio } from "./money.js";
import { $, el, handleError } from "./ui.js";
import { showWhoIsHere } from "./visitor_header.js";

const NO_BREAK_SPACE = "\u00a0";

/** « 1 chance sur 3,83 »: no-break spaces throughout, so that it never wraps. */
export function oddsText(blockSize, count) {
  return ["1", "chance", "sur", formatShortRatio(blockSize, count)].join(NO_BREAK_SPACE);
}

/** 12000000 → « 12 000 000 », with the narrow no-break spaces of money.js. */
function count(n) {
  return formatShortRatio(n, 1, 0);
}

/** Prize → tickets, largest first; two tiers of one amount are one prize (as prizes_remaining). */
function byAmount(tiers) {
  const counts = new Map();
  for (const tier of [...tiers].sort((a, b) => b.prize_cents - a.prize_cents)) {
    counts.set(tier.prize_cents, (counts.get(tier.prize_cents) ?? 0) + tier.count);
  }
  return counts;
}

/** What is left to win across the open blocks (they share one table), prize → tickets. */
function remainingByAmount(openBlocks) {
  const left = new Map();
  for (const block of openBlocks) {
    for (const [cents, n] of byAmount(block.prizes_remaining)) left.set(cents, (left.get(cents) ?? 0) + n);
  }
  return left;
}

const DAY_FORMAT = new Intl.DateTimeFormat("fr-FR", { day: "numeric", month: "long", year: "numeric", timeZone: "UTC" });

/** The API's day « 2009-03-16 » → « 16 mars 2009 ». */
export function frenchDay(day) {
  const date = new Date(`${day}T00:00:00Z`);
  return Number.isNaN(date.getTime()) ? String(day) : DAY_FORMAT.format(date);
}

function saleLine(game) {
  if (game.off_sale_reason === "table_unplayable") {
    return "Ce jeu n'est pas en vente\u00a0: le tableau de lots de son bloc ne peut pas être lu.";
  }
  if (!game.on_sale) {
    return "Aucun bloc de ce jeu n'est en vente pour le moment. Voici son tableau de lots\u202f; les lots restants seront annoncés à l'ouverture du prochain bloc.";
  }
  const blocks = game.open_blocks;
  if (!blocks.length) return "Le prochain bloc de ce jeu n'est pas encore ouvert\u00a0: voici son tableau de lots.";
  const size = blocks.reduce((sum, block) => sum + block.size, 0);
  const left = blocks.reduce((sum, block) => sum + block.size - block.sold, 0);
  const which = blocks.length === 1 ? `Bloc en vente\u00a0: n°${NO_BREAK_SPACE}${blocks[0].block_id}` : `${blocks.length} blocs en vente`;
  return `${which}, ${count(left)} tickets restants sur ${count(size)}.`;
}

function facts(game) {
  const stakes = game.block_size * game.price_cents;
  const rows = [
    ["Prix du ticket", formatPrice(game.price_cents)],
    ["Gros lot", formatEuros(game.top_prize_cents)],
    ["Tickets par bloc", count(game.block_size)],
    ["Tickets gagnants par bloc", count(game.winning_tickets)],
    ["Chances de gain", oddsText(game.block_size, game.winning_tickets), "overall-odds"],
    ["Taux de retour aux joueurs", formatShortPercent(game.prizes_total_cents, stakes), "payout"],
  ];
  return rows.flatMap(([term, value, name]) => [
    el("dt", { text: term }),
    el("dd", { class: name, text: value }),
  ]);
}

function prizeTable(game) {
  const table = byAmount(game.prize_table);
  const open = game.on_sale && game.open_blocks.length > 0;
  const left = remainingByAmount(game.open_blocks);
  const cells = (label, tickets, odds, remaining, cents) => el("tr", cents === undefined ? {} : { "data-cents": cents },
    el("th", { scope: "row", class: "prize", text: label }),
    el("td", { class: "count", "data-label": "Lots par bloc", text: count(tickets) }),
    el("td", { class: "odds", "data-label": "Probabilité", text: odds }),
    open ? el("td", { class: "left", "data-label": "Lots restants", text: count(remaining) }) : null,
  );
  const rows = [...table].map(([cents, tickets]) => cells(formatEuros(cents), tickets, oddsText(game.block_size, tickets), left.get(cents) ?? 0, cents));
  const leftTotal = [...left.values()].reduce((sum, n) => sum + n, 0);
  return el("table", { class: "prize-table rules-prize-table" },
    el("caption", { text: `Tableau de lots d'un bloc de ${count(game.block_size)} tickets` }),
    el("thead", {}, el("tr", {},
      el("th", { scope: "col", text: "Gain" }),
      el("th", { scope: "col", text: "Lots par bloc" }),
      el("th", { scope: "col", text: "Probabilité" }),
      open ? el("th", { scope: "col", text: "Lots restants" }) : null)),
    el("tbody", {}, ...rows),
    el("tfoot", {}, cells("Total", game.winning_tickets, oddsText(game.block_size, game.winning_tickets), leftTotal)),
  );
}

function source(game) {
  const line = $("#rules-source");
  line.replaceChildren(`Source du tableau${NO_BREAK_SPACE}: ${game.table_source}`);
  if (game.reconstruction) {
    line.append(" ", el("strong", { class: "badge reconstruction", text: "tableau reconstitué" }),
      ` Ce tableau est une reconstitution fidèle aux totaux du règlement, pas le tableau officiel.`);
  }
}

function showGame(game) {
  document.title = `Règles du jeu ${game.title} — Grattage`;
  $("#rules-game-title").textContent = game.title;
  $("#rules-regulation-date").textContent = frenchDay(game.regulation_date);
  $("#rules-sale").textContent = saleLine(game);
  const play = $("#rules-play");
  if (game.page && game.on_sale) play.href = game.page;
  else play.hidden = true;
  if (!game.prize_table.length) return; // a table that cannot be read has no figures to give
  $("#rules-summary").textContent = `Ticket à ${formatPrice(game.price_cents)} · jusqu'à ${formatEuros(game.top_prize_cents)} à gagner`;
  $("#rules-facts").replaceChildren(...facts(game));
  $("#rules-table").replaceChildren(prizeTable(game));
  source(game);
}

/** « 10 » secondes; « 15 minutes » for a whole number of minutes. */
function delay(seconds) {
  if (seconds >= 60 && seconds % 60 === 0) {
    const minutes = seconds / 60;
    return `${minutes}${NO_BREAK_SPACE}minute${minutes > 1 ? "s" : ""}`;
  }
  return `${seconds}${NO_BREAK_SPACE}secondes`;
}

async function showDelays() {
  const config = await api.config();
  const inactivity = $("#rules-inactivity");
  if (inactivity) inactivity.textContent = String(config.inactivity_seconds);
  const abandon = $("#rules-abandon");
  if (abandon) abandon.textContent = delay(config.abandon_seconds);
}

async function main() {
  const name = document.body.dataset.game;
  try {
    const [games] = await Promise.all([loadGames(), showDelays(), showWhoIsHere()]);
    const game = findGame(games, name);
    if (game) showGame(game);
    else $("#rules-sale").textContent = "Ce jeu n'est plus proposé.";
  } catch (error) {
    handleError(error);
  }
}

main();
