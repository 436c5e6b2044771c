// What every page shares: the balance in the header, the notice area, log-out, error handling.
import { api, ApiError, goToLogin } from "./api.js";
import { formatEuros } from "./money.js";

export const $ = (selector, root = document) => root.querySelector(selector);

/** Build an element: el("p", {class: "x", text: "…"}, child, …). */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "text") node.textContent = value;
    else if (name === "html") node.innerHTML = value;
    else if (name === "class") node.className = value;
    else node.setAttribute(name, value === true ? "" : value);
  }
  node.append(...children.filter((child) => child !== null && child !== undefined));
  return node;
}

/**
 * Show a message in the page's notice area (read aloud: the area is a live region), with an
 * optional link to what solves the problem.
 */
export function notify(text, kind = "error", action = null) {
  const notice = $("#notice");
  if (!notice) return;
  notice.textContent = text;
  if (text && action) notice.append(el("a", { href: action.href, text: action.label }));
  notice.className = `notice ${kind}`;
  notice.hidden = !text;
}

/** Every failure lands here: an expired session goes back to log-in, the rest is explained. */
export function handleError(error) {
  if (error instanceof ApiError && error.sessionExpired) {
    notify("Votre session a expiré. Redirection vers la connexion…");
    setTimeout(goToLogin, 900);
    return;
  }
  if (error instanceof ApiError && error.status === 0) {
    notify("Connexion au serveur impossible. Vérifiez votre réseau et réessayez.");
    return;
  }
  const action = error instanceof ApiError && error.code === "insufficient_balance"
    ? { href: "/#deposit-title", label: "Faire un dépôt" }
    : null;
  notify(error instanceof ApiError ? error.message : "Une erreur inattendue est survenue.", "error", action);
  if (!(error instanceof ApiError)) console.error(error);
}

/** Show the balance the server holds; returns the `me` answer (or null when logged out). */
export async function refreshBalance() {
  const me = await api.me();
  const balance = $("#balance");
  if (balance) {
    balance.textContent = formatEuros(me.balance_cents, { alwaysDecimals: true });
    balance.dataset.cents = String(me.balance_cents);
  }
  const email = $("#player-email");
  if (email) email.textContent = me.email;
  return me;
}

/** Header wiring common to the logged-in pages; resolves to `me`, or redirects to log-in. */
export async function startPage() {
  const logout = $("#logout");
  if (logout) {
    logout.addEventListener("click", async () => {
      try {
        await api.logOut();
      } catch {
        // Logged out already, or the server is away: the log-in page is the right place anyway.
      }
      location.assign("/login.html");
    });
  }
  try {
    return await refreshBalance();
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) goToLogin();
    else handleError(error);
    return null;
  }
}

const DATE_FORMAT = new Intl.DateTimeFormat("fr-FR", { dateStyle: "short", timeStyle: "short" });

export function formatDate(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : DATE_FORMAT.format(date);
}
