// A ticket proof (grattage-ticket-proof/2) checked in the page with WebCrypto only, byte for
// byte as docs/fairness.md specifies it and grattage/blocks/{merkle,signing,tlog,proofs_v2}.py
// compute it. Every check answers { ok, detail } and never throws: a malformed or tampered
// proof is a ✗ with its reason, not a broken page.

import { formatEuros } from "./money.js";
import { checkDraw } from "./proof_draw.js";
import {
  ascii, canonicalJson, concat, documentSigned, fromBase64, fromHex, rootFromPath, sameBytes,
  sha256, toHex, treeHeadMessage, unitLeafV2, verifyEd25519,
} from "./proof_bytes.js";

export { canonicalJson, ed25519Supported, fromHex, toHex, rootFromPath } from "./proof_bytes.js";

// ---- the checks --------------------------------------------------------------------------

/** Whether `entry` (of the log, at `part.index`) is included in the signed head. */
async function loggedIn(part, kind, member, document, head) {
  if (!part || part.entry?.kind !== kind) return { ok: false, detail: `l'entrée n'est pas de type ${kind}` };
  if (canonicalJson(part.entry[member]) !== canonicalJson(document)) {
    return { ok: false, detail: `l'entrée n° ${part.index} ne contient pas ce document` };
  }
  const leaf = await sha256(concat(Uint8Array.of(0), ascii.encode(canonicalJson(part.entry))));
  const path = part.path.map((node) => fromHex(node, 32));
  const root = await rootFromPath(part.index, head.tree_size, leaf, path);
  const ok = root !== null && sameBytes(root, fromHex(head.root_hash, 32));
  return {
    ok,
    detail: ok
      ? `entrée n° ${part.index} sur ${head.tree_size}`
      : `l'entrée n° ${part.index} ne mène pas à la racine de la tête signée`,
  };
}

// ---- the operator key's history (fairness.md, "Key rotation") ----------------------------

/** The key in force at `index` (a tree head of size n is at index n). */
const keyAt = (history, index) => history.filter((key) => key.fromIndex <= index).at(-1);

/** The history a proof carries: the first key, then each key.change of `parts` — included in
 * the head, signed by the key in force, countersigned by the new key, from the next index on,
 * a key never seen before. Throws naming what fails. */
async function followKeyChanges(firstKey, parts, head) {
  const history = [{ publicKey: firstKey, keyId: toHex(await sha256(firstKey)), fromIndex: 0, changeIndex: null }];
  if (!Array.isArray(parts)) throw new Error("la liste des changements de clé est mal formée");
  for (const part of parts) {
    const change = part?.entry?.key_change;
    const included = await loggedIn(part, "key.change", "key_change", change, head);
    if (!included.ok) throw new Error(included.detail);
    const index = part.index;
    if (index < history.at(-1).fromIndex) throw new Error("changements de clé dans le désordre");
    const old = keyAt(history, index);
    if (change.format !== "grattage-key-change/1") throw new Error(`l'entrée n° ${index} n'est pas un changement de clé`);
    if (!(await documentSigned("key-change", change, old.publicKey)) || change.old_key_id !== old.keyId) {
      throw new Error(`le changement de clé n° ${index} n'est pas signé par la clé en vigueur`);
    }
    const newKey = fromHex(change.new_public_key, 32);
    const newId = toHex(await sha256(newKey));
    const { signature: _, new_key_signature: countersignature, ...bare } = change;
    const possession = ascii.encode(`grattage/key-possession/1\u0000${canonicalJson(bare)}`);
    if (change.new_key_id !== newId || !(await verifyEd25519(newKey, possession, fromBase64(countersignature)))) {
      throw new Error(`la nouvelle clé n'a pas contresigné le changement n° ${index}`);
    }
    if (change.from_index !== index + 1) throw new Error(`le changement n° ${index} ne prend pas effet à l'entrée suivante`);
    if (history.some((key) => key.keyId === newId)) throw new Error("une clé déjà remplacée revient");
    history.push({ publicKey: newKey, keyId: newId, fromIndex: index + 1, changeIndex: index });
  }
  return history;
}

