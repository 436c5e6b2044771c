// The one door to the server (docs/api.md). Every request carries the session cookie and the
// CSRF header; every failure becomes an ApiError with a French message a player can read.

const FRENCH_MESSAGES = {
  insufficient_balance: "Solde insuffisant : faites un dépôt pour jouer.",
  sold_out: "Ce jeu est épuisé pour le moment : plus aucun ticket n'est disponible.",
  idempotency_conflict: "Cette demande a déjà été envoyée autrement. Rechargez la page.",
  limit_reached: "Vous avez atteint une limite de jeu ou de dépôt.",
  already_exists: "Cette inscription ne peut pas être acceptée : cette adresse ou cette personne a déjà un compte ou ne peut pas en ouvrir. Connectez-vous, ou contactez le support.",
  account_locked: "Compte verrouillé après trop d'essais. Réessayez plus tard.",
  self_excluded: "Vous vous êtes exclu du jeu : impossible de jouer.",
  nationally_excluded: "Vous êtes inscrit au fichier des interdits de jeux (ANJ) : aucun compte ne peut être ouvert ni utilisé.",
  unauthorized: "Votre session a expiré. Reconnectez-vous.",
  invalid_choice: "Choisissez d'abord un signe.",
  zone_not_revealable: "Cette zone ne peut pas encore être grattée.",
  not_found: "Introuvable : ce ticket n'existe pas ou n'est pas à vous.",
  unavailable: "Le service est momentanément indisponible. Réessayez dans un instant.",
};

const STATUS_MESSAGES = {
  401: FRENCH_MESSAGES.unauthorized,
  403: "Action non autorisée.",
  404: FRENCH_MESSAGES.not_found,
  409: "Action impossible dans l'état actuel. Réessayez.",
  422: "Données invalides : vérifiez votre saisie.",
  503: FRENCH_MESSAGES.unavailable,
};

export class ApiError extends Error {
  constructor(status, code, serverMessage) {
    super(FRENCH_MESSAGES[code] || STATUS_MESSAGES[status] || "Une erreur est survenue. Réessayez.");
    this.status = status;
    this.code = code;
    this.serverMessage = serverMessage;
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
    throw new ApiError(response.status, payload?.error || "error", payload?.message || "");
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
  revealAll: (ticketId) => request("POST", `/api/tickets/${ticketId}/reveal`, { body: { all: true } }),
  ticket: (ticketId, { wait = false } = {}) =>
    request("GET", `/api/tickets/${ticketId}${wait ? "?wait=1" : ""}`),
  history: (before) =>
    request("GET", `/api/me/tickets?limit=20${before ? `&before=${encodeURIComponent(before)}` : ""}`),
  lastTicket: () => request("GET", "/api/me/tickets/last"),
  proof: (ticketId) => request("GET", `/api/tickets/${ticketId}/proof`),
  logKey: () => request("GET", "/api/log/key"),
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
