// A scratchable zone: a canvas coating over an (empty) content box. Scratching erases the
// coating; once more than `threshold` of it is gone the zone asks to be revealed. The content
// is only filled in by `show()`, i.e. after the server has revealed it.

const CLEARED_ALPHA = 128;
const SAMPLE_STRIDE = 3; // check one pixel in 3×3: plenty to estimate the cleared share

function insideEllipse(x, y, width, height) {
  const dx = (x - width / 2) / (width / 2);
  const dy = (y - height / 2) / (height / 2);
  return dx * dx + dy * dy <= 1;
}

/** A brushed-metal coating with an optional drawing on top (painted by `decorate`). */
export function paintMetal(ctx, width, height, { tint = "silver", decorate } = {}) {
  const stops = tint === "gold"
    ? ["#f7e08a", "#c99a2e", "#fff2b8", "#b7811f", "#f1d373"]
    : ["#eef1f5", "#a9b0ba", "#f8fafc", "#8f97a3", "#dde2e8"];
  const gradient = ctx.createLinearGradient(0, 0, width, height);
  stops.forEach((color, i) => gradient.addColorStop(i / (stops.length - 1), color));
  ctx.globalCompositeOperation = "source-over";
  ctx.fillStyle = gradient;
  ctx.fillRect(0, 0, width, height);
  // Fine brushed lines and grain, so it reads as a metallic scratch layer.
  ctx.globalAlpha = 0.18;
  for (let y = 0; y < height; y += 2) {
    ctx.fillStyle = y % 4 ? "#ffffff" : "#6b7280";
    ctx.fillRect(0, y, width, 1);
  }
  ctx.globalAlpha = 0.25;
  for (let i = 0; i < (width * height) / 60; i += 1) {
    ctx.fillStyle = i % 2 ? "#ffffff" : "#4b5563";
    ctx.fillRect(Math.random() * width, Math.random() * height, 1, 1);
  }
  ctx.globalAlpha = 1;
  if (decorate) decorate(ctx, width, height);
}

export class ScratchZone {
  /**
   * @param {HTMLElement} element the zone box; its `.zone-content` child receives the content
   * @param {object} options zoneId, label (spoken name), paint(ctx, w, h), onScratched(zone),
   *   onActivity(), threshold (share of the coating to clear before asking to reveal), round,
   *   hitArea (the square a round zone sits in: see below)
   */
  constructor(element, {
    zoneId, label, paint, onScratched, onActivity = () => {}, threshold = 0.5, round = false,
    hitArea = element,
  }) {
    this.element = element;
    this.round = round; // a disc: only the inscribed circle counts when measuring
    // Where a scratch may start. A round zone's own box is clipped to its circle, for pointers
    // too: a finger landing in the corner of its square would hit the ticket and scroll the
    // page instead. So a round zone sits in a square `hitArea` that takes the pointer.
    this.hitArea = hitArea;
    this.zoneId = zoneId;
    this.label = label;
    this.paint = paint;
    this.onScratched = onScratched;
    this.onActivity = onActivity;
    this.threshold = threshold;
    this.state = "covered"; // covered → requested → revealed
    this.locked = false;
    this.touched = false;
    this.lastPoint = null;
    this.measurePending = false;

    element.classList.add("zone");
    element.dataset.zone = zoneId;
    element.tabIndex = 0;
    element.setAttribute("role", "button");
    element.setAttribute("aria-label", `${label} : à gratter (Entrée pour découvrir)`);

    this.canvas = document.createElement("canvas");
    this.canvas.className = "scratch-cover";
    this.canvas.setAttribute("aria-hidden", "true");
    element.append(this.canvas);
    this.ctx = this.canvas.getContext("2d", { willReadFrequently: true });
    this.repaint();
    this.resizeObserver = new ResizeObserver(() => {
      if (!this.touched && this.state === "covered") this.repaint();
    });
    this.resizeObserver.observe(element);

    hitArea.classList.add("scratch-target");
    hitArea.addEventListener("pointerdown", (event) => this.start(event));
    hitArea.addEventListener("pointermove", (event) => this.move(event));
    hitArea.addEventListener("pointerleave", () => { this.lastPoint = null; });
    hitArea.addEventListener("pointerup", () => this.end());
    element.addEventListener("keydown", (event) => this.key(event));
    this.showScratchable();
  }

  /** A finger on a zone scratches it only while there is something to scratch; elsewhere
   * (locked, uncovered) it scrolls the page: games.css reads this class for `touch-action`. */
  showScratchable() {
    this.hitArea.classList.toggle("scratchable", this.scratchable);
  }

  repaint() {
    const rect = this.element.getBoundingClientRect();
    const ratio = Math.min(window.devicePixelRatio || 1, 2);
    this.canvas.width = Math.max(1, Math.round(rect.width * ratio));
    this.canvas.height = Math.max(1, Math.round(rect.height * ratio));
    this.paint(this.ctx, this.canvas.width, this.canvas.height);
  }

  setLocked(locked) {
    this.locked = locked;
    this.element.classList.toggle("locked", locked);
    this.element.setAttribute("aria-disabled", String(locked));
    this.showScratchable();
    if (this.state === "covered") {
      this.element.setAttribute("aria-label", locked
        ? `${this.label} : verrouillé pour l'instant`
        : `${this.label} : à gratter (Entrée pour découvrir)`);
    }
  }