/** Is `history` the log's published one (GET /api/log/key's `keys`) up to a head of `size`? */
function isPublished(history, logKey, size) {
  const listed = logKey.keys?.length
    ? logKey.keys
    : [{ key_id: logKey.key_id, public_key: logKey.public_key, from_index: 0, change_index: null }];
  const published = listed.filter((key) => key.change_index === null || key.change_index < size);
  return published.length === history.length && published.every((key, i) => key.key_id === history[i].keyId
    && key.public_key === toHex(history[i].publicKey) && key.from_index === history[i].fromIndex);
}

/** A signed document of the log entry `index`: naming and signed by the key in force there. */
async function signedAt(kind, document, history, index) {
  const key = keyAt(history, index);
  if (!key || document?.key_id !== key.keyId) return false;
  return documentSigned(kind, document, key.publicKey);
}

function prizeOfTier(table, tier) {
  if (tier === 0) return 0;
  const row = table.tiers[tier - 1];
  if (!row) throw new Error(`le rang ${tier} n'existe pas dans le tableau de lots`);
  return row.prize_cents;
}

/**
 * Every check of a v2 proof, in order, as [{ id, ok, detail }].
 * @param proof the server's grattage-ticket-proof/2
 * @param logKey the answer of GET /api/log/key (the keys to trust, not the proof's own)
 * @param receipt the receipt the purchase answered, when the page has it
 * @param prizeCents the prize the page showed, when it has it
 * @param onProgress (text) => void: how far a long hash walk of the draw is
 * @param walkLimit the longest hash walk the draw may do in the page (proof_draw.js WALK_LIMIT)
 * @param drawFacts an object the draw's checks fill (round, slot, unit…) for the page's summary
 */
