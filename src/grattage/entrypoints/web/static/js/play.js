// One ticket being played: asks the server to reveal zones (one request at a time, batching
// what was scratched meanwhile), shows what the server revealed, keeps the locks in step with
// the server's `locked_zones`, runs Cash's inactivity timer, tells the server the player is
// scratching, and reports the end.
import { api, untilDrawn } from "./api.js";

// The server counts a ticket idle from its last action; without these reports a slow scratch
// that reveals nothing for a while would be finished under the player's pointer. One every
// 2 s is plenty against a delay of several seconds, and the server writes at most one a second.
// The scratch that comes within 2 s of a report is reported at the end of those 2 s, so the
// server's last action is never earlier than the page's and the page's own timer comes first.
const REPORT_EVERY_MS = 2000;

export class TicketPlay {
  /**
   * @param {object} options ticket, zones (Map zone id → ScratchZone), fillZone(zoneId, content,
   *   element), onChange(ticket), onFinished(ticket), onError(error), staggerMs (pause between
   *   zones in an animated reveal), inactivitySeconds (Cash only; null disables the timer),
   *   onInactivity(), api (what reveal, revealAll, activity and ticket are asked of: the
   *   player's API by default, the try mode's play money on a try page)
   */
  constructor(options) {
    Object.assign(this, { api, staggerMs: 80, inactivitySeconds: null, onInactivity: () => {} }, options);
    this.pending = new Set();
    this.busy = false;
    this.finishedReported = false;
    this.inactivityTimer = null;
    this.reportTimer = null;
    this.reportPending = false;
    this.disposed = false;
    this.drawing = null;
    // While the platform's own modal (the reality check) keeps the player from scratching,
    // the inactivity clock stands still on both sides: see pause().
    this.held = null;
    this.onPaused = (event) => (event.detail?.paused ? this.pause() : this.resume());
    window.addEventListener("grattage:play-paused", this.onPaused);
    // A ticket resumed after a reload may start under a reality check already up.
    if (document.querySelector("dialog#reality-check[open]")) queueMicrotask(() => this.pause());
  }

  /**
   * A covered ticket (sold, its unit not drawn yet) shows its scratch layer at once; what is
   * scratched meanwhile waits for the draw — the layer covers it — then is revealed.
   */
  untilDrawn() {
    if (!this.drawing) {
      this.drawing = this.ticket.state !== "covered"
        ? Promise.resolve(this.ticket)
        : untilDrawn(this.ticket.id);
    }
    return this.drawing;
  }

  /** A new ticket replaces this one: late answers and timers of this one must not touch it. */
  dispose() {
    this.disposed = true;
    this.stopInactivity();
    clearTimeout(this.reportTimer);
    clearInterval(this.held);
    window.removeEventListener("grattage:play-paused", this.onPaused);
    this.pending.clear();
  }

  get finished() {
    return this.ticket.state === "finished";
  }

  /** Show what a ticket answer reveals. `animate` wipes the new zones off one after the other. */
  apply(ticket, { animate = false } = {}) {
    if (this.disposed) return;
    this.ticket = ticket;
    let order = 0;
    for (const [zoneId, zone] of this.zones) {
      if (zone.state === "revealed") continue;
      if (Object.hasOwn(ticket.revealed || {}, zoneId)) {
        const content = ticket.revealed[zoneId];
        const scratchedByHand = zone.state === "requested" && zone.touched;
        zone.show((element) => this.fillZone(zoneId, content, element), {
          effect: animate ? "wipe" : scratchedByHand ? "fade" : "none",
          delay: animate ? order * this.staggerMs : 0,
        });
        order += 1;
      }
    }
    const locked = new Set(ticket.locked_zones || []);
    for (const [zoneId, zone] of this.zones) {
      if (zone.state !== "revealed") zone.setLocked(locked.has(zoneId));
    }
    this.onChange(ticket);
    if (this.finished) {
      this.stopInactivity();
      if (!this.finishedReported) {
        this.finishedReported = true;
        // Let the wipe animation end before the result message appears.
        const wait = animate ? order * this.staggerMs + 450 : 0;
        setTimeout(() => {
          if (!this.disposed) this.onFinished(ticket);
        }, wait);
      }
    }
  }

