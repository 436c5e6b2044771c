// The one door to the server (docs/api.md). Every request carries the session cookie and the
// CSRF header; every failure becomes an ApiError with a French message a player can read.
import { formatEuros } from "./money.js";

const FRENCH_MESSAGES = {
  insufficient_balance: "Solde insuffisant\u00a0: faites un dépôt pour jouer.",
  sold_out: "Ce jeu est épuisé pour le moment\u00a0: plus aucun ticket n'est disponible.",
  idempotency_conflict: "Cette demande a déjà été envoyée autrement. Rechargez la page.",
  limit_reached: "Vous avez atteint une limite de jeu ou de dépôt.",
  already_exists: "Cette inscription ne peut pas être acceptée\u00a0: cette adresse ou cette personne a déjà un compte ou ne peut pas en ouvrir. Connectez-vous, ou contactez le support.",
  account_locked: "Compte verrouillé après trop d'essais. Réessayez plus tard.",
  self_excluded: "Vous vous êtes exclu du jeu\u00a0: vous ne pouvez ni vous connecter, ni jouer, ni déposer jusqu'au terme de votre exclusion.",
  account_suspended: "Votre compte est suspendu par l'opérateur\u00a0: vous ne pouvez ni vous connecter, ni jouer, ni déposer. Vos tickets déjà achetés se terminent et leurs gains vous sont versés. Contactez le support.",
  nationally_excluded: "Vous êtes inscrit au fichier des interdits de jeux (ANJ)\u00a0: aucun compte ne peut être ouvert ni utilisé.",
  unauthorized: "Votre session a expiré. Reconnectez-vous.",
  invalid_choice: "Choisissez d'abord un signe.",
  zone_not_revealable: "Cette zone ne peut pas encore être grattée.",
  not_found: "Introuvable\u00a0: ce ticket n'existe pas ou n'est pas à vous.",
  unavailable: "Le service est momentanément indisponible. Réessayez dans un instant.",
  outcome_unknown: "La connexion a été coupée pendant l'achat\u00a0: réessayez, il ne sera pas payé deux fois.",
  try_balance_spent: "Solde fictif épuisé\u00a0: rechargez-le pour continuer l'essai.",
  try_limit_reached: "Cet essai a atteint son nombre de tickets. Créez un compte pour jouer pour de vrai.",
  rate_limited: "Trop de demandes depuis votre connexion en peu de temps\u00a0: patientez quelques minutes, puis réessayez.",
  no_try_session: "Votre essai a expiré\u00a0: rechargez la page pour en commencer un nouveau.",
};

const STATUS_MESSAGES = {
  401: FRENCH_MESSAGES.unauthorized,
  403: "Action non autorisée.",
  404: FRENCH_MESSAGES.not_found,
  409: "Action impossible dans l'état actuel. Réessayez.",
  422: "Données invalides : vérifiez votre saisie.",
  429: FRENCH_MESSAGES.rate_limited,
  503: FRENCH_MESSAGES.unavailable,
};

// Limits reset on Monday 00:00 in Paris (the server's operator_time_zone), written in Paris time.
const RESET_FORMAT = new Intl.DateTimeFormat("fr-FR", {
  weekday: "long", day: "numeric", month: "long", hour: "2-digit", minute: "2-digit", timeZone: "Europe/Paris",
});

/** « Ce ticket dépasserait votre limite de mises… » from the numbers of a limit_reached answer. */
export function limitReachedMessage(details) {
  const deposit = details.limit === "deposit";
  const resets = RESET_FORMAT.format(new Date(details.resets_at));
  const euros = (cents) => formatEuros(cents, { alwaysDecimals: true });
  return `${deposit ? "Ce dépôt" : "Ce ticket"} dépasserait votre limite de ${deposit ? "dépôts" : "mises"} de `
    + `${euros(details.limit_cents)} par semaine\u00a0: il vous reste ${euros(details.remaining_cents)} `
    + `jusqu'au ${resets}, quand votre compteur repart à zéro.`;
}

const UNTIL_FORMAT = new Intl.DateTimeFormat("fr-FR", {
  day: "numeric", month: "long", year: "numeric", hour: "2-digit", minute: "2-digit", timeZone: "Europe/Paris",
});

/** « Vous vous êtes exclu du jeu jusqu'au 3 janvier 2027 à 04:25… », from its details. */
export function selfExcludedMessage(details) {
  const until = details.until ? new Date(details.until) : null;
  if (details.permanent || !until || Number.isNaN(until.getTime())) {
    return "Vous vous êtes exclu du jeu définitivement\u00a0: vous ne pouvez plus ni vous connecter, ni jouer, ni déposer.";
  }
  return `Vous vous êtes exclu du jeu jusqu'au ${UNTIL_FORMAT.format(until)}\u00a0: d'ici là, vous ne pouvez ni vous connecter, ni jouer, ni déposer.`;
}

function frenchMessage(status, code, details) {
  if (code === "limit_reached" && details && Number.isSafeInteger(details.remaining_cents)) {
    return limitReachedMessage(details);
  }
  if (code === "self_excluded" && details) return selfExcludedMessage(details);
  return FRENCH_MESSAGES[code] || STATUS_MESSAGES[status] || "Une erreur est survenue. Réessayez.";
}

export class ApiError extends Error {
  constructor(status, code, serverMessage, details = null) {
    super(frenchMessage(status, code, details));
    this.status = status;
    this.code = code;
    this.serverMessage = serverMessage;
    this.details = details;
  }

