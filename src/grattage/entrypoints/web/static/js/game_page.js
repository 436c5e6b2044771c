// A game's page (/cash.html, /astro.html…): the flow every game shares — buying (Jouer, Auto,
// one purchase per intent), the reveal queue of the ticket in play, the result, resuming a
// ticket left unfinished or named in the address, replaying a finished one, errors. What
// differs (the zones and their drawing, Astro's sign picker, the win message) lives in the
// game's module of games.js, chosen by the page's `data-game`. Where tickets and the balance
// come from is the page's mode: the player's account, or the try mode's play money on the
// try pages (`data-mode="try"`, try_mode.js).
import { api, ApiError, buyTicket } from "./api.js";
import { Celebration } from "./celebration.js";
import { findGame, loadGames, ticketPage } from "./catalogue.js";
import { GAME_MODULES } from "./games.js";
import { formatEuros, formatPrice } from "./money.js";
import { TicketPlay } from "./play.js";
import { ProofPanel } from "./proof_panel.js";
import { sound } from "./sound.js";
import { TRY_MODE } from "./try_mode.js";
import { $, el, formatDate, handleError, notify, refreshBalance, startPage } from "./ui.js";

const DEFAULT_CONFIG = { inactivity_seconds: 10 };
// The result line is still empty when a ticket starts: the room its two lines will take.
const RESULT_ROOM_PX = 84;

/** The player's own account: real money, the proofs, the history page. */
const ACCOUNT_MODE = {
  api,
  buy: buyTicket,
  startPage,
  refreshBalance,
  loadGames,
  config: () => api.config(),
  proofs: true,
  historyPage: "/history.html",
  titlePrefix: "",
};

export class GamePage {
  /** @param {object} game the game's module (see games.js for what it provides)
   *  @param {object} mode where tickets and the balance come from (ACCOUNT_MODE, TRY_MODE) */
  constructor(game, mode = ACCOUNT_MODE) {
    this.game = game;
    this.mode = mode;
    this.config = DEFAULT_CONFIG;
    this.games = [];
    this.play = null;
    this.buying = false;
    this.proofPanel = new ProofPanel($("#proof-panel"));
    this.celebration = new Celebration();
  }

  /** What a scratch zone tells the page: scratched enough to reveal, or just scratched. */
  zoneHandlers() {
    return {
      onScratched: (zone) => this.play?.requestReveal(zone),
      onActivity: () => {
        sound.scratch();
        this.play?.scratching();
      },
    };
  }

  /** The sign of the ticket in play, if any (a game with a choice draws it on its zones). */
  get ticketChoice() {
    return this.play?.ticket?.sign ?? null;
  }

  setButtons({ playing }) {
    $("#play").disabled = playing || this.buying;
    $("#auto").disabled = playing || this.buying;
    // Only once there is a ticket to uncover: not while its purchase is in flight, nor while
    // a drawn sale's unit is still being drawn (the server would refuse it).
    const ticket = this.play && !this.play.finished ? this.play.ticket : null;
    $("#reveal-all").disabled = !playing || this.buying || !ticket || ticket.state === "covered";
    this.game.setButtons?.({ playing });
  }

  /** Where the keyboard goes when the button it was on is disabled (a purchase, a finish):
   * the ticket's first zone to scratch, or the button that buys the next ticket — never the
   * page's body, which would send a keyboard or screen-reader user back to the top. */
  keepFocus(target, { offTheTicket = false } = {}) {
    const active = document.activeElement;
    // ``offTheTicket``: the ticket has ended, a zone of it has nothing left to do — the focus
    // goes on, unless the player put it somewhere else (a link, the sound switch…).
    const lost = !active || active === document.body || active.disabled
      || (offTheTicket && Boolean(active.closest?.("#ticket")));
    if (lost && target) target.focus();
  }

  /** A ticket starts: if any of the game — Astro's sign line, the buttons, the ticket, the
   * result's room — is out of the window (the page is taller than a phone), scroll the game to
   * the top, just under a sticky header. games.css sizes the ticket so that the game then fits. */
  bringGameIntoView() {
    const first = $(".sign-picker") || $(".controls");
    const header = $(".topbar");
    const covered = header && ["sticky", "fixed"].includes(getComputedStyle(header).position)
      ? header.getBoundingClientRect().bottom
      : 0;
    const top = first.getBoundingClientRect().top;
    const bottom = $("#result").getBoundingClientRect().top + RESULT_ROOM_PX;
    if (top >= covered && bottom <= window.innerHeight) return;
    window.scrollBy({ top: top - covered - 4, behavior: "instant" });
  }

