// The draw of a drawn ticket's proof (docs/fairness.md, "A drawn ticket's proof", checks 6a–6h),
// recomputed in the page with WebCrypto only, as docs/draw.md specifies it and
// grattage/blocks/proof_draw.py computes it: which unit the sale got, from the witness's round
// and the operator's link. Every check answers { id, ok, detail } and never throws; a hash walk
// too long for the page answers { ok: null, skipped: true } and says what is left to the
// offline checker.

import {
  ascii, canonicalJson, concat, documentSigned, fromHex, hashTimes, hmacSha256, includedEntry,
  sameBytes, sha256, toHex, u32, u64, unitLeafV2, verifyConsistency,
} from "./proof_bytes.js";

const DRAW_CONTEXT = ascii.encode("grattage/draw/1\u0000");
const TWO_64 = 1n << 64n;

/** The most SHA-256 one walk down a hash chain may take in the page: WebCrypto hashes a
 * 32-byte link one await at a time, 105 000 – 185 000 a second in Chromium 156 here (2 cores at
 * a load of 14, 2026-12-01), so at most 1.4 – 2.4 s a walk. The last sale of a 12 000 000-unit
 * block would take a minute or two: beyond this the page says so and leaves it to
 * `grattage verify-ticket` (3 s in Python). */
export const WALK_LIMIT = 250_000;

/**
 * docs/draw.md, "The unit of sale n": j in [n, size) from w_r, d_{n+1}, the block id, n, the
 * block's size and H. n and size as BigInt (a block may exceed 2^53 units).
 * @returns {{ j: bigint, attempts: number, key: Uint8Array }}
 */
export async function drawIndex(wR, dNext, blockId, n, size, receiptHash) {
  if (wR.length !== 32 || dNext.length !== 32 || blockId.length !== 16 || receiptHash.length !== 32) {
    throw new Error("w_r, d_{n+1} et H font 32 octets, l'identifiant du bloc 16");
  }
  if (n < 0n || n >= size) throw new Error(`la vente ${n} n'est pas dans un bloc de ${size} unités`);
  const key = await sha256(concat(wR, dNext));
  const prefix = concat(DRAW_CONTEXT, blockId, u64(n), receiptHash);
  const bound = size - n;
  const limit = TWO_64 - (TWO_64 % bound);
  for (let c = 0; c < 2 ** 32; c += 1) {
    const word = await hmacSha256(key, concat(prefix, u32(c)));
    const x = new DataView(word.buffer).getBigUint64(0);
    if (x < limit) return { j: n + (x % bound), attempts: c + 1, key };
  }
  throw new Error("aucun tirage accepté en 2^32 essais");
}

const isCount = (value, low = 0) => Number.isSafeInteger(value) && value >= low;

/** A witness document (beacon-chain, beacon-round, cosignature) of `format`, naming and signed
 * by the witness key of the commitment. */
async function witnessSigned(kind, format, document, witnessKey, witnessKeyId) {
  if (!document || document.format !== format) throw new Error(`ce n'est pas un document ${format}`);
  if ((document.key_id ?? document.witness_key_id) !== witnessKeyId) throw new Error(`le document ${kind} nomme une autre clé que celle du témoin`);
  if (!(await documentSigned(kind, document, witnessKey))) throw new Error(`la signature du document ${kind} ne correspond pas à la clé du témoin`);
  return document;
}

/** The unit slot `slot` held before sale n's swap: its own, or the one the draw that last set
 * it put there (an entry of the log, included in the head). */
async function unitBefore(draw, member, setter, slot, n, blockId, head) {
  if (setter === null) {
    if (draw[member] != null) throw new Error(`le tirage ne nomme aucune vente pour la case ${slot}, la preuve en donne une`);
    return slot;
  }
  const entry = await includedEntry(draw[member], "sale.drawn", head, `le tirage qui a rempli la case ${slot}`);
  if (entry.block_id !== blockId || entry.sequence !== setter || !(setter < n)) throw new Error(`le tirage qui a rempli la case ${slot} n'est pas celui de la vente n° ${setter}`);
  if (entry.slot !== slot) throw new Error(`le tirage de la vente n° ${setter} n'a pas rempli la case ${slot}`);
  return entry.slot_unit;
}

