// « Mes limites de jeu »: the weekly deposit and stake limits, self-exclusion and the last three
// months of play, in French, on the site's header and style. Every message appears next to the
// form that caused it (a phone would not show a message at the top of the page).
import { api, ApiError } from "./api.js";
import { formatEuros as formatEurosShort, parseEuros } from "./money.js";

const formatEuros = (cents) => formatEurosShort(cents, { alwaysDecimals: true }); // « 5,00 € »
import { $, el, formatDay, formatMoment, handleError, startPage } from "./ui.js";

const PERIODS = {
  "7d": "pendant 7 jours",
  "30d": "pendant 30 jours",
  "6m": "pendant 6 mois",
  permanent: "définitivement",
};

let current = null; // the last GET /api/me/limits answer

/** A cooling-off in the unit a player counts it in: « 7 jours », « 48 h », « 2 min ». */
export function formatDelay(seconds) {
  const unit = (count, word) => `${count}\u00a0${word}${count > 1 && !word.endsWith("h") ? "s" : ""}`;
  if (seconds >= 86400 && seconds % 86400 === 0) return unit(seconds / 86400, "jour");
  if (seconds >= 3600 && seconds % 3600 === 0) return unit(seconds / 3600, "h");
  if (seconds >= 60) return unit(Math.round(seconds / 60), "min").replace(/mins$/, "min");
  return unit(seconds, "seconde");
}

function say(id, text, kind = "success") {
  const message = $(id);
  message.textContent = text;
  message.className = `form-message ${kind}`;
  message.hidden = !text;
}

/** One limit: what was used this week, what is left, the raise to come with its date. */
function limitView(title, noun, view) {
  const used = Math.min(100, view.weekly_limit_cents ? Math.round((view.spent_this_week_cents * 100) / view.weekly_limit_cents) : 0);
  const bar = el("div");
  bar.style.width = `${used}%`; // a CSSOM property, which the CSP allows (a style attribute it would not)
  const meter = el("div", { class: "meter", role: "img", "aria-label": `${used}\u00a0% de la limite utilisée` }, bar);
  const parts = [
    el("h3", { text: title }),
    el("p", { class: "limit-line" },
      el("strong", { text: formatEuros(view.weekly_limit_cents) }), " par semaine\u00a0: ",
      `${formatEuros(view.spent_this_week_cents)} ${noun} cette semaine, `,
      el("strong", { class: "limit-left", text: `il vous reste ${formatEuros(view.remaining_cents)}` }), "."),
    meter,
  ];
  if (view.pending) {
    parts.push(el("p", { class: "pending", text:
      `Hausse demandée à ${formatEuros(view.pending.weekly_limit_cents)} par semaine\u00a0: elle prendra effet le ${formatMoment(view.pending.effective_at)}.` }));
  }
  return parts;
}

function showExclusion(exclusion) {
  const box = $("#exclusion-state");
  box.hidden = !exclusion.excluded;
  box.textContent = !exclusion.excluded ? "" : exclusion.permanent
    ? "Vous vous êtes exclu du jeu définitivement. Vous ne pouvez plus jouer ni déposer."
    : `Vous êtes exclu du jeu jusqu'au ${formatMoment(exclusion.until)}. Vous ne pouvez ni jouer ni déposer d'ici là.`;
  $("#exclusion-section").hidden = exclusion.excluded;
}

async function load() {
  current = await api.limits();
  $("#cooling").textContent = formatDelay(current.cooling_off_seconds);
  $("#deposit-limit").replaceChildren(...limitView("Dépôts", "déposés", current.deposit));
  $("#stake-limit").replaceChildren(...limitView("Mises", "misés", current.stake));
  $("#deposit-range").textContent = `De 0,01\u00a0€ à ${formatEuros(current.deposit.max_cents)}.`;
  $("#stake-range").textContent = `De 0,01\u00a0€ à ${formatEuros(current.stake.max_cents)}.`;
  showExclusion(current.exclusion);
  const activity = await api.playHistory();
  const t = activity.totals;
  $("#totals").textContent = `Du ${formatDay(activity.from)} au ${formatDay(activity.to)}\u00a0: ${formatEuros(t.deposits_cents)} déposés, ${t.tickets} ticket${t.tickets > 1 ? "s" : ""}, ${formatEuros(t.stakes_cents)} misés, ${formatEuros(t.prizes_cents)} gagnés, dépense nette ${formatEuros(t.net_spend_cents)}.`;
  $("#days").replaceChildren(...activity.days.map((d) => el("tr", {},
    el("th", { scope: "row", text: formatDay(d.day) }),
    ...[formatEuros(d.deposits_cents), String(d.tickets), formatEuros(d.stakes_cents), formatEuros(d.prizes_cents), formatEuros(d.net_spend_cents)]
      .map((value) => el("td", { text: value })))));
}