  /** The result; a win counts up, with its sound (celebration.js) — but a replay is shown as
   * it ended, at once and silently. */
  showResult(ticket, { replay = false } = {}) {
    const won = ticket.prize_cents > 0;
    const result = $("#result");
    result.dataset.prizeCents = String(ticket.prize_cents);
    result.className = `result ${won ? "won" : "lost"}`;
    $("#ticket").classList.toggle("won", won);
    this.celebration.show(result, this.game.winMessage(ticket), ticket.prize_cents, { replay });
    this.game.showResult?.(ticket);
  }

  clearResult() {
    this.celebration.cancel();
    const result = $("#result");
    result.textContent = "";
    result.className = "result";
    delete result.dataset.prizeCents;
    $("#ticket").classList.remove("won");
    this.game.clearResult?.();
  }

  /** Back to the specimen ticket (no ticket in play), e.g. when Astro's player picks a sign. */
  showSpecimen() {
    this.play?.dispose();
    this.play = null;
    this.clearResult();
    this.proofPanel.hide();
    $("#ticket").classList.add("specimen");
    this.game.buildZones(this, null, true);
  }

  startTicket(ticket, { replay = false } = {}) {
    this.clearResult();
    this.game.onTicket?.(this, ticket);
    $("#ticket").classList.remove("specimen");
    $("#ticket").dataset.ticketId = String(ticket.id);
    // The address names the ticket on screen, so a reload resumes (or replays) this one.
    window.history.replaceState(null, "", `${location.pathname}?ticket=${encodeURIComponent(ticket.id)}`);
    this.play?.dispose();
    this.setButtons({ playing: true });
    const inactivitySeconds = this.game.revealsAfterInactivity && ticket.mode === "play"
      ? this.config.inactivity_seconds
      : null;
    // The play exists before its zones: painting a zone may ask for the ticket's choice.
    this.play = new TicketPlay({
      api: this.mode.api,
      ticket,
      zones: new Map(),
      fillZone: (zoneId, content, element) => this.game.fillZone(this, zoneId, content, element),
      staggerMs: this.game.staggerMs,
      inactivitySeconds,
      onChange: (current) => this.game.onChange?.(this, current),
      onFinished: (current) => this.finished(current, { replay }),
      onInactivity: () => notify(`Découverte automatique après ${inactivitySeconds}\u00a0s sans grattage.`, "info"),
      onError: handleError,
    });
    this.play.zones = this.game.buildZones(this, ticket, false);
    this.showReplayBanner(ticket, replay);
    if (this.mode.proofs) this.proofPanel.show(ticket);
    this.play.apply(ticket, { animate: !replay && ticket.mode === "auto" });
    this.setButtons({ playing: !this.play.finished }); // now that there is a ticket to uncover
    if (ticket.state === "covered" && ticket.mode === "play") {
      // Drawn after its sale: the layer stays on (scratching waits) until the draw is in.
      const play = this.play;
      play.untilDrawn().then((drawn) => {
        play.apply(drawn);
        if (this.play === play) this.setButtons({ playing: !play.finished });
      }, handleError);
    }
    if (!replay) this.bringGameIntoView(); // before the focus, which would scroll otherwise
    if (!replay && ticket.mode === "play") {
      this.keepFocus($("#ticket .zone:not(.revealed):not(.locked)"));
    }
    if (ticket.state !== "finished") {
      if (ticket.mode === "auto") this.play.revealAll(); // the server left it to the page
      else this.play.activity(); // the inactivity clock runs from the purchase on
    }
  }

  async finished(ticket, { replay = false } = {}) {
    // Another ticket only once this one's result is shown (all in this one task); the focus
    // first, so that a big-win screen gives it back to the button that buys the next ticket.
    this.setButtons({ playing: false });
    this.keepFocus(ticket.mode === "auto" ? $("#auto") : $("#play"), { offTheTicket: !replay });
    this.showResult(ticket, { replay });
    if (this.mode.proofs) this.proofPanel.finished(ticket);
    try {
      await this.mode.refreshBalance();
    } catch (error) {
      handleError(error);
    }
  }

