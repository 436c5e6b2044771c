// The twelve zodiac signs and the eight Astro symbols, drawn here as SVG (no external assets).
// Each drawing is a 100×100 picture; gradients get a unique id per copy so that many copies
// can live on one page.

// The twelve signs (id, French name, the glyph's path in a 100×100 box) are data: signs.json.
export const SIGNS = await loadSigns();

async function loadSigns() {
  const response = await fetch(new URL("./signs.json", import.meta.url));
  if (!response.ok) throw new Error(`signs.json: HTTP ${response.status}`);
  return response.json();
}

export const SYMBOLS = {
  cosmos: "Cosmos",
  moon: "Lune",
  comet: "Comète",
  saturn: "Saturne",
  explosion: "Explosion",
  eclipse: "Éclipse",
  star: "Étoile",
  sun: "Soleil",
};

let copies = 0;
function uid(prefix) {
  copies += 1;
  return `${prefix}-${copies}`;
}

export function signById(id) {
  return SIGNS.find((sign) => sign.id === id);
}

/** A sign's drawing: its glyph in gold on a night-blue medallion sprinkled with stars. */
export function signSvg(id, { title = true } = {}) {
  const sign = signById(id);
  if (!sign) return "";
  const sky = uid("sky");
  const gold = uid("gold");
  return `<svg viewBox="0 0 100 100" class="drawing sign-drawing" role="img" aria-label="${sign.name}">
  ${title ? `<title>${sign.name}</title>` : ""}
  <defs>
    <radialGradient id="${sky}" cx="40%" cy="35%" r="75%">
      <stop offset="0" stop-color="#3b3f9e"/><stop offset="0.65" stop-color="#1b1d5c"/><stop offset="1" stop-color="#0b0c2e"/>
    </radialGradient>
    <linearGradient id="${gold}" x1="0" y1="0" x2="1" y2="1">
      <stop offset="0" stop-color="#fff3b0"/><stop offset="0.5" stop-color="#f2c14e"/><stop offset="1" stop-color="#c7892a"/>
    </linearGradient>
  </defs>
  <circle cx="50" cy="50" r="48" fill="url(#${sky})" stroke="url(#${gold})" stroke-width="3"/>
  <g fill="#fff" opacity="0.7"><circle cx="20" cy="26" r="1.2"/><circle cx="78" cy="20" r="1"/><circle cx="84" cy="70" r="1.3"/><circle cx="16" cy="72" r="0.9"/><circle cx="62" cy="88" r="1"/></g>
  <g transform="translate(15 15) scale(0.7)"><path d="${sign.glyph}" fill="none" stroke="url(#${gold})" stroke-width="8" stroke-linecap="round" stroke-linejoin="round"/></g>
</svg>`;
}

