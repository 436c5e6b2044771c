// The bytes of a ticket proof, with WebCrypto only: canonical JSON, hex and Base64, SHA-256 and
// HMAC-SHA256, RFC 9162 inclusion and consistency, Ed25519 signed documents — byte for byte as
// docs/fairness.md specifies them and grattage/blocks/{signing,merkle,tlog}.py compute them.
// proof_check.js (the proof) and proof_draw.js (its draw) are built on these.

export const subtle = globalThis.crypto?.subtle;
export const ascii = new TextEncoder(); // canonical JSON is ASCII, so UTF-8 gives the same bytes

// ---- canonical JSON: Python's json.dumps(v, sort_keys=True, separators=(",", ":"),
// ensure_ascii=True), integers only -------------------------------------------------------

const SHORT_ESCAPES = { '"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** A string as Python's ensure_ascii writes it: every UTF-16 code unit outside space..~ as
 * \uXXXX in lowercase hex (so a character beyond the BMP is its surrogate pair, as in Python). */
function quote(text) {
  let out = '"';
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    const unit = text.charCodeAt(i);
    if (SHORT_ESCAPES[char]) out += SHORT_ESCAPES[char];
    else if (unit < 0x20 || unit > 0x7e) out += `\\u${unit.toString(16).padStart(4, "0")}`;
    else out += char;
  }
  return `${out}"`;
}

/** Python sorts keys by code point; JavaScript's sort compares UTF-16 code units, which
 * differs when a character beyond the BMP meets one in U+E000–U+FFFF. */
function byCodePoint(a, b) {
  const left = Array.from(a, (c) => c.codePointAt(0));
  const right = Array.from(b, (c) => c.codePointAt(0));
  for (let i = 0; i < Math.min(left.length, right.length); i += 1) {
    if (left[i] !== right[i]) return left[i] - right[i];
  }
  return left.length - right.length;
}

export function canonicalJson(value) {
  if (value === null) return "null";
  if (value === true) return "true";
  if (value === false) return "false";
  if (typeof value === "number") {
    // JSON.parse keeps integers exact up to 2^53 only: past that the bytes cannot be rebuilt.
    if (!Number.isSafeInteger(value)) throw new Error(`le nombre ${value} n'est pas un entier exact`);
    return String(value);
  }
  if (typeof value === "string") return quote(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object") {
    const members = Object.keys(value).sort(byCodePoint);
    return `{${members.map((name) => `${quote(name)}:${canonicalJson(value[name])}`).join(",")}}`;
  }
  throw new Error(`valeur JSON inattendue (${typeof value})`);
}

// ---- bytes and hashes --------------------------------------------------------------------

export function fromHex(text, length) {
  if (typeof text !== "string" || !/^([0-9a-f]{2})*$/.test(text)) throw new Error("hexadécimal attendu");
  const bytes = new Uint8Array(text.length / 2);
  for (let i = 0; i < bytes.length; i += 1) bytes[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  if (length !== undefined && bytes.length !== length) throw new Error(`${length} octets attendus`);
  return bytes;
}

export function toHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function concat(...parts) {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** An unsigned 64-bit big-endian integer, from a safe integer or a BigInt below 2^64. */
export function u64(value) {
  const big = typeof value === "bigint" ? value : Number.isSafeInteger(value) ? BigInt(value) : -1n;
  if (big < 0n || big >= 1n << 64n) throw new Error(`entier positif attendu, pas ${value}`);
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, big);
  return bytes;
}

export function u32(value) {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, value);
  return bytes;
}

export async function sha256(bytes) {
  return new Uint8Array(await subtle.digest("SHA-256", bytes));
}

export async function hmacSha256(key, message) {
  const imported = await subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await subtle.sign("HMAC", imported, message));
}

/** SHA-256 applied `times` times to `value` (a hash chain walked down), or null when `times`
 * is above `limit` (not walked at all). One digest at a time: WebCrypto hands each back as a
 * task, so the page stays responsive; `onProgress(done, times)` every 4 096 hashes. */
export async function hashTimes(value, times, { limit = Infinity, onProgress = null } = {}) {
  if (!Number.isSafeInteger(times) || times < 0) throw new Error(`nombre d'empreintes invalide : ${times}`);
  if (times > limit) return null;
  let link = value;
  for (let done = 0; done < times; done += 1) {
    link = await sha256(link);
    if (onProgress && done % 4096 === 4095) onProgress(done + 1, times);
  }
  return link;
}

export const sameBytes = (a, b) => a.length === b.length && a.every((byte, i) => byte === b[i]);

export function fromBase64(text) {
  if (typeof text !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4) {
    throw new Error("signature Base64 mal formée");
  }
  const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  if (bytes.length !== 64) throw new Error("une signature Ed25519 fait 64 octets");
  return bytes;
}

