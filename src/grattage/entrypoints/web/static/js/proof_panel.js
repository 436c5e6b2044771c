// The ticket's proof panel (game pages, history): for the player, one plain French sentence on
// what the proof shows and a button that checks it in the page itself (proof_check.js,
// WebCrypto only) once the ticket is finished, the verdict in plain words; for experts, folded
// in one « Pour les experts »: the block's commitment, its number in the public log and its
// fingerprint, each check one by one, the draw's numbers (proof_draw.js) and the commands that
// check the proof offline. No command, log index or witness round in the plain part.
import { api } from "./api.js";
import { formatCount } from "./money.js";
import { checkProof, ed25519Supported, fromHex } from "./proof_check.js";
import { el, handleError } from "./ui.js";

const CHECKS = {
  key: "Clé de l'opérateur : celle que publie le journal",
  receipt: "Reçu de vente signé par l'opérateur",
  commitment: "Engagement du bloc signé, tableau de lots conforme à son empreinte",
  agreement: "Reçu, engagement et ticket concordent",
  unit: "Votre unité et son gain sont sous la racine de l'engagement",
  "commitment-entry": "Engagement inscrit au journal public",
  "receipt-entry": "Reçu inscrit au journal public",
  order: "Engagement publié au journal avant la vente",
  head: "Tête du journal signée par l'opérateur",
  "draw-previous": "Reçu enchaîné sur le reçu précédent du bloc : aucune vente insérée",
  "draw-entry": "Tirage de votre vente inscrit au journal public",
  "draw-round": "Tour du témoin signé par le témoin, à l'heure prévue",
  "draw-round-link": "Tour du témoin relié à la tête de sa chaîne, publiée d'avance",
  "draw-cosigned": "Vente inscrite au journal avant que le tour soit connu (tête cosignée par le témoin)",
  "draw-link": "Maillon de l'opérateur : celui de la chaîne engagée avant la vente",
  "draw-slot": "Case tirée recalculée à partir du tour, du maillon et du reçu",
  "draw-unit": "Votre unité est celle que le tirage met dans votre case",
};

const plural = (items) => (items.length > 1 ? "s" : "");

/** What a hash walk left to verify-ticket would have shown (proof_draw.js skips only these). */
const LEFT_OFFLINE = {
  "draw-round-link": "ce tour descend bien de la chaîne que le témoin a publiée d'avance",
  "draw-link": "ce maillon est bien celui de la chaîne que l'opérateur a engagée avant la vente",
};

/** A drawn ticket's draw verdict in plain French (its numbers grouped the French way), and what
 *  an expert should know beside it (the commands, the witness's round): {state, plain, expert}. */
export function drawSentences(facts, draws = []) {
  if (facts.verified === true) {
    const late = facts.late ? " Le tirage a eu lieu un peu plus tard que prévu, sans effet sur le résultat." : "";
    return {
      state: "ok",
      plain: `Tirage vérifié : votre ticket est le n°\u00a0${formatCount(facts.unit)} de son bloc, tiré au hasard après votre achat parmi les ${formatCount(facts.size - facts.n)} tickets encore invendus.${late}`,
      expert: `Tiré par le tour n°\u00a0${formatCount(facts.round)} du témoin, publié après la vente${facts.late ? " (un tour plus tard que prévu : la vente n'avait pas encore été cosignée à temps)" : ""}. Qu'aucune autre vente n'ait reçu cette unité, une preuve seule ne peut le montrer : « grattage verify-ticket --log … --replay » et le moniteur du journal le vérifient.`,
    };
  }
  if (facts.verified === null) {
    const left = draws.filter((result) => result.skipped).map((result) => LEFT_OFFLINE[result.id]);
    return {
      state: "partial",
      plain: `Tirage vérifié en partie : votre ticket est bien le n°\u00a0${formatCount(facts.unit)} que donne le tirage au sort ; le reste demande trop de calculs pour la page (voir « Pour les experts »).`,
      expert: `Tour n°\u00a0${formatCount(facts.round)} du témoin. Reste à vérifier, avec « grattage verify-ticket », que ${left.join(" et que ")} (trop d'empreintes SHA-256 pour la page).`,
    };
  }
  const first = draws.find((result) => result.ok === false);
  return { state: "failed", plain: `Tirage non vérifié : ${first.detail}.`, expert: null };
}