  showReplayBanner(ticket, replay) {
    const banner = $("#replay-banner");
    banner.hidden = !replay;
    if (!replay) return;
    const how = ticket.mode === "auto" ? "en mode Auto" : "en grattant";
    banner.replaceChildren(
      `Ticket n° ${ticket.id} du ${formatDate(ticket.created_at)}, joué ${how} — tel qu'il s'est terminé. `,
      el("a", { href: this.mode.historyPage, text: "Retour à l'historique" }),
    );
  }

  async buy(mode) {
    if (this.buying) return; // one intent at a time: a double click buys one ticket
    if (this.game.readyToBuy && !this.game.readyToBuy()) return;
    this.buying = true;
    this.setButtons({ playing: true });
    notify("", "error", null, "#play-notice");
    try {
      const ticket = await this.mode.buy(this.game.name, mode, this.game.choice?.() ?? null);
      this.buying = false;
      this.startTicket(ticket);
      await this.mode.refreshBalance();
    } catch (error) {
      this.buying = false;
      this.setButtons({ playing: this.play !== null && !this.play.finished });
      handleError(error, "#play-notice");
    }
  }

  /** The ticket the address names (on its own game's page), else this game's unfinished one. */
  async openRequestedOrUnfinished() {
    const requested = new URLSearchParams(location.search).get("ticket");
    if (requested) {
      const ticket = await this.mode.api.ticket(requested);
      if (ticket.game !== this.game.name) {
        const page = ticketPage(this.games, ticket.game, requested);
        if (page) location.replace(page);
        return;
      }
      this.startTicket(ticket, { replay: ticket.state === "finished" });
      return;
    }
    try {
      const last = await this.mode.api.lastTicket();
      if (last.game === this.game.name && last.state !== "finished") {
        notify("Votre partie en cours a été reprise.", "info");
        this.startTicket(last);
      }
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404)) throw error;
    }
  }

  /** The block on sale's title, price and top prize, as GET /api/games sends them. */
  showGame(shown) {
    $("#game-title").textContent = shown.title;
    document.title = `${this.mode.titlePrefix}${shown.title} — Grattage`;
    $("#ticket").setAttribute("aria-label", `Ticket ${shown.title}`);
    $("#price").textContent = formatPrice(shown.price_cents);
    $("#top-prize").textContent = shown.top_prize_cents ? formatEuros(shown.top_prize_cents) : "—";
    // Said once: the real Astro's title already reads « … (tableau de lots reconstitué) ».
    if (shown.reconstruction && !/reconstitu/i.test(shown.title)) {
      $(".game-sub").append(" ", el("span", { class: "badge", text: "tableau de lots reconstitué" }));
    }
    if (shown.off_sale_reason === "table_unplayable") {
      notify("Ce jeu est indisponible : le tableau de lots du bloc en vente ne peut pas être joué.");
    } else if (!shown.on_sale) {
      notify("Ce jeu est épuisé pour le moment : plus aucun ticket n'est disponible.");
    }
  }

  async start() {
    sound.setUp($("#sound-toggle"));
    this.game.setUp?.(this);
    $("#play").addEventListener("click", () => this.buy("play"));
    $("#auto").addEventListener("click", () => this.buy("auto"));
    $("#reveal-all").addEventListener("click", () => this.play?.revealAll());
    // Astro's regulation (art. 4.3): in « Jouer » the player scratches each zone, and « Auto »
    // uncovers everything by itself, so its page offers no « Tout découvrir » at all.
    $("#reveal-all").hidden = this.game.offersRevealAll === false;
    this.game.buildZones(this, null, true);
    this.setButtons({ playing: false });
    const me = await this.mode.startPage();
    if (!me) return;
    try {
      [this.config, this.games] = await Promise.all([this.mode.config(), this.mode.loadGames()]);
      const shown = findGame(this.games, this.game.name);
      if (shown) this.showGame(shown);
      await this.openRequestedOrUnfinished();
    } catch (error) {
      handleError(error);
    }
  }
}

const game = GAME_MODULES[document.body.dataset.game];
if (game) new GamePage(game, document.body.dataset.mode === "try" ? TRY_MODE : ACCOUNT_MODE).start();
else notify("Ce jeu n'existe pas.");