// ---- Merkle trees (RFC 6962 / RFC 9162) --------------------------------------------------

export const nodeHash = (left, right) => sha256(concat(Uint8Array.of(1), left, right));

/** RFC 9162 §2.1.3.2: the root `leaf` at `index` with `path` leads to, or null. */
export async function rootFromPath(index, size, leaf, path) {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return null;
  let fn = BigInt(index);
  let sn = BigInt(size - 1);
  let result = leaf;
  for (const sibling of path) {
    if (sn === 0n) return null;
    if (fn & 1n || fn === sn) {
      result = await nodeHash(sibling, result);
      while (!(fn & 1n) && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      result = await nodeHash(result, sibling);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n ? result : null;
}

/** RFC 9162 §2.1.4.2 (grattage/blocks/tlog.py verify_consistency): does the tree of `second`
 * leaves, root `secondRoot`, extend the tree of `first` leaves, root `firstRoot`? */
export async function verifyConsistency(first, second, firstRoot, secondRoot, proof) {
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 0 || first > second) return false;
  if (first === second) return proof.length === 0 && sameBytes(firstRoot, secondRoot);
  if (first === 0) return proof.length === 0;
  const path = [...proof];
  const big = BigInt(first);
  if ((big & (big - 1n)) === 0n) path.unshift(firstRoot); // a power of two: its root starts the path
  if (!path.length) return false;
  let fn = big - 1n;
  let sn = BigInt(second - 1);
  while (fn & 1n) {
    fn >>= 1n;
    sn >>= 1n;
  }
  let fr = path[0];
  let sr = path[0];
  for (const node of path.slice(1)) {
    if (sn === 0n) return false;
    if (fn & 1n || fn === sn) {
      fr = await nodeHash(node, fr);
      sr = await nodeHash(node, sr);
      while (!(fn & 1n) && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      sr = await nodeHash(sr, node);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n && sameBytes(fr, firstRoot) && sameBytes(sr, secondRoot);
}

/** Is the log entry `part` ({ index, entry, path }) of `kind` included in the signed `head`?
 * Throws naming what fails; answers the entry. */
export async function includedEntry(part, kind, head, what) {
  if (!part || typeof part !== "object" || !part.entry || !Array.isArray(part.path)) throw new Error(`${what} : absente de la preuve`);
  if (part.entry.kind !== kind) throw new Error(`${what} : l'entrée n'est pas de type ${kind}`);
  const leaf = await sha256(concat(Uint8Array.of(0), ascii.encode(canonicalJson(part.entry))));
  const root = await rootFromPath(part.index, head.tree_size, leaf, part.path.map((node) => fromHex(node, 32)));
  if (root === null || !sameBytes(root, fromHex(head.root_hash, 32))) {
    throw new Error(`${what} : l'entrée n° ${part.index} ne mène pas à la racine de la tête signée`);
  }
  return part.entry;
}

/** Unit leaf v2: SHA-256(0x00 || block_id (16) || position (u64 BE) || tier (u8) ||
 * prize_cents (u64 BE) || salt (32)). */
export function unitLeafV2(blockId, position, tier, prizeCents, salt) {
  if (!Number.isInteger(tier) || tier < 0 || tier > 255) throw new Error("le rang de lot est un octet");
  return sha256(concat(Uint8Array.of(0), blockId, u64(position), Uint8Array.of(tier), u64(prizeCents), salt));
}

// ---- signatures --------------------------------------------------------------------------

/** Can this browser check Ed25519 signatures (WebCrypto, secure context)? */
export async function ed25519Supported(publicKey) {
  if (!subtle) return false;
  try {
    await subtle.importKey("raw", publicKey, { name: "Ed25519" }, false, ["verify"]);
    return true;
  } catch {
    return false;
  }
}

export async function verifyEd25519(publicKey, message, signature) {
  const key = await subtle.importKey("raw", publicKey, { name: "Ed25519" }, false, ["verify"]);
  return subtle.verify({ name: "Ed25519" }, key, signature, message);
}

/** "grattage/" || kind || "/1" || 0x00 || canonical JSON of the document without its signature. */
export async function documentSigned(kind, document, publicKey) {
  if (!document || typeof document !== "object" || Array.isArray(document)) throw new Error("document absent");
  const { signature, ...unsigned } = document;
  const message = ascii.encode(`grattage/${kind}/1\u0000${canonicalJson(unsigned)}`);
  return verifyEd25519(publicKey, message, fromBase64(signature));
}

/** "grattage/sth/1" || 0x00 || tree_size (u64 BE) || timestamp (u64 BE) || root_hash (32). */
export function treeHeadMessage(head) {
  return concat(ascii.encode("grattage/sth/1\u0000"), u64(head.tree_size), u64(head.timestamp), fromHex(head.root_hash, 32));
}