export async function checkProof(proof, logKey, { receipt = null, prizeCents = null, onProgress = null, drawFacts = {}, walkLimit = undefined } = {}) {
  const firstPublished = logKey.keys?.length ? logKey.keys[0].public_key : logKey.public_key;
  const firstKey = fromHex(firstPublished, 32);
  let history = [{ publicKey: firstKey, keyId: toHex(await sha256(firstKey)), fromIndex: 0, changeIndex: null }];
  const results = [];
  const check = async (id, run) => {
    try {
      results.push({ id, ...(await run()) });
    } catch (error) {
      results.push({ id, ok: false, detail: error instanceof Error ? error.message : String(error) });
    }
  };
  const head = proof?.log?.sth ?? {};
  const commitment = proof?.commitment ?? {};
  const unit = proof?.unit ?? {};
  // A drawn block's receipt (v2) names no position: its unit was drawn after the sale.
  const drawn = commitment.draw !== undefined || proof?.receipt?.format === "grattage-receipt/2";

  await check("key", async () => {
    if (proof.operator_key !== firstPublished) return { ok: false, detail: "la preuve part d'une autre clé que la première clé publiée" };
    history = await followKeyChanges(firstKey, proof.log?.key_changes ?? [], head);
    if (!isPublished(history, logKey, head.tree_size)) {
      return { ok: false, detail: "l'historique des clés de la preuve n'est pas celui que le journal publie" };
    }
    const headKey = keyAt(history, head.tree_size);
    if (head.key_id !== headKey.keyId) return { ok: false, detail: "la tête ne nomme pas la clé en vigueur" };
    const changes = history.length - 1;
    const after = changes ? ` (après ${changes} changement${changes > 1 ? "s" : ""} de clé)` : "";
    return { ok: true, detail: `clé ${headKey.keyId.slice(0, 16)}…${after}` };
  });
  await check("receipt", async () => {
    const ok = await signedAt("receipt", proof.receipt, history, proof.log?.receipt_entry?.index);
    if (!ok) return { ok: false, detail: "le reçu n'est pas signé par la clé en vigueur à son entrée" };
    if (receipt && canonicalJson(receipt) !== canonicalJson(proof.receipt)) {
      return { ok: false, detail: "ce n'est pas le reçu remis à l'achat" };
    }
    const where = drawn ? `tirée au tour n° ${proof.receipt.beacon?.round} du témoin` : `position ${proof.receipt.position}`;
    return { ok: true, detail: `vente n° ${proof.receipt.sequence} du bloc, ${where}` };
  });
  await check("commitment", async () => {
    if (commitment.format !== "grattage-commitment/2" || commitment.leaf !== "grattage-unit/2") {
      return { ok: false, detail: "ce n'est pas un engagement grattage-commitment/2" };
    }
    if (!(await signedAt("commitment", commitment, history, proof.log?.commitment_entry?.index))) {
      return { ok: false, detail: "l'engagement n'est pas signé par la clé en vigueur à son entrée" };
    }
    const tableHash = toHex(await sha256(ascii.encode(canonicalJson(commitment.table))));
    if (tableHash !== commitment.table_sha256) return { ok: false, detail: "le tableau de lots ne correspond pas à son empreinte" };
    return { ok: true, detail: `tableau de lots ${tableHash.slice(0, 16)}…` };
  });
  await check("agreement", async () => {
    const expected = {
      block_id: commitment.block_id,
      position: unit.position,
      stake_cents: commitment.price_cents,
      commitment_index: proof.log?.commitment_entry?.index,
    };
    if (drawn) delete expected.position; // the draw's checks tie the unit to the sale
    const differing = Object.keys(expected).filter((name) => proof.receipt?.[name] !== expected[name]);
    if (differing.length) return { ok: false, detail: `désaccord sur ${differing.join(", ")}` };
    if (prizeCents !== null && prizeCents !== unit.prize_cents) return { ok: false, detail: "le gain affiché n'est pas celui de l'unité" };
    return { ok: true, detail: drawn ? "bloc, mise et n° d'engagement" : "bloc, position, mise et n° d'engagement" };
  });
  if (drawn) {
    const headSigned = async (sth) => {
      const key = keyAt(history, sth?.tree_size);
      return Boolean(key) && sth.key_id === key.keyId && verifyEd25519(key.publicKey, treeHeadMessage(sth), fromBase64(sth.signature));
    };
    const signedByKeyAt = (kind, document, index) => signedAt(kind, document, history, index);
    try {
      const { results: drawResults, facts } = await checkDraw(proof, { head, signedAt: signedByKeyAt, headSigned, onProgress, walkLimit });
      results.push(...drawResults);
      Object.assign(drawFacts, facts);
    } catch (error) {
      results.push({ id: "draw-previous", ok: false, detail: error instanceof Error ? error.message : String(error) });
    }
  }
  await check("unit", async () => {
    if (prizeOfTier(commitment.table, unit.tier) !== unit.prize_cents) {
      return { ok: false, detail: "ce rang ne paie pas ce gain dans le tableau de lots" };
    }
    const leaf = await unitLeafV2(fromHex(commitment.block_id, 16), unit.position, unit.tier, unit.prize_cents, fromHex(unit.salt, 32));
    const root = await rootFromPath(unit.position, commitment.size, leaf, unit.path.map((node) => fromHex(node, 32)));
    const ok = root !== null && sameBytes(root, fromHex(commitment.root, 32));
    const prize = unit.prize_cents ? `gain de ${formatEuros(unit.prize_cents)}` : "unité perdante";
    return { ok, detail: ok ? `${prize}, ${unit.path.length} nœuds jusqu'à la racine` : "le chemin ne mène pas à la racine engagée" };
  });
  await check("commitment-entry", () => loggedIn(proof.log?.commitment_entry, "block.commitment", "commitment", commitment, head));
  await check("receipt-entry", () => loggedIn(proof.log?.receipt_entry, "sale.receipt", "receipt", proof.receipt, head));
  await check("order", async () => {
    const committed = proof.log.commitment_entry.index;
    const sold = proof.log.receipt_entry.index;
    if (!Number.isSafeInteger(committed) || !Number.isSafeInteger(sold) || committed >= sold) {
      return { ok: false, detail: `l'engagement (n° ${committed}) n'est pas avant la vente (n° ${sold})` };
    }
    return { ok: true, detail: `engagement n° ${committed}, vente n° ${sold}` };
  });
  await check("head", async () => {
    const key = keyAt(history, head.tree_size);
    const ok = head.key_id === key.keyId && (await verifyEd25519(key.publicKey, treeHeadMessage(head), fromBase64(head.signature)));
    return { ok, detail: ok ? `${head.tree_size} entrées, racine ${String(head.root_hash).slice(0, 16)}…` : "la signature de la tête ne correspond pas" };
  });
  return results;
}
