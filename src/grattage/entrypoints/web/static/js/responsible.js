// What every logged-in page shows for responsible gaming: the session clock in the header and
// the reality check, a modal the player must answer (« Continuer » or « Arrêter de jouer »).
//
// The server gives a check once per interval, on whichever answer comes when it is due (GET
// /api/me or a purchase: api.js fires "grattage:reality-check"); a page left open asks
// /api/me at the time the server named (`next_reality_check_at`), so the check appears even
// when the player does nothing.
import { api } from "./api.js";
import { formatEuros as formatEurosShort } from "./money.js";

const formatEuros = (cents) => formatEurosShort(cents, { alwaysDecimals: true }); // « 5,00 € »

const MINUTE = 60_000;
const OWED = "grattage.reality-check"; // localStorage: the check given and not yet answered
let watching = false;
let session = null; // this log-in's start, as GET /api/me gives it

// The server gives each check once. Kept on the device until the player answers it, a check
// survives a reload (which would otherwise dodge it) and shows in every tab of the session,
// not only in the one whose request happened to receive it.
function owe(check) {
  try {
    localStorage.setItem(OWED, JSON.stringify({ session, check }));
  } catch {
    // Storage refused (private mode): the check still shows in this tab.
  }
}

function owed() {
  try {
    const kept = JSON.parse(localStorage.getItem(OWED) || "null");
    return kept && kept.session === session ? kept.check : null;
  } catch {
    return null;
  }
}

function answered() {
  try {
    localStorage.removeItem(OWED);
  } catch {
    // Nothing kept, nothing to remove.
  }
}

/** « 12 min », « 1 h 05 ». */
export function formatDuration(minutes) {
  const whole = Math.max(0, Math.floor(minutes));
  if (whole < 60) return `${whole}\u00a0min`;
  return `${Math.floor(whole / 60)}\u00a0h\u00a0${String(whole % 60).padStart(2, "0")}`;
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function startClock(startedAt) {
  const clock = document.getElementById("session-clock");
  const started = new Date(startedAt).getTime();
  if (!clock || Number.isNaN(started)) return;
  const tick = () => {
    clock.textContent = `Session\u00a0: ${formatDuration((Date.now() - started) / MINUTE)}`;
  };
  tick();
  clock.hidden = false;
  setInterval(tick, 15_000);
}

function moneyLine(list, label, cents, className) {
  const term = element("dt", null, label);
  const value = element("dd", className, formatEuros(cents));
  list.append(term, value);
}

/** Tell the page's ticket (play.js) that play stands still, or goes on. */
function pausePlay(paused) {
  window.dispatchEvent(new CustomEvent("grattage:play-paused", { detail: { paused } }));
}

/** Close the check's modal as answered (here or in another tab). */
function closeAnswered(dialog) {
  dialog.dataset.answered = "true";
  dialog.close();
}

/** The check's modal; answered by a choice only. Escape does not dismiss it: its `cancel` is
 * refused, and since Chromium closes a modal anyway after a few refused Escapes (its guard
 * against pages that trap the user), a close that is not an answer opens it again. */
export function showRealityCheck(check) {
  document.getElementById("reality-check")?.remove();
  const dialog = element("dialog", "modal reality-check");
  dialog.id = "reality-check";
  dialog.setAttribute("aria-labelledby", "reality-check-title");
  const title = element("h2", null, "Point sur votre session de jeu");
  title.id = "reality-check-title";
  const played = element("p", "reality-time", `Vous jouez depuis ${formatDuration(check.minutes_played)}.`);
  const list = element("dl", "reality-money");
  moneyLine(list, "Mises de la session", check.stakes_cents);
  moneyLine(list, "Gains de la session", check.prizes_cents);
  if (check.net_spend_cents >= 0) moneyLine(list, "Dépense nette", check.net_spend_cents, "net");
  else moneyLine(list, "Gain net", -check.net_spend_cents, "net");
  const interval = check.interval_minutes === 1 ? "chaque minute" : `toutes les ${check.interval_minutes}\u00a0minutes`;
  const every = element("p", "hint", `Ce rappel revient ${interval} de jeu. Le jeu doit rester un plaisir.`);
  const actions = element("div", "modal-actions");
  const stop = element("button", "btn ghost", "Arrêter de jouer");
  stop.type = "button";
  stop.id = "reality-stop";
  const go = element("button", "btn primary", "Continuer");
  go.type = "button";
  go.id = "reality-continue";
  actions.append(stop, go);
  dialog.append(title, played, list, every, actions);
  dialog.addEventListener("cancel", (event) => event.preventDefault());
  go.addEventListener("click", () => {
    answered();
    closeAnswered(dialog);
  });
  dialog.addEventListener("close", () => {
    if (dialog.dataset.answered !== "true" && dialog.isConnected) {
      dialog.showModal(); // closed without an answer (Escape pressed again and again)
      go.focus();
      return;
    }
    dialog.remove();
    pausePlay(false);
  });
  stop.addEventListener("click", async () => {
    stop.disabled = true;
    try {
      await api.logOut();
    } catch {
      // Logged out already, or the server is away: the log-in page is where to go anyway.
    }
    answered(); // after the log-out: the other tabs then find the session over (watchSession)
    location.assign("/login.html");
  });
  document.body.append(dialog);
  dialog.showModal();
  go.focus();
  pausePlay(true);
}

/** Start the clock, show every check the server gives, and ask for the next when it is due. */
export function watchSession(me, refreshMe) {
  if (watching || !me) return;
  watching = true;
  session = me.session_started_at;
  startClock(me.session_started_at);
  window.addEventListener("grattage:reality-check", (event) => {
    owe(event.detail);
    showRealityCheck(event.detail);
  });
  window.addEventListener("storage", (event) => {
    if (event.key !== OWED) return;
    const check = owed();
    if (check) {
      showRealityCheck(check); // given to another tab of this session
      return;
    }
    const open = document.getElementById("reality-check");
    if (!open) return;
    closeAnswered(open); // answered in another tab: by « Continuer », or by a log-out
    refreshMe().catch((error) => {
      if (error?.status === 401) location.assign("/login.html"); // « Arrêter de jouer »
    });
  });
  const lookAt = (nextAt) => {
    // A few seconds late rather than early: the server decides, with its own clock.
    const wait = Math.max(5_000, new Date(nextAt).getTime() - Date.now() + 2_000);
    setTimeout(async () => {
      try {
        const fresh = await refreshMe();
        lookAt(fresh.next_reality_check_at);
      } catch (error) {
        if (error?.status === 401) return; // the session is over: nothing more to check
        lookAt(new Date(Date.now() + MINUTE).toISOString());
      }
    }, Math.min(wait, 2 ** 31 - 1));
  };
  if (me.next_reality_check_at) lookAt(me.next_reality_check_at);
  if (me.reality_check) owe(me.reality_check);
  const check = me.reality_check || owed();
  if (check) showRealityCheck(check);
  else answered(); // a check kept from an earlier log-in is not this session's
}
