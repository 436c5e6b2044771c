// The lobby: balance, every game of GET /api/games with its numbers, the last game, the demo deposit.
import { api, ApiError } from "./api.js";
import { formatEuros, formatPrice, formatShortPercent, formatShortRatio, parseEuros } from "./money.js";
import { loadGames, ticketPage } from "./catalogue.js";
import { GAME_MODULES } from "./games.js";
import { $, el, handleError, keepInSight, notify, refreshBalance, startPage } from "./ui.js";

let depositMaxCents = null;
const DEPOSIT_MESSAGE = "#deposit-message"; // beside the form: on a phone the top is far away

/** The exact odds the API sends (winning tickets of a block) → « 1 chance sur 3,83 »;
 * « — » for a game whose table gives no figures (listed off sale, table_unplayable). */
function frenchOdds(game) {
  if (!(game.winning_tickets > 0)) return "—";
  return `1\u00a0chance sur\u00a0${formatShortRatio(game.block_size, game.winning_tickets)}`; // never wrapped
}

/** The block's own payout: its table's prizes over the block's stakes at the block's price. */
function payout(game) {
  const stakes = game.block_size * game.price_cents;
  if (!(stakes > 0)) return "—";
  return formatShortPercent(game.prizes_total_cents, stakes);
}

const NO_BREAK_SPACE = "\u00a0";

/** « Gros lots restants : 2 × 500 000 € »: the top prizes still unsold in the open blocks,
 *  as lotteries publish them; none when no block is open. No line may break inside it. */
function topPrizesRemaining(game) {
  const top = game.top_prizes_remaining;
  if (!top) return null;
  const amount = formatEuros(top.prize_cents);
  const left = top.count > 0
    ? `${top.count.toLocaleString("fr-FR")}${NO_BREAK_SPACE}×${NO_BREAK_SPACE}${amount}`
    : `aucun lot de ${amount}`;
  return el("p", {
    class: "prizes-remaining",
    "data-count": top.count,
    "data-cents": top.prize_cents,
    text: `Gros lots restants${NO_BREAK_SPACE}: ${left}`,
  });
}
const OFF_SALE = {
  sold_out: "Épuisé pour le moment",
  table_unplayable: "Indisponible : le tableau de lots de ce bloc ne peut pas être joué",
};

function showBalance(cents) {
  const big = $("#balance-big");
  big.textContent = formatEuros(cents, { alwaysDecimals: true });
  big.dataset.cents = String(cents);
}

/** A game without a module of its own still gets a card: its title on the coating. */
function plainArt(game) {
  return el("div", { class: "card-art plain-art" }, el("span", { text: game.title }));
}

/** The way to the game's page; a game on sale that has no page (yet) has no button. */
function playButton(game, module) {
  if (!game.on_sale) return el("p", { class: "sold-out", text: OFF_SALE[game.off_sale_reason] ?? OFF_SALE.sold_out });
  if (!game.page) return null;
  return el("a", { class: "btn primary", href: game.page, text: module?.playLabel ?? `Jouer à ${game.title}` });
}

