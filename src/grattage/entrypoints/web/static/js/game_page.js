// A game's page (/cash.html, /astro.html…): the flow every game shares — buying (Jouer, Auto,
// one purchase per intent), the reveal queue of the ticket in play, the result, resuming a
// ticket left unfinished or named in the address, replaying a finished one, errors. What
// differs (the zones and their drawing, Astro's sign picker, the win message) lives in the
// game's module of games.js, chosen by the page's `data-game`.
import { api, ApiError, buyTicket } from "./api.js";
import { findGame, loadGames, ticketPage } from "./catalogue.js";
import { GAME_MODULES } from "./games.js";
import { formatEuros, formatPrice } from "./money.js";
import { TicketPlay } from "./play.js";
import { ProofPanel } from "./proof_panel.js";
import { $, el, formatDate, handleError, notify, refreshBalance, startPage } from "./ui.js";

const DEFAULT_CONFIG = { inactivity_seconds: 10 };

export class GamePage {
  /** @param {object} game the game's module (see games.js for what it provides) */
  constructor(game) {
    this.game = game;
    this.config = DEFAULT_CONFIG;
    this.games = [];
    this.play = null;
    this.buying = false;
    this.proofPanel = new ProofPanel($("#proof-panel"));
  }

  /** What a scratch zone tells the page: scratched enough to reveal, or just scratched. */
  zoneHandlers() {
    return {
      onScratched: (zone) => this.play?.requestReveal(zone),
      onActivity: () => this.play?.activity(),
    };
  }

  /** The sign of the ticket in play, if any (a game with a choice draws it on its zones). */
  get ticketChoice() {
    return this.play?.ticket?.sign ?? null;
  }

  setButtons({ playing }) {
    $("#play").disabled = playing || this.buying;
    $("#auto").disabled = playing || this.buying;
    $("#reveal-all").disabled = !playing;
    this.game.setButtons?.({ playing });
  }

  showResult(ticket) {
    const won = ticket.prize_cents > 0;
    const result = $("#result");
    result.dataset.prizeCents = String(ticket.prize_cents);
    result.className = `result ${won ? "won" : "lost"}`;
    $("#ticket").classList.toggle("won", won);
    result.textContent = this.game.winMessage(ticket);
    this.game.showResult?.(ticket);
  }

  clearResult() {
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
      ticket,
      zones: new Map(),
      fillZone: (zoneId, content, element) => this.game.fillZone(this, zoneId, content, element),
      staggerMs: this.game.staggerMs,
      inactivitySeconds,
      onChange: (current) => this.game.onChange?.(this, current),
      onFinished: (current) => this.finished(current),
      onInactivity: () => notify(`Découverte automatique après ${inactivitySeconds} s sans grattage.`, "info"),
      onError: handleError,
    });
    this.play.zones = this.game.buildZones(this, ticket, false);
    this.showReplayBanner(ticket, replay);
    this.proofPanel.show(ticket);
    this.play.apply(ticket, { animate: !replay && ticket.mode === "auto" });
    if (ticket.state === "covered" && ticket.mode === "play") {
      // Drawn after its sale: the layer stays on (scratching waits) until the draw is in.
      const play = this.play;
      play.untilDrawn().then((drawn) => play.apply(drawn), handleError);
    }
    if (ticket.state !== "finished") {
      if (ticket.mode === "auto") this.play.revealAll(); // the server left it to the page
      else this.play.activity(); // the inactivity clock runs from the purchase on
    }
  }

  async finished(ticket) {
    this.showResult(ticket);
    this.proofPanel.finished(ticket);
    this.setButtons({ playing: false }); // another ticket only once this one's result is shown
    try {
      await refreshBalance();
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
      el("a", { href: "/history.html", text: "Retour à l'historique" }),
    );
  }

  async buy(mode) {
    if (this.buying) return; // one intent at a time: a double click buys one ticket
    if (this.game.readyToBuy && !this.game.readyToBuy()) return;
    this.buying = true;
    this.setButtons({ playing: true });
    notify("");
    try {
      const ticket = await buyTicket(this.game.name, mode, this.game.choice?.() ?? null);
      this.buying = false;
      this.startTicket(ticket);
      await refreshBalance();
    } catch (error) {
      this.buying = false;
      this.setButtons({ playing: this.play !== null && !this.play.finished });
      handleError(error);
    }
  }

  /** The ticket the address names (on its own game's page), else this game's unfinished one. */
  async openRequestedOrUnfinished() {
    const requested = new URLSearchParams(location.search).get("ticket");
    if (requested) {
      const ticket = await api.ticket(requested);
      if (ticket.game !== this.game.name) {
        const page = ticketPage(this.games, ticket.game, requested);
        if (page) location.replace(page);
        return;
      }
      this.startTicket(ticket, { replay: ticket.state === "finished" });
      return;
    }
    try {
      const last = await api.lastTicket();
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
    document.title = `${shown.title} — Grattage`;
    $("#ticket").setAttribute("aria-label", `Ticket ${shown.title}`);
    $("#price").textContent = formatPrice(shown.price_cents);
    $("#top-prize").textContent = shown.top_prize_cents ? formatEuros(shown.top_prize_cents) : "—";
    if (shown.reconstruction) {
      $(".game-sub").append(" ", el("span", { class: "badge", text: "tableau de lots reconstitué" }));
    }
    if (shown.off_sale_reason === "table_unplayable") {
      notify("Ce jeu est indisponible : le tableau de lots du bloc en vente ne peut pas être joué.");
    } else if (!shown.on_sale) {
      notify("Ce jeu est épuisé pour le moment : plus aucun ticket n'est disponible.");
    }
  }

  async start() {
    this.game.setUp?.(this);
    $("#play").addEventListener("click", () => this.buy("play"));
    $("#auto").addEventListener("click", () => this.buy("auto"));
    $("#reveal-all").addEventListener("click", () => this.play?.revealAll());
    this.game.buildZones(this, null, true);
    this.setButtons({ playing: false });
    const me = await startPage();
    if (!me) return;
    try {
      [this.config, this.games] = await Promise.all([api.config(), loadGames()]);
      const shown = findGame(this.games, this.game.name);
      if (shown) this.showGame(shown);
      await this.openRequestedOrUnfinished();
    } catch (error) {
      handleError(error);
    }
  }
}

const game = GAME_MODULES[document.body.dataset.game];
if (game) new GamePage(game).start();
else notify("Ce jeu n'existe pas.");