/** What the form asks for, in cents, or a French sentence saying what is wrong. */
function readLimits(form) {
  const body = {};
  for (const [field, key, label] of [["deposit", "deposit_weekly_cents", "dépôts"], ["stake", "stake_weekly_cents", "mises"]]) {
    const text = form[field].value.trim();
    if (text === "") continue;
    const cents = parseEuros(text);
    const max = current[field].max_cents;
    if (cents === null) {
      return { error: `La limite de ${label} doit être un montant en euros, avec au plus deux décimales, par exemple 50 ou 12,50.`, field };
    }
    if (cents < 1 || cents > max) {
      return { error: `La limite de ${label} doit être de 0,01\u00a0€ à ${formatEuros(max)}.`, field };
    }
    body[key] = cents;
  }
  return Object.keys(body).length ? { body } : { error: "Indiquez au moins une nouvelle limite.", field: "deposit" };
}

function describeSaved(before, after) {
  const parts = [];
  for (const [kind, label] of [["deposit", "dépôts"], ["stake", "mises"]]) {
    const then = before[kind];
    const now = after[kind];
    if (now.pending && (!then.pending || then.pending.weekly_limit_cents !== now.pending.weekly_limit_cents)) {
      parts.push(`La hausse de votre limite de ${label} à ${formatEuros(now.pending.weekly_limit_cents)} prendra effet le ${formatMoment(now.pending.effective_at)}.`);
    } else if (now.weekly_limit_cents !== then.weekly_limit_cents) {
      parts.push(`Votre limite de ${label} est maintenant de ${formatEuros(now.weekly_limit_cents)} par semaine.`);
    }
  }
  return parts.join(" ") || "Vos limites sont enregistrées.";
}

$("#limits-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  const asked = readLimits(form);
  if (asked.error) {
    say("#limits-message", asked.error, "error");
    form[asked.field].focus();
    return;
  }
  const button = $("#limits-submit");
  button.disabled = true;
  try {
    const before = current;
    const after = await api.setLimits(asked.body);
    form.reset();
    await load();
    say("#limits-message", describeSaved(before, after));
  } catch (error) {
    if (error instanceof ApiError && !error.sessionExpired) say("#limits-message", error.message, "error");
    else handleError(error);
  } finally {
    button.disabled = false;
  }
});

const confirmDialog = $("#exclusion-confirm");

$("#exclusion-form").addEventListener("submit", (event) => {
  event.preventDefault();
  say("#exclusion-message", "");
  $("#exclusion-confirm-text").textContent = `Vous allez vous exclure du jeu ${PERIODS[event.target.period.value]}.`;
  confirmDialog.showModal();
  $("#exclusion-cancel").focus(); // the safe choice first
});

$("#exclusion-cancel").addEventListener("click", () => {
  confirmDialog.close();
  $("#exclusion-submit").focus();
});

$("#exclusion-confirmed").addEventListener("click", async () => {
  const period = $("#exclusion-period").value;
  const button = $("#exclusion-confirmed");
  button.disabled = true;
  try {
    const exclusion = await api.exclude(period);
    confirmDialog.close();
    showExclusion(exclusion);
    // The exclusion ended every session of the account (docs/api.md): say so, and where to go.
    $("#exclusion-state").append(" Vous êtes maintenant déconnecté.");
    $("#exclusion-logged-out").hidden = false;
    $("#exclusion-state").focus();
  } catch (error) {
    confirmDialog.close();
    if (error instanceof ApiError && !error.sessionExpired) say("#exclusion-message", error.message, "error");
    else handleError(error);
  } finally {
    button.disabled = false;
  }
});

(async () => {
  if (!(await startPage())) return;
  try {
    await load();
  } catch (error) {
    handleError(error);
  }
})();