const MARKS = { true: "✓", false: "✗", null: "–" };
const STATES = { true: "ok", false: "failed", null: "skipped" };

const short = (hex) => `${String(hex).slice(0, 8)}…`;

function copyButton(value, label) {
  const button = el("button", { class: "btn small ghost copy", type: "button", text: "Copier", "aria-label": label });
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(value);
      button.textContent = "Copié ✓";
    } catch {
      button.textContent = "Copie impossible : sélectionnez le texte";
    }
  });
  return button;
}

export class ProofPanel {
  /** ``standalone``: the page's one panel (its parts keep their ids); the history shows one
   * panel per ticket, without ids (they would repeat). */
  constructor(root, { standalone = true } = {}) {
    this.root = root;
    this.idOf = (name) => (standalone ? name : null);
    this.ticket = null;
    this.receipt = null;
    this.proof = null;
    this.generation = 0; // bumped per ticket shown: a late answer for an older one is dropped
  }

  hide() {
    this.generation += 1;
    this.ticket = null;
    this.receipt = null;
    this.proof = null;
    this.root.hidden = true;
    this.root.replaceChildren();
  }

  /** At purchase (or when a ticket is resumed or replayed): what the receipt says. */
  async show(ticket) {
    this.hide();
    const receipt = ticket.receipt;
    if (!receipt) return; // sold before the transparency log: the history page offers its v1 proof
    this.ticket = ticket;
    this.receipt = receipt;
    const generation = this.generation;
    let commitment = null;
    try {
      const answer = await api.logEntry(receipt.commitment_index);
      commitment = answer.entries[0]?.entry?.commitment ?? null;
    } catch (error) {
      handleError(error);
    }
    if (this.generation !== generation) return; // another ticket was bought meanwhile
    this.render(ticket, receipt, commitment);
  }