  requestReveal(zone) {
    if (this.finished) return;
    this.pending.add(zone.zoneId);
    this.flush();
  }

  async flush() {
    if (this.busy || this.pending.size === 0 || this.disposed) return;
    this.busy = true;
    try {
      await this.untilDrawn();
    } catch (error) {
      this.busy = false;
      this.onError(error);
      return;
    }
    const zoneIds = [...this.pending];
    this.pending.clear();
    if (this.disposed || zoneIds.length === 0) {
      this.busy = false;
      return;
    }
    try {
      this.apply(await this.api.reveal(this.ticket.id, zoneIds));
    } catch (error) {
      for (const zoneId of zoneIds) this.zones.get(zoneId)?.retry();
      await this.resync();
      this.onError(error);
    } finally {
      this.busy = false;
    }
    this.flush();
  }

  /**
   * Reveal every remaining zone at once (« Tout découvrir », inactivity, or a resumed Auto);
   * `byInactivity`: the inactivity timer did, and the server records it so (`finished_by`).
   */
  async revealAll({ byInactivity = false } = {}) {
    if (this.finished || this.disposed) return;
    this.stopInactivity();
    for (const zone of this.zones.values()) if (zone.state === "covered") zone.state = "requested";
    try {
      const drawn = await this.untilDrawn(); // a covered ticket: the wipe starts once drawn
      if (this.disposed) return;
      if (drawn.state === "finished") {
        this.apply(drawn, { animate: true }); // Auto: the server finished it at its draw
        return;
      }
      this.apply(await this.api.revealAll(this.ticket.id, { inactivity: byInactivity }), { animate: true });
    } catch (error) {
      await this.resync();
      this.onError(error);
    }
  }

  /** After a failure, take the server's word for the ticket (it may have finished it itself). */
  async resync() {
    try {
      const ticket = await this.api.ticket(this.ticket.id);
      for (const zone of this.zones.values()) zone.retry();
      this.apply(ticket, { animate: true });
    } catch {
      // The caller reports the original error; nothing more to say here.
    }
  }

  /** The player scratched a zone (pointer or key): the clocks of both sides start again. */
  scratching() {
    this.activity();
    this.reportActivity();
  }

  reportActivity() {
    if (this.finished || this.disposed || this.ticket.state !== "playing") return;
    if (this.reportTimer !== null) {
      this.reportPending = true; // sent when the 2 s since the last report are over
      return;
    }
    this.reportPending = false;
    // Nothing to tell the player if it fails: at worst the server finishes the ticket after
    // its delay, and the next reveal's answer shows it finished.
    this.api.activity(this.ticket.id).catch(() => {});
    this.reportTimer = setTimeout(() => {
      this.reportTimer = null;
      if (this.reportPending) this.reportActivity();
    }, REPORT_EVERY_MS);
  }

  /** The reality check is up: the player cannot scratch, which is not inactivity. The page's
   * timer stops, and the server is told the ticket is held (the activity report, every 2 s)
   * so that its own delay does not finish the ticket behind the modal either. */
  pause() {
    if (this.inactivitySeconds === null || this.finished || this.disposed || this.held) return;
    this.stopInactivity();
    const hold = () => {
      if (this.finished || this.disposed || this.ticket.state !== "playing") return;
      this.api.activity(this.ticket.id).catch(() => {});
    };
    hold();
    // Well within the server's delay, however short an operator set it.
    this.held = setInterval(hold, Math.min(REPORT_EVERY_MS, this.inactivitySeconds * 400));
  }

  /** The modal is answered: the player has the whole delay again from now. */
  resume() {
    if (this.held === null) return;
    clearInterval(this.held);
    this.held = null;
    this.scratching();
  }

  activity() {
    if (this.inactivitySeconds === null || this.finished || this.disposed || this.held) return;
    clearTimeout(this.inactivityTimer);
    this.inactivityTimer = setTimeout(() => {
      this.onInactivity();
      this.revealAll({ byInactivity: true });
    }, this.inactivitySeconds * 1000);
  }

  stopInactivity() {
    clearTimeout(this.inactivityTimer);
    this.inactivityTimer = null;
  }
}