const SYMBOL_ART = {
  cosmos: (g) => `<circle cx="50" cy="50" r="46" fill="#120a3a"/>
    <path d="M50 50 C50 38 66 36 70 48 C76 66 52 78 38 68 C20 56 30 26 54 24 C80 22 92 50 80 70" fill="none" stroke="${g}" stroke-width="5" stroke-linecap="round"/>
    <g fill="#fff"><circle cx="24" cy="30" r="2"/><circle cx="76" cy="24" r="1.5"/><circle cx="20" cy="70" r="1.5"/><circle cx="60" cy="84" r="2"/><circle cx="50" cy="50" r="4"/></g>`,
  moon: (g) => `<circle cx="50" cy="50" r="46" fill="#101a44"/>
    <path d="M60 16 A36 36 0 1 0 84 66 A28 28 0 1 1 60 16 Z" fill="${g}"/>
    <circle cx="40" cy="58" r="4" fill="#c7892a" opacity="0.5"/><circle cx="34" cy="40" r="3" fill="#c7892a" opacity="0.5"/>`,
  comet: (g) => `<circle cx="50" cy="50" r="46" fill="#0e1d4a"/>
    <path d="M64 38 L14 80 L58 28 Z" fill="${g}" opacity="0.45"/><path d="M66 44 L26 86 L60 34 Z" fill="${g}" opacity="0.3"/>
    <circle cx="66" cy="34" r="13" fill="${g}"/><circle cx="66" cy="34" r="6" fill="#fff"/>`,
  saturn: (g) => `<circle cx="50" cy="50" r="46" fill="#1a1240"/>
    <circle cx="50" cy="50" r="20" fill="${g}"/>
    <ellipse cx="50" cy="50" rx="40" ry="12" fill="none" stroke="#f9e3a3" stroke-width="5" transform="rotate(-20 50 50)"/>
    <path d="M30 50 A20 20 0 0 0 70 50" fill="${g}" transform="rotate(-20 50 50)"/>`,
  explosion: (g) => `<circle cx="50" cy="50" r="46" fill="#3a0d1a"/>
    <path d="M50 8 L58 34 L84 20 L68 44 L94 54 L66 60 L78 86 L54 68 L44 94 L40 66 L14 80 L30 56 L6 44 L34 40 L22 16 L44 32 Z" fill="#ff6b2c"/>
    <path d="M50 28 L55 42 L70 38 L60 50 L70 62 L55 58 L50 72 L45 58 L30 62 L40 50 L30 38 L45 42 Z" fill="${g}"/>`,
  eclipse: (g) => `<circle cx="50" cy="50" r="46" fill="#05060f"/>
    <circle cx="50" cy="50" r="30" fill="none" stroke="${g}" stroke-width="6" opacity="0.9"/>
    <circle cx="50" cy="50" r="36" fill="none" stroke="${g}" stroke-width="2" opacity="0.4"/>
    <circle cx="50" cy="50" r="27" fill="#05060f"/><circle cx="70" cy="34" r="3" fill="#fff"/>`,
  star: (g) => `<circle cx="50" cy="50" r="46" fill="#14235a"/>
    <path d="M50 12 L60 38 L88 38 L65 55 L74 84 L50 66 L26 84 L35 55 L12 38 L40 38 Z" fill="${g}" stroke="#fff3b0" stroke-width="2" stroke-linejoin="round"/>`,
  sun: (g) => `<circle cx="50" cy="50" r="46" fill="#4a1d0a"/>
    <g stroke="${g}" stroke-width="6" stroke-linecap="round">
      <path d="M50 8 V20 M50 80 V92 M8 50 H20 M80 50 H92 M20 20 L29 29 M71 71 L80 80 M80 20 L71 29 M29 71 L20 80"/></g>
    <circle cx="50" cy="50" r="22" fill="${g}"/><circle cx="50" cy="50" r="14" fill="#fff3b0"/>`,
};

/** A symbol's drawing (cosmos, moon, comet, saturn, explosion, eclipse, star, sun). */
export function symbolSvg(name) {
  const art = SYMBOL_ART[name];
  if (!art) return "";
  const gold = uid("sym");
  return `<svg viewBox="0 0 100 100" class="drawing symbol-drawing" role="img" aria-label="${SYMBOLS[name]}">
  <title>${SYMBOLS[name]}</title>
  <defs><linearGradient id="${gold}" x1="0" y1="0" x2="1" y2="1">
    <stop offset="0" stop-color="#fff3b0"/><stop offset="0.55" stop-color="#f5b942"/><stop offset="1" stop-color="#e07a1f"/>
  </linearGradient></defs>
  ${art(`url(#${gold})`)}
</svg>`;
}

/** Draw a sign's glyph straight onto a canvas (used on the discs' scratch coating). */
export function drawGlyph(ctx, signId, x, y, size, color) {
  const sign = signById(signId);
  if (!sign) return;
  ctx.save();
  ctx.translate(x, y);
  ctx.scale(size / 100, size / 100);
  ctx.strokeStyle = color;
  ctx.lineWidth = 9;
  ctx.lineCap = "round";
  ctx.lineJoin = "round";
  ctx.stroke(new Path2D(sign.glyph));
  ctx.restore();
}
