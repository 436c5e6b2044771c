// The try mode, « Essayer gratuitement » (/essai/cash, /essai/astro): the game pages' flow with
// play money, under /api/try (docs/api.md). A try session lives in a cookie of its own; it is
// started here when there is none, or when it expired. Nothing here calls the player's API:
// a logged-in player's wallet is never touched, nor even read.
import { ApiError, request } from "./api.js";
import { formatEuros, formatPrice, formatShortRatio } from "./money.js";
import { $, el, formatDate, handleError, notify } from "./ui.js";

const NO_BREAK_SPACE = "\u00a0";

const tryApi = {
  start: () => request("POST", "/api/try/sessions"),
  session: () => request("GET", "/api/try/session"),
  refill: () => request("POST", "/api/try/session/refill"),
  games: () => request("GET", "/api/try/games"),
  buy: (game, mode, sign) =>
    request("POST", `/api/try/games/${encodeURIComponent(game)}/tickets`, { body: sign ? { mode, sign } : { mode } }),
  reveal: (ticketId, zones) => request("POST", `/api/try/tickets/${ticketId}/reveal`, { body: { zones } }),
  revealAll: (ticketId, { inactivity = false } = {}) =>
    request("POST", `/api/try/tickets/${ticketId}/reveal`, {
      body: inactivity ? { all: true, inactivity: true } : { all: true },
    }),
  // A try ticket has no server-side inactivity clock (nothing is owed on it): the page's own
  // timer reveals a Cash ticket left untouched, so there is nothing to report.
  activity: async () => null,
  ticket: (ticketId) => request("GET", `/api/try/tickets/${encodeURIComponent(ticketId)}`),
  lastTicket: () => request("GET", "/api/try/tickets/last"),
  history: () => request("GET", "/api/try/tickets"),
};

let gamesLoading = null;

/** The games as the try mode deals them, shaped as the game page reads GET /api/games. */
function loadTryGames() {
  gamesLoading ??= tryApi.games().then(
    ({ games }) => games.map((game) => ({ ...game, on_sale: true, page: `/essai/${game.name}` })),
    (error) => {
      gamesLoading = null;
      throw error;
    },
  );
  return gamesLoading;
}

/** « 1 chance sur 3,83 », never wrapped. */
function oddsText(game) {
  return ["1", "chance", "sur", formatShortRatio(game.block_size, game.winning_tickets)].join(NO_BREAK_SPACE);
}

function count(n) {
  return formatShortRatio(n, 1, 0);
}

async function showOdds() {
  const games = await loadTryGames();
  const game = games.find((shown) => shown.name === document.body.dataset.game);
  if (!game) return;
  $("#try-odds").replaceChildren(
    "Mêmes chances que le vrai jeu\u00a0: ",
    el("strong", { text: oddsText(game) }),
    ` (le tableau de lots du jeu\u00a0: ${count(game.winning_tickets)} tickets gagnants sur ${count(game.block_size)}).`,
  );
}

/** The try session's play balance, and the refill once it cannot pay a ticket. */
function showAccount(account) {
  const balance = $("#balance");
  balance.textContent = formatEuros(account.balance_cents, { alwaysDecimals: true });
  balance.dataset.cents = String(account.balance_cents);
  const refill = $("#try-refill");
  refill.hidden = !account.can_refill;
  refill.textContent = `Recharger ${formatPrice(account.refill_cents)} fictifs`;
}

const MODES = { play: "en grattant", auto: "en Auto" };

function historyLine(row, games) {
  const title = games.find((game) => game.name === row.game)?.title ?? row.game;
  const result = row.prize_cents === null
    ? "en cours"
    : row.prize_cents > 0 ? `gagné ${formatEuros(row.prize_cents)} (fictifs)` : "perdu";
  return el(
    "li",
    { class: "try-history-row", "data-ticket-id": String(row.id), "data-game": row.game },
    el("a", { href: `/essai/${encodeURIComponent(row.game)}?ticket=${encodeURIComponent(row.id)}`, text: `${title}, ${MODES[row.mode] ?? row.mode}` }),
    ` — ${formatDate(row.created_at)} — mise ${formatPrice(row.stake_cents)}\u00a0: ${result}`,
  );
}

async function showHistory() {
  const [{ tickets }, games] = await Promise.all([tryApi.history(), loadTryGames()]);
  $("#try-history-list").replaceChildren(...tickets.map((row) => historyLine(row, games)));
  $("#try-history-empty").hidden = tickets.length > 0;
}

async function refreshAccount() {
  const account = await tryApi.session();
  showAccount(account);
  await showHistory();
  return account;
}

/** The try session of this browser, a new one if it has none (or it expired). */
async function openSession() {
  try {
    return await tryApi.session();
  } catch (error) {
    if (!(error instanceof ApiError && error.code === "no_try_session")) throw error;
    return tryApi.start();
  }
}

/** A try purchase; if the session ended (expired, purged, its cookie gone) a new one is
 * started and the purchase made in it, as docs/api.md says — not a « reload the page ». */
async function buyStartingAnewIfEnded(game, mode, sign) {
  try {
    return await tryApi.buy(game, mode, sign);
  } catch (error) {
    if (!(error instanceof ApiError && error.code === "no_try_session")) throw error;
    showAccount(await tryApi.start());
    return tryApi.buy(game, mode, sign);
  }
}

/** A player logged in on this browser who came to try a game gets the way back to their
 * account in the header; for a visitor GET /api/me answers 401 and the header stays. */
async function offerTheWayBackToTheAccount() {
  try {
    await request("GET", "/api/me");
  } catch {
    return;
  }
  const account = $("#try-account");
  account.textContent = "Mon compte";
  account.href = "/";
  $("#try-brand").href = "/";
  const forReal = $("#try-for-real");
  forReal.textContent = "Jouer pour de vrai";
  forReal.href = `/${encodeURIComponent(document.body.dataset.game)}.html`;
  $("#try-brand").setAttribute("aria-label", "Grattage, accueil de votre compte");
}

async function startTryPage() {
  offerTheWayBackToTheAccount();
  $("#try-refill").addEventListener("click", async () => {
    try {
      showAccount(await tryApi.refill());
      notify("Votre solde fictif est rechargé.", "info");
    } catch (error) {
      handleError(error);
    }
  });
  try {
    const account = await openSession();
    showAccount(account);
    await Promise.all([showOdds(), showHistory()]);
    return account;
  } catch (error) {
    handleError(error);
    return null;
  }
}

/** The game page's mode on a try page (game_page.js): play money, no proofs, its own history. */
export const TRY_MODE = {
  api: tryApi,
  buy: buyStartingAnewIfEnded,
  startPage: startTryPage,
  refreshBalance: refreshAccount,
  loadGames: loadTryGames,
  config: () => request("GET", "/api/config"), // the platform's delays, nobody's account
  proofs: false,
  historyPage: "#try-history",
  titlePrefix: "Essai gratuit — ", // a tab or a bookmark says it is not the real game
};
