// History: the player's tickets, newest first, each one a click away from its replay.
import { api } from "./api.js";
import { formatEuros } from "./money.js";
import { gameTitle, loadGames, ticketPage } from "./catalogue.js";
import { ProofPanel } from "./proof_panel.js";
import { signById } from "./signs.js";
import { $, el, formatDate, handleError, startPage } from "./ui.js";

let next = null;
let games = [];

function row(ticket) {
  const finished = ticket.state === "finished";
  const sign = ticket.sign ? signById(ticket.sign)?.name : null;
  const won = finished && ticket.prize_cents > 0;
  const page = ticketPage(games, ticket.game, ticket.id);
  return el("li", { class: `history-row ${won ? "won" : ""}`, "data-ticket-id": ticket.id },
    el("div", { class: "row-main" },
      el("strong", { text: `${gameTitle(games, ticket.game)}${sign ? ` · ${sign}` : ""}` }),
      el("span", { class: "row-date", text: `n° ${ticket.id} · ${formatDate(ticket.created_at)}` }),
    ),
    el("div", { class: "row-money" },
      el("span", { text: `Mise ${formatEuros(ticket.stake_cents, { alwaysDecimals: true })}` }),
      el("span", {
        class: "row-prize",
        "data-cents": finished ? ticket.prize_cents : null,
        text: finished ? (won ? `Gain ${formatEuros(ticket.prize_cents)}` : "Perdu") : "En cours",
      }),
      ticket.balance_after_cents !== null && ticket.balance_after_cents !== undefined
        ? el("span", { class: "row-balance", text: `Solde ${formatEuros(ticket.balance_after_cents, { alwaysDecimals: true })}` })
        : null,
    ),
    page ? el("a", { class: `btn small ${finished ? "ghost" : "primary"}`, href: page, text: finished ? "Revoir" : "Reprendre" }) : null,
    finished
      ? el("button", { class: "btn small ghost verify", type: "button", text: "Vérifier ce ticket", "data-verify": ticket.id })
      : null,
  );
}

// « Vérifier ce ticket »: the same panel as under a game's ticket (proof_panel.js) — what the
// proof shows in one plain sentence, its check run in the page at once, the details and the
// offline command folded for experts. A ticket sold before the transparency log has no receipt:
// its v1 proof is explained the same way and offered as a file.
async function verify(button) {
  const ticketId = button.dataset.verify;
  const row = button.closest(".history-row");
  button.disabled = true;
  try {
    const ticket = await api.ticket(ticketId);
    row.querySelector(".proof")?.remove();
    const section = el("section", { class: "proof proof-panel", "aria-label": `Preuve du ticket n° ${ticketId}` });
    row.append(section);
    if (ticket.receipt) {
      const panel = new ProofPanel(section, { standalone: false });
      await panel.show(ticket);
      panel.finished(ticket);
      await panel.verify();
    } else {
      legacyProof(section, ticketId, await api.proof(ticketId));
    }
  } catch (error) {
    handleError(error);
  } finally {
    button.disabled = false;
  }
}

function legacyProof(section, ticketId, proof) {
  const fileName = `ticket-${ticketId}-preuve.json`;
  const { commitment } = proof;
  const link = el("a", {
    class: "btn small primary",
    href: URL.createObjectURL(new Blob([JSON.stringify(proof, null, 2)], { type: "application/json" })),
    download: fileName,
    text: "Télécharger la preuve",
  });
  const expert = (term, value) => [el("dt", { text: term }), el("dd", {}, el("code", { text: String(value) }))];
  section.replaceChildren(
    el("h2", { text: "D'où vient ce ticket" }),
    el("p", { class: "proof-lead", text: `Ce ticket était l'un des ${commitment.size.toLocaleString("fr-FR")} tickets d'un bloc scellé et publié avant sa vente : son résultat était fixé d'avance, et personne, pas même nous, ne pouvait le changer.` }),
    link,
    el("details", { class: "proof-expert" },
      el("summary", { text: "Détails pour les experts" }),
      el("dl", {},
        ...expert("Bloc", commitment.block_id),
        ...expert("Racine de Merkle engagée", commitment.root),
        ...expert("Position de l'unité (depuis 0)", (proof.unit ?? proof).position),
        ...(proof.log ? expert("Engagement n° du journal public", proof.log.commitment_entry.index) : []),
      ),
      el("p", { text: "Vérifiez la preuve hors ligne, contre le journal public :" }),
      el("code", { class: "command", text: `grattage verify-ticket ${fileName} --log ${location.origin}` }),
    ),
  );
}

async function loadPage() {
  const more = $("#more");
  more.disabled = true;
  try {
    const page = await api.history(next);
    $("#tickets").append(...page.tickets.map(row));
    next = page.next;
    more.hidden = !next;
    $("#empty").hidden = $("#tickets").children.length > 0;
  } catch (error) {
    handleError(error);
  } finally {
    more.disabled = false;
  }
}

async function main() {
  $("#more").addEventListener("click", loadPage);
  $("#tickets").addEventListener("click", (event) => {
    const button = event.target.closest("button[data-verify]");
    if (button) verify(button);
  });
  if (!(await startPage())) return;
  try {
    games = await loadGames();
  } catch (error) {
    handleError(error);
    return;
  }
  await loadPage();
}

main();