  render(ticket, receipt, commitment) {
    const root = commitment?.root;
    const fileName = `ticket-${ticket.id}-preuve.json`;
    this.verifyButton = el("button", { class: "btn small primary", type: "button", id: this.idOf("verify-in-browser"), text: "Vérifier dans le navigateur" });
    this.verifyButton.addEventListener("click", () => this.verify());
    this.downloadButton = el("button", { class: "btn small ghost", type: "button", text: "Télécharger la preuve" });
    this.downloadButton.addEventListener("click", () => this.download(fileName));
    this.hint = el("p", { class: "hint", text: "" });
    this.results = el("ul", { class: "proof-checks", "aria-live": "polite" });
    this.expertNote = el("p", { class: "proof-expert-note", hidden: true });
    this.drawFacts = el("div", { class: "draw-expert" });
    const expert = (term, value) => [el("dt", { text: term }), el("dd", {}, el("code", { text: String(value) }))];
    this.root.replaceChildren(
      el("h2", { id: this.idOf("proof-title"), text: "D'où vient ce ticket" }),
      el("p", { class: "proof-lead", text: receipt.beacon
        ? "Cette preuve montre que personne, pas même nous, ne pouvait choisir le résultat de votre ticket : il a été tiré au hasard après votre achat, parmi des tickets fixés et publiés à l'avance."
        : "Cette preuve montre que le résultat de votre ticket était fixé et publié avant votre achat : personne, pas même nous, ne pouvait le changer ensuite." }),
      el("p", { class: "proof-plain", text: "Le bouton ci-dessous la vérifie ici même, dans votre navigateur, sans rien installer." }),
      el("div", { class: "proof-actions" }, this.verifyButton, this.downloadButton),
      this.hint,
      el("details", { class: "proof-expert" },
        el("summary", { text: "Pour les experts" }),
        el("p", { class: "proof-commitment" },
          `Ce ticket a été tiré d'un bloc scellé et publié avant sa vente : engagement n°\u00a0${receipt.commitment_index} du journal public`,
          root ? " (empreinte " : "",
          root ? el("code", { class: "fingerprint", title: root, text: short(root) }) : null,
          root ? ")." : ".",
          root ? " " : "",
          root ? copyButton(root, "Copier l'empreinte complète de l'engagement") : null,
          receipt.beacon
            ? ` Son unité a été tirée après la vente, par le tour n°\u00a0${receipt.beacon.round} d'un témoin indépendant que personne ne connaissait au moment de l'achat.`
            : "",
        ),
        this.expertNote,
        el("h3", { class: "proof-expert-title", text: "Les vérifications une à une" }),
        this.results,
        this.drawFacts,
        el("h3", { class: "proof-expert-title", text: "Le reçu" }),
        el("dl", {},
          ...expert("Bloc", receipt.block_id),
          ...(root ? expert("Racine de Merkle engagée", root) : []),
          ...(commitment ? expert("Empreinte du tableau de lots (SHA-256)", commitment.table_sha256) : []),
          ...expert("Vente n° (dans le bloc, depuis 0)", receipt.sequence),
          ...(receipt.beacon
            ? [
                ...expert("Tirée au tour du témoin n°", receipt.beacon.round),
                ...expert("Chaîne du témoin", receipt.beacon.chain_id),
                ...expert("Reçu précédent du bloc (SHA-256)", receipt.previous),
              ]
            : expert("Position de l'unité", receipt.position)),
          ...expert("Clé de l'opérateur (key_id)", receipt.key_id),
          ...expert("Signature du reçu (Ed25519)", receipt.signature),
        ),
        el("p", { text: "Vérifiez la preuve hors ligne, contre la tête du journal publiée :" }),
        el("code", { class: "command", text: `grattage verify-ticket ${fileName} --log ${location.origin}` }),
        el("p", { text: "Pour être sûr que tout le monde voit le même journal, comparez-le avec celui d'un observateur indépendant :" }),
        el("code", { class: "monitor-command", text: "grattage monitor" }),
      ),
    );
    this.root.hidden = false;
    this.setFinished(ticket.state === "finished");
  }

  /** The proof (its unit's salt tells the prize) exists only once the ticket is finished. */
  setFinished(finished) {
    if (!this.verifyButton) return;
    this.verifyButton.disabled = !finished;
    this.downloadButton.disabled = !finished;
    this.hint.textContent = finished ? "" : "La vérification complète sera possible une fois le ticket terminé.";
  }

  finished(ticket) {
    if (this.ticket?.id !== ticket.id) return;
    this.ticket = ticket;
    this.setFinished(true);
  }

  async loadProof() {
    if (this.proof) return this.proof;
    const generation = this.generation;
    const proof = await api.proof(this.ticket.id);
    if (this.generation === generation) this.proof = proof;
    return proof;
  }