function gameCard(game) {
  const module = GAME_MODULES[game.name];
  const prizes = el("table", { class: "prize-table" },
    el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Lots par bloc" }), el("th", { scope: "col", text: "Montant" }))),
    el("tbody", {}, ...game.prize_table.map((row) => el("tr", {},
      el("td", { text: row.count.toLocaleString("fr-FR") }),
      el("td", { text: formatEuros(row.prize_cents) }),
    ))),
  );
  // A game whose table cannot be played has no figures to draw: its title on the coating.
  const art = module && game.prize_table.length ? module.cardArt(game) : plainArt(game);
  return el("article", { class: `game-card game-${game.name}`, "data-game": game.name },
    art,
    el("div", { class: "card-body" },
      el("h3", { text: game.title }),
      game.reconstruction ? el("p", { class: "badge", text: "tableau reconstitué" }) : null,
      el("dl", { class: "facts" },
        el("dt", { text: "Prix" }), el("dd", { class: "price", "data-cents": game.price_cents, text: formatPrice(game.price_cents) }),
        el("dt", { text: "Gros lot" }), el("dd", { class: "top-prize", "data-cents": game.top_prize_cents, text: game.top_prize_cents ? formatEuros(game.top_prize_cents) : "—" }),
        el("dt", { text: "Chances de gain" }), el("dd", { text: frenchOdds(game) }),
        el("dt", { text: "Taux de retour" }), el("dd", { class: "payout", text: payout(game) }),
      ),
      topPrizesRemaining(game),
      el("details", { class: "prizes" },
        el("summary", { text: game.reconstruction ? "Tableau de lots (reconstitué)" : "Tableau de lots" }),
        prizes,
        game.table_source ? el("p", { class: "hint table-source", text: `Source : ${game.table_source}` }) : null),
      game.rules_page ? el("p", { class: "rules-link" }, el("a", { href: game.rules_page, text: "Règles du jeu, gains et probabilités" })) : null,
      playButton(game, module),
    ),
  );
}

async function showLastGame(games) {
  const link = $("#last-game");
  try {
    const last = await api.lastTicket();
    const page = ticketPage(games, last.game, last.id);
    if (!page) return;
    link.href = page;
    link.textContent = last.state === "finished"
      ? `Revoir votre dernière partie : ${last.title}, ticket n° ${last.id} — gain ${formatEuros(last.prize_cents)}`
      : `Reprendre votre partie en cours : ${last.title}, ticket n° ${last.id}`;
    link.hidden = false;
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
  }
}

async function deposit(cents) {
  if (cents === null || cents <= 0) {
    notify("Indiquez un montant en euros, par exemple 20 ou 12,50.", "error", null, DEPOSIT_MESSAGE);
    return;
  }
  if (depositMaxCents !== null && cents > depositMaxCents) {
    notify(`Le dépôt de démonstration est limité à ${formatEuros(depositMaxCents)}.`, "error", null, DEPOSIT_MESSAGE);
    return;
  }
  const submit = $("#deposit-submit");
  submit.disabled = true;
  try {
    await api.deposit(cents);
    const me = await refreshBalance();
    showBalance(me.balance_cents);
    notify(`Dépôt de ${formatEuros(cents)} effectué.`, "success", null, DEPOSIT_MESSAGE);
    $("#deposit-amount").value = "";
  } catch (error) {
    if (error instanceof ApiError && error.code === "outcome_unknown") {
      // The server may have kept it (its answer was lost): show the balance as it is now, and
      // say so, rather than the purchase's « réessayez » — a second deposit would be a new one.
      const me = await refreshBalance().catch(() => null);
      if (me) showBalance(me.balance_cents);
      notify("La connexion a été coupée pendant le dépôt\u00a0: il a peut-être été fait. "
        + "Vérifiez votre solde avant de recommencer.", "error", null, DEPOSIT_MESSAGE);
    } else {
      handleError(error, DEPOSIT_MESSAGE);
    }
  } finally {
    submit.disabled = false;
  }
}

async function main() {
  $("#deposit-form").addEventListener("submit", (event) => {
    event.preventDefault();
    deposit(parseEuros($("#deposit-amount").value));
  });
  for (const chip of document.querySelectorAll(".chip")) {
    chip.addEventListener("click", () => deposit(Number(chip.dataset.cents)));
  }
  const me = await startPage();
  if (!me) return;
  showBalance(me.balance_cents);
  try {
    const [games, config] = await Promise.all([loadGames(), api.config()]);
    // The cards arrive above the deposit form: a player already using it keeps it in sight.
    await keepInSight(document.querySelector(".deposit"), async () => {
      $("#games").replaceChildren(...games.map(gameCard));
      depositMaxCents = config.demo_deposit_max_cents;
      if (depositMaxCents) $("#deposit-max").textContent = `Jusqu'à ${formatEuros(depositMaxCents)} par dépôt.`;
      await showLastGame(games);
    });
  } catch (error) {
    handleError(error);
  }
}

main();
