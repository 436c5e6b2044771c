// What every page shares: the balance in the header, the notice area, log-out, error handling.
import { api, ApiError, goToLogin } from "./api.js";
import { formatEuros } from "./money.js";
import { watchSession } from "./responsible.js";
import { keepFrenchTypography } from "./typography.js";

keepFrenchTypography(); // every player page imports this module

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
export function notify(text, kind = "error", action = null, where = "#notice") {
  const notice = $(where); // a form's own message area, next to the control that caused it
  if (where !== "#notice") notify(""); // one message at a time: none left at the top
  if (!notice) return;
  notice.textContent = text;
  if (text && action) notice.append(el("a", { href: action.href, text: action.label }));
  notice.className = `notice ${kind}`;
  notice.hidden = !text;
  // A form's message is for the player who just used it: bring it into sight if the page
  // moved meanwhile (the lobby's cards can arrive and push the form down on a phone).
  if (text && where !== "#notice" && typeof notice.scrollIntoView === "function") {
    notice.scrollIntoView({ block: "nearest" });
  }
}

/** Run `change` (which inserts content above `section`) without moving `section` on screen
 * when the player is using it — focus inside, or a message of its own shown — as the
 * browser's scroll anchoring would, which does nothing while the page is at its top. */
export async function keepInSight(section, change) {
  const inUse = section && (section.contains(document.activeElement) || section.querySelector(".notice:not([hidden])"));
  const before = inUse ? section.getBoundingClientRect().top : null;
  await change();
  if (before !== null) window.scrollBy(0, section.getBoundingClientRect().top - before);
}

/** Every failure lands here: an expired session goes back to log-in, the rest is explained. */
export function handleError(error, where = "#notice") {
  if (error instanceof ApiError && error.sessionExpired) {
    notify("Votre session a expiré. Redirection vers la connexion…");
    setTimeout(goToLogin, 900);
    return;
  }
  if (error instanceof ApiError && error.status === 0) {
    notify("Connexion au serveur impossible. Vérifiez votre réseau et réessayez.", "error", null, where);
    return;
  }
  const actions = {
    insufficient_balance: { href: "/#deposit-title", label: "Faire un dépôt" },
    limit_reached: { href: "/limits.html", label: "Voir mes limites" },
  };
  const action = error instanceof ApiError ? actions[error.code] || null : null;
  notify(error instanceof ApiError ? error.message : "Une erreur inattendue est survenue.", "error", action, where);
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
  // Breakable before « @ » and each dot, not in the middle of a word.
  if (email) email.replaceChildren(...me.email.split(/(?=[@.])/).flatMap((part, i) => (i ? [document.createElement("wbr"), part] : [part])));
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
    const me = await refreshBalance();
    watchSession(me, refreshBalance);
    return me;
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

const MOMENT_FORMAT = new Intl.DateTimeFormat("fr-FR", {
  weekday: "long", day: "numeric", month: "long", year: "numeric", hour: "2-digit", minute: "2-digit",
});

/** « jeudi 10 décembre 2026 à 09:42 »: when a limit's raise or an exclusion's end comes. */
export function formatMoment(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso) : MOMENT_FORMAT.format(date);
}

/** A calendar day « 2026-12-03 » (as the API sends days) → « 03/12/2026 ». */
export function formatDay(day) {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(String(day));
  return match ? `${match[3]}/${match[2]}/${match[1]}` : String(day);
}