  /** A drawn ticket's draw in one plain French line, its numbers and commands for experts. */
  showDraw(results, facts) {
    this.drawVerdict?.remove();
    this.drawVerdict = null;
    this.expertNote.hidden = true;
    this.expertNote.textContent = "";
    this.drawFacts.replaceChildren();
    const draws = results.filter((result) => result.id.startsWith("draw-"));
    if (!draws.length) return;
    const { state, plain, expert: note } = drawSentences(facts, draws);
    this.drawVerdict = el("p", { class: `draw-verdict ${state}`, id: this.idOf("draw-verdict"), "data-state": state, text: plain });
    this.hint.before(this.drawVerdict); // the draw's verdict first, then what it means for the whole
    if (note) {
      this.expertNote.textContent = note;
      this.expertNote.hidden = false;
    }
    if (facts.slot === undefined) return;
    const expert = (term, value) => [el("dt", { text: term }), el("dd", {}, el("code", { text: String(value) }))];
    this.drawFacts.replaceChildren(
      el("h3", { class: "proof-expert-title", text: "Le tirage" }),
      el("dl", {},
        ...expert("Valeur du tour w_r (témoin)", facts.roundValue),
        ...expert("Maillon d_{n+1} (opérateur)", facts.link),
        ...expert("K = SHA-256(w_r ‖ d_{n+1})", facts.key),
        ...expert("Vente n (depuis 0) / taille du bloc N", `${facts.n} / ${facts.size}`),
        ...expert("Case j tirée dans [n, N)", facts.slot),
        ...expert("Essais HMAC (échantillonnage par rejet)", facts.attempts),
        ...expert("Unité donnée par l'échange des cases n et j", facts.unit ?? "—"),
      ),
    );
  }

  async download(fileName) {
    try {
      const proof = await this.loadProof();
      const link = el("a", {
        href: URL.createObjectURL(new Blob([JSON.stringify(proof, null, 2)], { type: "application/json" })),
        download: fileName,
      });
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
    } catch (error) {
      handleError(error);
    }
  }

  async verify() {
    const { ticket, receipt, generation } = this;
    this.verifyButton.disabled = true;
    this.results.replaceChildren();
    this.showDraw([], {}); // a second check starts from a blank verdict
    this.hint.textContent = "Vérification en cours…";
    try {
      const [proof, logKey] = await Promise.all([this.loadProof(), api.logKey()]);
      if (this.generation !== generation) return;
      if (!(await ed25519Supported(fromHex(logKey.public_key, 32)))) {
        this.hint.textContent = "Votre navigateur ne sait pas vérifier les signatures Ed25519 (WebCrypto) : "
          + "téléchargez la preuve ; « Pour les experts » dit comment la vérifier hors ligne.";
        return;
      }
      const drawFacts = {};
      const onProgress = (text) => {
        if (this.generation === generation) this.hint.textContent = `Vérification du tirage en cours… ${text}`;
      };
      const results = await checkProof(proof, logKey, { receipt, prizeCents: ticket.prize_cents, onProgress, drawFacts });
      if (this.generation !== generation) return;
      this.results.replaceChildren(...results.map((result) => el("li", {
        class: STATES[result.ok],
        "data-check": result.id,
        "data-ok": result.skipped ? "skipped" : String(result.ok),
      }, el("span", { class: "mark", "aria-hidden": "true", text: MARKS[result.ok] }),
      ` ${CHECKS[result.id]}${result.ok === false ? " : ÉCHEC" : result.skipped ? " : non vérifié ici" : ""} — `,
      el("span", { class: "check-detail", text: result.detail }))));
      this.showDraw(results, drawFacts);
      const failed = results.some((result) => result.ok === false);
      const skipped = results.filter((result) => result.skipped);
      this.root.dataset.verified = failed ? "false" : skipped.length ? "partial" : "true";
      this.hint.textContent = failed
        ? "Au moins une vérification a échoué : conservez la preuve et contactez-nous."
        : skipped.length
          ? `Tout ce que votre navigateur a vérifié est correct, mais ${skipped.length} vérification${plural(skipped)} (marquée${plural(skipped)} –) demande${skipped.length > 1 ? "nt" : ""} trop de calculs pour la page : `
            + "téléchargez la preuve ; « Pour les experts » dit comment la vérifier hors ligne."
          : "Tout est vérifié, dans votre navigateur : ce ticket est bien celui qui était prévu, avec le gain prévu.";
    } catch (error) {
      this.hint.textContent = "";
      handleError(error);
    } finally {
      if (this.generation === generation) this.verifyButton.disabled = false;
    }
  }
}
