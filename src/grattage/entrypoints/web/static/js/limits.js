// « My limits and my play »: the weekly deposit and stake limits, self-exclusion, the last three
// months of play. In English for now (its French rebuild is a later issue); the API through
// api.js, amounts through money.js.
import { goToLogin, requester } from "./api.js";
import { formatEuros as euros, parseEuros } from "./money.js";

const $ = (id) => document.getElementById(id);

function flash(text, kind = "ok") {
  $("flash").textContent = text;
  $("flash").className = kind;
}

// Not logged in: log in, then come back here.
const call = requester(() => goToLogin());

function limitBlock(title, view) {
  const box = document.createElement("div");
  const head = document.createElement("p");
  head.textContent = `${title}: ${euros(view.spent_this_week_cents)} of ${euros(view.weekly_limit_cents)} this week (${euros(view.remaining_cents)} left)`;
  const meter = document.createElement("div");
  meter.className = "meter";
  const bar = document.createElement("div");
  const ratio = view.weekly_limit_cents ? Math.min(100, Math.round((view.spent_this_week_cents * 100) / view.weekly_limit_cents)) : 0;
  bar.style.width = `${ratio}%`; // a CSSOM property, which the CSP allows (a style attribute it would not)
  meter.append(bar);
  box.append(head, meter);
  if (view.pending) {
    const pending = document.createElement("p");
    pending.className = "muted";
    pending.textContent = `Raise to ${euros(view.pending.weekly_limit_cents)} from ${new Date(view.pending.effective_at).toLocaleString()}.`;
    box.append(pending);
  }
  return box;
}

async function load() {
  const limits = await call("GET", "/api/me/limits");
  const days = Math.round(limits.cooling_off_seconds / 86400);
  $("cooling").textContent = `${days} day${days === 1 ? "" : "s"}`;
  $("deposit-limit").replaceChildren(limitBlock("Deposits", limits.deposit));
  $("stake-limit").replaceChildren(limitBlock("Stakes", limits.stake));
  const exclusion = limits.exclusion;
  $("exclusion-state").hidden = !exclusion.excluded;
  $("exclusion-state").textContent = exclusion.permanent
    ? "You excluded yourself from play permanently."
    : exclusion.excluded ? `You excluded yourself from play until ${new Date(exclusion.until).toLocaleString()}.` : "";
  const activity = await call("GET", "/api/me/activity");
  const t = activity.totals;
  $("totals").textContent = `${activity.from} to ${activity.to}: deposited ${euros(t.deposits_cents)}, ${t.tickets} tickets, staked ${euros(t.stakes_cents)}, won ${euros(t.prizes_cents)}, net spend ${euros(t.net_spend_cents)}.`;
  $("days").replaceChildren(...activity.days.map((d) => {
    const tr = document.createElement("tr");
    for (const value of [d.day, euros(d.deposits_cents), String(d.tickets), euros(d.stakes_cents), euros(d.prizes_cents), euros(d.net_spend_cents)]) {
      const td = document.createElement("td");
      td.textContent = value;
      tr.append(td);
    }
    return tr;
  }));
}

$("limits-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  const body = {};
  for (const [field, key] of [["deposit", "deposit_weekly_cents"], ["stake", "stake_weekly_cents"]]) {
    if (form[field].value === "") continue;
    const cents = parseEuros(form[field].value);
    if (cents === null) {
      flash(`Not an amount in euros: ${form[field].value}`, "error");
      return;
    }
    body[key] = cents;
  }
  try {
    await call("PUT", "/api/me/limits", body);
    flash("Limits saved.");
    form.reset();
    await load();
  } catch (error) {
    flash(error.serverMessage || error.message, "error");
  }
});

$("exclusion-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const label = event.target.period.selectedOptions[0].textContent;
  if (!confirm(`Exclude yourself from play ${label === "permanently" ? "permanently" : "for " + label}? This cannot be undone.`)) return;
  try {
    await call("POST", "/api/me/exclusion", { period: event.target.period.value });
    flash("You are excluded from play.");
    await load();
  } catch (error) {
    flash(error.serverMessage || error.message, "error");
  }
});

load().catch((error) => flash(error.serverMessage || error.message, "error"));
