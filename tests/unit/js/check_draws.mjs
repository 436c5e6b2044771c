// Runs the page's own checkers (src/grattage/entrypoints/web/static/js) in Node, for
// tests/unit/test_js_draw_check.py: reads a JSON job on stdin, writes the answers on stdout.
//   { "unit_draws": [...draw_vectors.json's], "proofs": [{ "proof", "log_key" }], "walk_limit",
//     "walks": [{ "value", "times", "limit" }] }
import { checkProof } from "../../../src/grattage/entrypoints/web/static/js/proof_check.js";
import { drawIndex, WALK_LIMIT } from "../../../src/grattage/entrypoints/web/static/js/proof_draw.js";
import { fromHex, hashTimes, toHex } from "../../../src/grattage/entrypoints/web/static/js/proof_bytes.js";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const job = JSON.parse(Buffer.concat(chunks).toString("utf-8"));

const unitDraws = [];
for (const vector of job.unit_draws ?? []) {
  const receiptHash = fromHex(vector.receipt_hash, 32);
  const { j, attempts, key } = await drawIndex(
    fromHex(vector.w_r, 32), fromHex(vector.d_next, 32), fromHex(vector.block_id, 16),
    BigInt(vector.n), BigInt(vector.size), receiptHash,
  );
  unitDraws.push({ K: toHex(key), j: String(j), attempts });
}

const proofs = [];
for (const { proof, log_key: logKey } of job.proofs ?? []) {
  const drawFacts = {};
  const results = await checkProof(proof, logKey, { drawFacts, walkLimit: job.walk_limit ?? WALK_LIMIT });
  proofs.push({ results, facts: drawFacts });
}
const walks = [];
for (const { value, times, limit } of job.walks ?? []) {
  const progress = [];
  const down = await hashTimes(fromHex(value, 32), times, { limit: limit ?? Infinity, onProgress: (done) => progress.push(done) });
  walks.push({ value: down === null ? null : toHex(down), progress });
}
process.stdout.write(JSON.stringify({ unit_draws: unitDraws, proofs, walks }));