  get scratchable() {
    return !this.locked && this.state !== "revealed";
  }

  pointFrom(event) {
    const rect = this.canvas.getBoundingClientRect();
    return {
      x: ((event.clientX - rect.left) * this.canvas.width) / rect.width,
      y: ((event.clientY - rect.top) * this.canvas.height) / rect.height,
    };
  }

  start(event) {
    if (!this.scratchable) {
      // A finger on a locked zone is scrolling the page (touch-action lets it): no shake.
      if (this.locked && event.pointerType !== "touch") this.refuse();
      return;
    }
    event.preventDefault();
    // Touch captures the pointer on the element it landed on; release it so a finger can sweep
    // across several zones in one gesture, as a mouse drag does.
    const { target } = event;
    if (target.hasPointerCapture?.(event.pointerId)) target.releasePointerCapture(event.pointerId);
    this.lastPoint = null;
    this.scratchTo(this.pointFrom(event));
  }

  move(event) {
    const pressed = (event.buttons & 1) === 1 || (event.pointerType !== "mouse" && event.pressure > 0);
    if (!pressed) {
      this.lastPoint = null;
      return;
    }
    if (!this.scratchable) {
      if (this.locked) this.refuse();
      return;
    }
    event.preventDefault();
    this.scratchTo(this.pointFrom(event));
  }

  end() {
    this.lastPoint = null;
    if (this.touched) this.measure();
  }

  scratchTo(point) {
    const { ctx } = this;
    // A coin about a seventh of the zone: a single swipe is not enough to uncover it.
    const brush = Math.max(7, Math.min(this.canvas.width, this.canvas.height) * 0.14);
    ctx.globalCompositeOperation = "destination-out";
    ctx.lineCap = "round";
    ctx.lineJoin = "round";
    ctx.lineWidth = brush * 2;
    ctx.beginPath();
    const from = this.lastPoint || point;
    ctx.moveTo(from.x, from.y);
    ctx.lineTo(point.x + 0.01, point.y);
    ctx.stroke();
    ctx.globalCompositeOperation = "source-over";
    this.lastPoint = point;
    this.touched = true;
    this.element.classList.add("scratching");
    this.onActivity();
    if (!this.measurePending) {
      this.measurePending = true;
      requestAnimationFrame(() => {
        this.measurePending = false;
        this.measure();
      });
    }
  }

  clearedShare() {
    const { width, height } = this.canvas;
    const pixels = this.ctx.getImageData(0, 0, width, height).data;
    let cleared = 0;
    let total = 0;
    for (let y = 0; y < height; y += SAMPLE_STRIDE) {
      for (let x = 0; x < width; x += SAMPLE_STRIDE) {
        if (this.round && !insideEllipse(x, y, width, height)) continue;
        total += 1;
        if (pixels[(y * width + x) * 4 + 3] < CLEARED_ALPHA) cleared += 1;
      }
    }
    return total ? cleared / total : 0;
  }

  measure() {
    if (this.state !== "covered" || this.locked) return;
    const share = this.clearedShare();
    this.element.dataset.cleared = share.toFixed(2);
    if (share > this.threshold) this.request();
  }

  key(event) {
    if (event.key !== "Enter" && event.key !== " ") return;
    event.preventDefault();
    if (this.locked) {
      this.refuse();
      return;
    }
    if (this.state === "covered") {
      this.onActivity();
      this.request();
    }
  }

  request() {
    this.state = "requested";
    this.element.classList.add("pending");
    this.onScratched(this);
  }

  /** The server refused or failed: cover the zone again so it can be tried once more. */
  retry() {
    if (this.state !== "requested") return;
    this.state = "covered";
    this.touched = false;
    this.element.classList.remove("pending", "scratching");
    this.showScratchable();
    this.repaint();
  }

  refuse() {
    // A drag over a locked zone fires many moves: shake once, not on every one of them.
    const now = performance.now();
    if (now - (this.lastRefusal || 0) < 500) return;
    this.lastRefusal = now;
    this.element.classList.remove("refused");
    void this.element.offsetWidth; // restart the shake animation
    this.element.classList.add("refused");
  }

  /**
   * Put the server's content in and take the coating away: `effect` "wipe" sweeps it off
   * (after `delay` ms) like a quick automatic scratch, "fade" dissolves what the player left of
   * it, "none" removes it at once (a replay shows the ticket as it ended).
   */
  show(fillContent, { effect = "none", delay = 0 } = {}) {
    if (this.state === "revealed") return;
    this.state = "revealed";
    this.resizeObserver.disconnect();
    fillContent(this.element.querySelector(".zone-content"));
    this.element.classList.remove("pending", "scratching", "locked");
    this.element.classList.add("revealed");
    this.showScratchable();
    this.element.removeAttribute("aria-disabled");
    // Stays focusable (focus must not jump away), now reading out what it shows.
    this.element.setAttribute("role", "group");
    const shown = this.element.querySelector(".zone-content").textContent.replace(/\s+/g, " ").trim();
    this.element.setAttribute("aria-label", `${this.label} : ${shown}`);
    if (effect === "none") {
      this.canvas.remove();
      return;
    }
    this.canvas.style.animationDelay = `${delay}ms`;
    this.canvas.classList.add(effect);
    this.canvas.addEventListener("animationend", () => this.canvas.remove(), { once: true });
    setTimeout(() => this.canvas.remove(), delay + 1500); // in case animations are disabled
  }
}