/**
 * The checks of a drawn ticket's draw, in order, as [{ id, ok, detail, skipped? }], with what a
 * summary needs in `facts`.
 * @param proof the grattage-ticket-proof/2 of a drawn block's ticket
 * @param head the proof's signed head (its signature is checked by proof_check.js)
 * @param signedAt (kind, document, index) => Promise<boolean>: signed by the operator key in force there
 * @param headSigned (sth) => Promise<boolean>: a tree head signed by the operator key in force at its size
 */
export async function checkDraw(proof, { head, signedAt, headSigned, walkLimit = WALK_LIMIT, onProgress = null }) {
  const results = [];
  const facts = {};
  const check = async (id, run) => {
    try {
      results.push({ id, ...(await run()) });
    } catch (error) {
      results.push({ id, ok: false, detail: error instanceof Error ? error.message : String(error) });
    }
  };
  const walked = (what) => (done, total) => onProgress?.(`${what} : ${done.toLocaleString("fr-FR")} empreintes sur ${total.toLocaleString("fr-FR")}`);
  const skipped = (what, times) => ({
    ok: null,
    skipped: true,
    detail: `non vérifié dans le navigateur : ${what} demande ${times.toLocaleString("fr-FR")} empreintes SHA-256 (plus de ${walkLimit.toLocaleString("fr-FR")}, trop long pour la page) ; la commande « grattage verify-ticket » le vérifie`,
  });
  const commitment = proof?.commitment ?? {};
  const receipt = proof?.receipt ?? {};
  const draw = proof?.draw ?? {};
  const receiptIndex = proof?.log?.receipt_entry?.index;
  const size = commitment.size;
  const n = receipt.sequence;
  let drawn = null;
  let chain = null;
  let value = null;
  let link = null;

  await check("draw-previous", async () => {
    if (commitment.draw !== "grattage-draw/1" || receipt.format !== "grattage-receipt/2") throw new Error("le reçu d'un bloc tiré est un grattage-receipt/2");
    if (!isCount(size, 1) || commitment.chain_length !== size) throw new Error("la chaîne de l'engagement n'est pas aussi longue que son bloc");
    if (!isCount(n) || n >= size) throw new Error(`la vente ${n} n'est pas dans un bloc de ${size} unités`);
    let previous;
    let detail;
    if (n === 0) {
      if (draw.previous_entry != null) throw new Error("la vente n° 0 n'a pas de reçu précédent");
      previous = await sha256(ascii.encode(canonicalJson(commitment)));
      detail = "premier reçu du bloc, enchaîné sur son engagement";
    } else {
      const entry = await includedEntry(draw.previous_entry, "sale.receipt", head, "le reçu précédent");
      const at = draw.previous_entry.index;
      const before = entry.receipt;
      if (!(await signedAt("receipt", before, at))) throw new Error("le reçu précédent n'est pas signé par la clé en vigueur à son entrée");
      if (before?.block_id !== commitment.block_id || before?.sequence !== n - 1 || !(at < receiptIndex)) throw new Error(`le reçu précédent n'est pas celui de la vente n° ${n - 1} de ce bloc`);
      previous = await sha256(ascii.encode(canonicalJson(before)));
      detail = `enchaîné sur le reçu de la vente n° ${n - 1} (entrée n° ${at})`;
    }
    if (!sameBytes(fromHex(receipt.previous, 32), previous)) throw new Error("le reçu ne s'enchaîne pas sur le reçu précédent du bloc : il a été inséré ou modifié");
    return { ok: true, detail };
  });
  await check("draw-entry", async () => {
    const entry = await includedEntry(draw.drawn_entry, "sale.drawn", head, "le tirage de la vente");
    const expected = {
      block_id: commitment.block_id,
      commitment_index: receipt.commitment_index,
      sequence: n,
      receipt_index: receiptIndex,
      receipt_sha256: toHex(await sha256(ascii.encode(canonicalJson(receipt)))),
    };
    const differing = Object.keys(expected).filter((name) => entry[name] !== expected[name]);
    if (differing.length) throw new Error(`le tirage ne concorde pas avec le reçu : ${differing.join(", ")}`);
    drawn = entry;
    return { ok: true, detail: `entrée n° ${draw.drawn_entry.index}, tour n° ${entry.beacon?.round}` };
  });
  const witnessKey = fromHex(commitment.witness_key ?? "", 32);
  const witnessKeyId = toHex(await sha256(witnessKey));
  await check("draw-round", async () => {
    if (!drawn) throw new Error("sans tirage inscrit au journal, pas de tour à vérifier");
    const chainDoc = await witnessSigned("beacon-chain", "grattage-beacon-chain/1", draw.chain, witnessKey, witnessKeyId);
    const chainHead = fromHex(chainDoc.head, 32);
    if (chainDoc.chain_id !== toHex(await sha256(chainHead))) throw new Error("le chain_id de la chaîne n'est pas l'empreinte de sa tête");
    if (!isCount(chainDoc.length, 1) || !isCount(chainDoc.start_ms) || !isCount(chainDoc.period_ms, 1)) throw new Error("la chaîne du témoin est mal formée");
    const round = await witnessSigned("beacon-round", "grattage-beacon-round/1", draw.round, witnessKey, witnessKeyId);
    if (round.chain_id !== chainDoc.chain_id) throw new Error("le tour appartient à une autre chaîne");
    if (!isCount(round.round, 1) || round.round > chainDoc.length) throw new Error(`le tour ${round.round} est hors de la chaîne`);
    if (round.time_ms !== chainDoc.start_ms + (round.round - 1) * chainDoc.period_ms) throw new Error(`l'heure du tour ${round.round} n'est pas celle du calendrier de la chaîne`);
    if (round.chain_id !== drawn.beacon?.chain_id || round.round !== drawn.beacon?.round) throw new Error(`le tour donné n'est pas le tour n° ${drawn.beacon?.round} que nomme le tirage`);
    const own = receipt.beacon ?? {};
    if (own.chain_id === round.chain_id && own.round > round.round) throw new Error(`la vente du tour ${own.round} a été tirée avec le tour antérieur ${round.round}`);
    chain = { ...chainDoc, head: chainHead };
    value = fromHex(round.value, 32);
    facts.round = round.round;
    facts.late = own.chain_id !== round.chain_id || own.round !== round.round;
    facts.roundValue = round.value;
    const late = facts.late ? ` (en retard : son reçu nommait le tour n° ${own.round})` : "";
    return { ok: true, detail: `tour n° ${round.round} signé par le témoin, à l'heure de sa chaîne${late}` };
  });
  await check("draw-round-link", async () => {
    if (!value) throw new Error("sans tour vérifié, pas de maillon à vérifier");
    const down = await hashTimes(value, facts.round, { limit: walkLimit, onProgress: walked("tour du témoin") });
    if (down === null) return skipped(`remonter le tour n° ${facts.round} à la tête de la chaîne du témoin`, facts.round);
    if (!sameBytes(down, chain.head)) throw new Error(`la valeur du tour ${facts.round} ne redescend pas à la tête de la chaîne du témoin`);
    return { ok: true, detail: `${facts.round.toLocaleString("fr-FR")} empreinte${facts.round > 1 ? "s" : ""} jusqu'à la tête signée de la chaîne` };
  });
  await check("draw-cosigned", async () => {
    if (!chain) throw new Error("sans tour vérifié, pas de tête cosignée à vérifier");
    const sth = draw.cosigned?.sth ?? {};
    if (!(await headSigned(sth))) throw new Error("la tête cosignée n'est pas signée par la clé de l'opérateur en vigueur à sa taille");
    const cosignature = await witnessSigned("cosignature", "grattage-cosignature/1", draw.cosigned?.cosignature, witnessKey, witnessKeyId);
    if (cosignature.tree_size !== sth.tree_size || cosignature.root_hash !== sth.root_hash || cosignature.sth_timestamp !== sth.timestamp) {
      throw new Error("la cosignature est celle d'une autre tête");
    }
    if (cosignature.chain_id !== chain.chain_id || cosignature.round !== facts.round) throw new Error("la tête cosignée l'est pour un autre tour");
    if (!isCount(cosignature.time_ms) || cosignature.time_ms >= chain.start_ms + (facts.round - 1) * chain.period_ms) {
      throw new Error(`la tête a été cosignée après la publication du tour ${facts.round}`);
    }
    if (!(sth.tree_size > receiptIndex)) throw new Error(`la tête cosignée pour le tour ${facts.round} ne contient pas le reçu : il a été inscrit après que le tour pouvait être connu`);
    const consistency = (draw.consistency ?? []).map((node) => fromHex(node, 32));
    if (!(await verifyConsistency(sth.tree_size, head.tree_size, fromHex(sth.root_hash, 32), fromHex(head.root_hash, 32), consistency))) {
      throw new Error("la tête de la preuve ne prolonge pas la tête que le témoin a cosignée");
    }
    return { ok: true, detail: `tête de ${sth.tree_size} entrées cosignée avant le tour, reçu n° ${receiptIndex} compris` };
  });
  await check("draw-link", async () => {
    if (!drawn) throw new Error("sans tirage inscrit au journal, pas de maillon à vérifier");
    link = fromHex(drawn.link, 32);
    const down = await hashTimes(link, n + 1, { limit: walkLimit, onProgress: walked("maillon de l'opérateur") });
    if (down === null) return skipped(`redescendre le maillon ${n + 1} de l'opérateur jusqu'à d_0 de l'engagement`, n + 1);
    if (!sameBytes(down, fromHex(commitment.chain_head, 32))) throw new Error(`le maillon du tirage n'est pas le maillon ${n + 1} de la chaîne engagée`);
    return { ok: true, detail: `maillon ${n + 1} : ${(n + 1).toLocaleString("fr-FR")} empreinte${n ? "s" : ""} jusqu'à d_0 de l'engagement` };
  });
  await check("draw-slot", async () => {
    if (!value || !link) throw new Error("sans tour et sans maillon, pas de tirage à refaire");
    const receiptHash = await sha256(ascii.encode(canonicalJson(receipt)));
    const { j, attempts, key } = await drawIndex(value, link, fromHex(commitment.block_id, 16), BigInt(n), BigInt(size), receiptHash);
    if (drawn.slot !== Number(j)) throw new Error(`la case recalculée avec le tour, le maillon et le reçu est ${j}, pas ${drawn.slot}`);
    Object.assign(facts, { n, size, slot: Number(j), attempts, key: toHex(key), link: drawn.link });
    return { ok: true, detail: `case ${j} tirée parmi les cases ${n} à ${size - 1}` };
  });
  await check("draw-unit", async () => {
    if (facts.slot === undefined) throw new Error("sans case recalculée, pas d'unité à vérifier");
    const j = facts.slot;
    const unitN = await unitBefore(draw, "n_set_entry", drawn.n_set_by, n, n, commitment.block_id, head);
    let unitJ = unitN;
    if (j === n) {
      if (drawn.j_set_by !== drawn.n_set_by || draw.j_set_entry != null) throw new Error("la case j est la case n : elle a le même auteur");
    } else {
      unitJ = await unitBefore(draw, "j_set_entry", drawn.j_set_by, j, n, commitment.block_id, head);
    }
    if (drawn.unit !== unitJ || drawn.slot_unit !== unitN) throw new Error(`l'échange des cases ${n} et ${j} donne à la vente l'unité ${unitJ}, le tirage dit ${drawn.unit}`);
    const unit = proof.unit ?? {};
    if (unit.position !== unitJ) throw new Error(`la preuve montre l'unité ${unit.position}, le tirage a donné l'unité ${unitJ}`);
    const leaf = await unitLeafV2(fromHex(commitment.block_id, 16), unit.position, unit.tier, unit.prize_cents, fromHex(unit.salt, 32));
    if (toHex(leaf) !== drawn.leaf) throw new Error("la feuille de l'unité n'est pas celle que le tirage a inscrite");
    facts.unit = unitJ;
    return { ok: true, detail: `l'échange des cases ${n} et ${j} vous donne l'unité n° ${unitJ}, celle du chemin de Merkle` };
  });
  // The page's « Tirage vérifié » line: only when every check of the draw holds; null when
  // none failed but a walk was left to verify-ticket.
  facts.verified = results.some((result) => result.ok === false) ? false : results.every((result) => result.ok === true) ? true : null;
  return { results, facts };
}
