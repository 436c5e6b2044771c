// One ticket being played: asks the server to reveal zones (one request at a time, batching
// what was scratched meanwhile), shows what the server revealed, keeps the locks in step with
// the server's `locked_zones`, runs Cash's inactivity timer, and reports the end.
import { api, untilDrawn } from "./api.js";

export class TicketPlay {
  /**
   * @param {object} options ticket, zones (Map zone id → ScratchZone), fillZone(zoneId, content,
   *   element), onChange(ticket), onFinished(ticket), onError(error), staggerMs (pause between
   *   zones in an animated reveal), inactivitySeconds (Cash only; null disables the timer),
   *   onInactivity()
   */
  constructor(options) {
    Object.assign(this, { staggerMs: 80, inactivitySeconds: null, onInactivity: () => {} }, options);
    this.pending = new Set();
    this.busy = false;
    this.finishedReported = false;
    this.inactivityTimer = null;
    this.disposed = false;
    this.drawing = null;
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
      this.apply(await api.reveal(this.ticket.id, zoneIds));
    } catch (error) {
      for (const zoneId of zoneIds) this.zones.get(zoneId)?.retry();
      await this.resync();
      this.onError(error);
    } finally {
      this.busy = false;
    }
    this.flush();
  }

  /** Reveal every remaining zone at once (« Tout découvrir », inactivity, or a resumed Auto). */
  async revealAll() {
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
      this.apply(await api.revealAll(this.ticket.id), { animate: true });
    } catch (error) {
      await this.resync();
      this.onError(error);
    }
  }

  /** After a failure, take the server's word for the ticket (it may have finished it itself). */
  async resync() {
    try {
      const ticket = await api.ticket(this.ticket.id);
      for (const zone of this.zones.values()) zone.retry();
      this.apply(ticket, { animate: true });
    } catch {
      // The caller reports the original error; nothing more to say here.
    }
  }

  activity() {
    if (this.inactivitySeconds === null || this.finished || this.disposed) return;
    clearTimeout(this.inactivityTimer);
    this.inactivityTimer = setTimeout(() => {
      this.onInactivity();
      this.revealAll();
    }, this.inactivitySeconds * 1000);
  }

  stopInactivity() {
    clearTimeout(this.inactivityTimer);
    this.inactivityTimer = null;
  }
}