  get sessionExpired() {
    return this.status === 401 && this.code !== "account_locked";
  }
}

/** A fresh key per purchase intent; randomUUID needs a secure context, so fall back. */
export function newIdempotencyKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** One request to the API; every page (the back office included) goes through here. */
export async function request(method, path, { body, headers = {} } = {}) {
  const init = {
    method,
    credentials: "same-origin",
    headers: { Accept: "application/json", "X-Grattage-CSRF": "1", ...headers },
  };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new ApiError(0, "network", "");
  }
  if (response.status === 204) return null;
  let payload = null;
  try {
    payload = await response.json();
  } catch {
    payload = null;
  }
  if (!response.ok) {
    throw new ApiError(response.status, payload?.error || "error", payload?.message || "", payload?.details || null);
  }
  // A reality check rides on whichever answer the server gives it with (GET /api/me, a
  // purchase): the page that shows it listens for this event (responsible.js).
  if (payload && payload.reality_check) {
    window.dispatchEvent(new CustomEvent("grattage:reality-check", { detail: payload.reality_check }));
  }
  return payload;
}

/**
 * `request` for the pages that call the API by path (the back office, the limits page): the
 * body as third argument; `onUnauthorized` runs on a 401 (show a log-in) before the error is
 * thrown. The refusal's text for people is `error.serverMessage || error.message`.
 */
export function requester(onUnauthorized) {
  return async (method, path, body) => {
    try {
      return await request(method, path, body === undefined ? {} : { body });
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) onUnauthorized();
      throw error;
    }
  };
}

/** Send the player to the log-in page, coming back here afterwards. */
export function goToLogin() {
  const next = location.pathname + location.search;
  location.assign(`/login.html?next=${encodeURIComponent(next)}`);
}

export const api = {
  signUp: ({ email, password, firstName, lastName, birthDate }) =>
    request("POST", "/api/players", {
      body: { email, password, first_name: firstName, last_name: lastName, birth_date: birthDate },
    }),
  logIn: (email, password) => request("POST", "/api/sessions", { body: { email, password } }),
  logOut: () => request("DELETE", "/api/sessions"),
  me: () => request("GET", "/api/me"),
  deposit: (amountCents) => request("POST", "/api/me/deposits", { body: { amount_cents: amountCents } }),
  games: () => request("GET", "/api/games"),
  config: () => request("GET", "/api/config"),
  buy: (game, mode, sign, idempotencyKey) =>
    request("POST", `/api/games/${encodeURIComponent(game)}/tickets`, {
      body: sign ? { mode, sign } : { mode },
      headers: { "Idempotency-Key": idempotencyKey },
    }),
  reveal: (ticketId, zones) =>
    request("POST", `/api/tickets/${ticketId}/reveal`, { body: { zones } }),
  revealAll: (ticketId, { inactivity = false } = {}) =>
    request("POST", `/api/tickets/${ticketId}/reveal`, {
      body: inactivity ? { all: true, inactivity: true } : { all: true },
    }),
  activity: (ticketId) => request("POST", `/api/tickets/${ticketId}/activity`),
  ticket: (ticketId, { wait = false } = {}) =>
    request("GET", `/api/tickets/${ticketId}${wait ? "?wait=1" : ""}`),
  history: (before) =>
    request("GET", `/api/me/tickets?limit=20${before ? `&before=${encodeURIComponent(before)}` : ""}`),
  lastTicket: () => request("GET", "/api/me/tickets/last"),
  proof: (ticketId) => request("GET", `/api/tickets/${ticketId}/proof`),
  logKey: () => request("GET", "/api/log/key"),
  limits: () => request("GET", "/api/me/limits"),
  setLimits: (body) => request("PUT", "/api/me/limits", { body }),
  exclude: (period) => request("POST", "/api/me/exclusion", { body: { period } }),
  playHistory: () => request("GET", "/api/me/activity"),
  logEntry: (index) => request("GET", `/api/log/entries?start=${index}&end=${index}`),
};

// Purchases whose answer never arrived (network down, server error), by intent. Retrying the
// same intent reuses its key, so the server answers with the ticket already bought, if any,
// instead of selling a second one.
const unsettledPurchases = new Map();

/**
 * A drawn block's ticket comes back `covered` from its purchase: its unit is drawn once the
 * witness's next round is out (within about a second). The answer once it is drawn, by long
 * polls the server holds until then; a lost answer is asked again.
 */
export async function untilDrawn(ticketId) {
  for (let attempt = 0; ; attempt += 1) {
    try {
      const ticket = await api.ticket(ticketId, { wait: true });
      if (ticket.state !== "covered") return ticket;
    } catch (error) {
      if (!(error instanceof ApiError) || (error.status !== 0 && error.status < 500) || attempt > 20) {
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** Buy one ticket for one player intent (game, mode, sign), safe to retry after a failure. */
export async function buyTicket(game, mode, sign) {
  const intent = `${game}|${mode}|${sign || ""}`;
  const idempotencyKey = unsettledPurchases.get(intent) || newIdempotencyKey();
  unsettledPurchases.set(intent, idempotencyKey);
  try {
    const ticket = await api.buy(game, mode, sign, idempotencyKey);
    unsettledPurchases.delete(intent);
    return ticket;
  } catch (error) {
    const answered = error instanceof ApiError && error.status !== 0 && error.status < 500;
    if (answered) unsettledPurchases.delete(intent);
    throw error;
  }
}
