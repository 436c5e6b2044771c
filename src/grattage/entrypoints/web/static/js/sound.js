// The game pages' sounds, synthesized in the browser with Web Audio (no sound file, nothing
// fetched): a soft scratch while a zone is being scratched, a short jingle for a win, a longer
// one for a big win. The header's toggle (« Son activé » / « Son coupé ») mutes them all; the
// choice is remembered on the device (localStorage). Autoplay policy: the AudioContext is only
// created — and resumed — inside a gesture of the player (a press or a key), never before, and
// a muted page never creates one. Audio that is missing or refused is silence, never an error.

const STORAGE_KEY = "grattage.sound";
const SCRATCH_EVERY_MS = 90; // a drag fires dozens of moves a second: one grain per 90 ms
const VOLUME = 0.5; // the master level: under the system's, so nothing ever blares

function storedMuted() {
  try {
    return window.localStorage.getItem(STORAGE_KEY) === "off";
  } catch {
    return false; // storage refused (private mode…): the default, sound on
  }
}

function storeMuted(muted) {
  try {
    window.localStorage.setItem(STORAGE_KEY, muted ? "off" : "on");
  } catch {
    // Not remembered on this device; the page still honours the choice until it is left.
  }
}

class Sound {
  constructor() {
    this.muted = storedMuted();
    this.context = null;
    this.master = null;
    this.noise = null;
    this.lastScratch = 0;
    this.button = null;
  }

  /** The header's toggle, and the first gesture that may wake the audio up. */
  setUp(button) {
    this.button = button;
    if (button) {
      this.showToggle();
      button.addEventListener("click", () => this.setMuted(!this.muted));
    }
    const wake = () => this.wake();
    document.addEventListener("pointerdown", wake, { capture: true });
    document.addEventListener("keydown", wake, { capture: true });
  }

  showToggle() {
    if (!this.button) return;
    this.button.setAttribute("aria-pressed", String(!this.muted));
    this.button.textContent = this.muted ? "Son coupé" : "Son activé";
    this.button.title = this.muted ? "Activer le son" : "Couper le son";
    this.button.classList.toggle("muted", this.muted);
  }

  setMuted(muted) {
    this.muted = muted;
    storeMuted(muted);
    this.showToggle();
    if (muted && this.context?.state === "running") this.context.suspend().catch(() => {});
    else this.wake();
  }

  /** Called from a gesture: create or resume the context (browsers allow it only then). */
  wake() {
    if (this.muted) return;
    try {
      if (!this.context) {
        const AudioContextClass = window.AudioContext || window.webkitAudioContext;
        if (!AudioContextClass) return;
        this.context = new AudioContextClass();
        this.master = this.context.createGain();
        this.master.gain.value = VOLUME;
        this.master.connect(this.context.destination);
      }
      if (this.context.state === "suspended") this.context.resume().catch(() => {});
    } catch {
      this.context = null; // no audio on this device: the page stays silent
    }
  }

  /** The context, when a sound may play now; null when muted, unwoken or unavailable. */
  ready() {
    if (this.muted || !this.context || this.context.state === "closed") return null;
    return this.context;
  }

  noiseBuffer(context) {
    if (!this.noise) {
      const length = Math.round(context.sampleRate * 0.25);
      this.noise = context.createBuffer(1, length, context.sampleRate);
      const data = this.noise.getChannelData(0);
      for (let i = 0; i < length; i += 1) data[i] = Math.random() * 2 - 1;
    }
    return this.noise;
  }

  /** A grain of scratch: filtered noise, quiet and short; at most one per SCRATCH_EVERY_MS. */
  scratch() {
    const context = this.ready();
    if (!context) return;
    const now = performance.now();
    if (now - this.lastScratch < SCRATCH_EVERY_MS) return;
    this.lastScratch = now;
    try {
      const start = context.currentTime;
      const source = context.createBufferSource();
      source.buffer = this.noiseBuffer(context);
      const filter = context.createBiquadFilter();
      filter.type = "bandpass";
      filter.frequency.value = 2400 + Math.random() * 1600;
      filter.Q.value = 0.8;
      const gain = context.createGain();
      gain.gain.setValueAtTime(0.0001, start);
      gain.gain.exponentialRampToValueAtTime(0.06, start + 0.012);
      gain.gain.exponentialRampToValueAtTime(0.0001, start + 0.08);
      source.connect(filter).connect(gain).connect(this.master);
      source.start(start, Math.random() * 0.15, 0.09);
    } catch {
      // A sound that cannot play is silence.
    }
  }

  /** Notes (frequency in Hz, start and length in seconds) played as soft bells. */
  notes(list, { level = 0.18 } = {}) {
    const context = this.ready();
    if (!context) return;
    try {
      const base = context.currentTime + 0.02;
      for (const [frequency, at, length] of list) {
        for (const [type, ratio, share] of [["triangle", 1, 1], ["sine", 2, 0.35]]) {
          const oscillator = context.createOscillator();
          oscillator.type = type;
          oscillator.frequency.value = frequency * ratio;
          const gain = context.createGain();
          const start = base + at;
          gain.gain.setValueAtTime(0.0001, start);
          gain.gain.exponentialRampToValueAtTime(level * share, start + 0.015);
          gain.gain.exponentialRampToValueAtTime(0.0001, start + length);
          oscillator.connect(gain).connect(this.master);
          oscillator.start(start);
          oscillator.stop(start + length + 0.05);
        }
      }
    } catch {
      // A sound that cannot play is silence.
    }
  }

  /** A win: a rising major arpeggio, under a second. */
  win() {
    this.notes([[523.25, 0, 0.3], [659.25, 0.1, 0.3], [783.99, 0.2, 0.35], [1046.5, 0.32, 0.6]]);
  }

  /** A big win: the arpeggio twice, higher, then a held chord. */
  bigWin() {
    const rise = [[523.25, 0, 0.25], [659.25, 0.09, 0.25], [783.99, 0.18, 0.25], [1046.5, 0.27, 0.3],
      [659.25, 0.45, 0.25], [783.99, 0.54, 0.25], [1046.5, 0.63, 0.25], [1318.5, 0.72, 0.35]];
    const chord = [[523.25, 0.95, 1.4], [659.25, 0.95, 1.4], [783.99, 0.95, 1.4], [1046.5, 0.95, 1.6]];
    this.notes([...rise, ...chord], { level: 0.14 });
  }
}

/** The one sound of the page (every game page shares it). */
export const sound = new Sound();
