// Money is integer euro cents, as the server sends it. Formatting works on integers only:
// no float ever touches an amount (division by 100 would turn 0.1 + 0.2 into trouble).

const THIN_SPACE = "\u202f"; // French thousands separator
const NO_BREAK_SPACE = "\u00a0"; // keeps « € » on the same line as its number

function groupThousands(digits) {
  let grouped = "";
  for (let end = digits.length; end > 0; end -= 3) {
    const part = digits.slice(Math.max(0, end - 3), end);
    grouped = grouped ? part + THIN_SPACE + grouped : part;
  }
  return grouped;
}

/** 11999987 → « 11 999 987 »: a count (of tickets, of sales) grouped the French way. */
export function formatCount(n) {
  if (!Number.isSafeInteger(n)) throw new TypeError(`not a count: ${n}`);
  return (n < 0 ? "-" : "") + groupThousands(String(Math.abs(n)));
}

/** 50000000 → « 500 000 € », 200 → « 2,00 € », 250 → « 2,50 € ». */
export function formatEuros(cents, { alwaysDecimals = false } = {}) {
  if (!Number.isSafeInteger(cents)) throw new TypeError(`not an amount in cents: ${cents}`);
  const sign = cents < 0 ? "-" : "";
  const absolute = BigInt(Math.abs(cents));
  const euros = groupThousands((absolute / 100n).toString());
  const rest = absolute % 100n;
  const decimals = rest || alwaysDecimals ? "," + rest.toString().padStart(2, "0") : "";
  return `${sign}${euros}${decimals}${NO_BREAK_SPACE}€`;
}

/** The price of a ticket: always with cents, like the regulations' « 2,00 € ». */
export function formatPrice(cents) {
  return formatEuros(cents, { alwaysDecimals: true });
}

/** « 12,5 » or « 12.50 » or « 12 » euros typed by a player → integer cents, or null. */
export function parseEuros(text) {
  const cleaned = String(text).trim().replace(/[\s\u202f\u00a0€]/g, "").replace(",", ".");
  const match = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(cleaned);
  if (!match) return null;
  const cents = Number(match[1]) * 100 + Number((match[2] || "").padEnd(2, "0"));
  return Number.isSafeInteger(cents) ? cents : null;
}

/** numerator / denominator rounded half-up to ``places`` decimals, French style (« 3,83 »):
 *  exact integer arithmetic, so the figure shown is the exact ratio's rounding. */
export function formatRatio(numerator, denominator, places = 2) {
  if (!Number.isSafeInteger(numerator) || !Number.isSafeInteger(denominator) || denominator <= 0) {
    throw new TypeError(`not a ratio of integers: ${numerator}/${denominator}`);
  }
  const scale = 10n ** BigInt(places);
  const scaled = BigInt(numerator) * scale * 2n + BigInt(denominator);
  const rounded = scaled / (2n * BigInt(denominator));
  const whole = (rounded / scale).toString();
  const decimals = places ? "," + (rounded % scale).toString().padStart(places, "0") : "";
  return groupThousands(whole) + decimals;
}

/** A share as a percentage: formatPercent(3, 4) → « 75,00 % » (places decimals). */
export function formatPercent(numerator, denominator, places = 2) {
  return `${formatRatio(numerator * 100, denominator, places)}${NO_BREAK_SPACE}%`;
}

/** formatRatio without the zeros that say nothing: « 4 000 000 », « 12,5 », « 3,83 » — at most
 *  ``places`` decimals, as lotteries print odds and payouts. */
export function formatShortRatio(numerator, denominator, places = 2) {
  const text = formatRatio(numerator, denominator, places);
  return places ? text.replace(/0+$/, "").replace(/,$/, "") : text;
}

/** A share as a percentage, its useless zeros dropped: formatShortPercent(3, 4) → « 75 % ». */
export function formatShortPercent(numerator, denominator, places = 2) {
  return `${formatShortRatio(numerator * 100, denominator, places)}${NO_BREAK_SPACE}%`;
}
