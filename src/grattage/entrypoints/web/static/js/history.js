// History: the player's tickets, newest first, each one a click away from its replay.
import { api } from "./api.js";
import { formatEuros } from "./money.js";
import { gameTitle, loadGames, ticketPage } from "./catalogue.js";
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

// « Vérifier ce ticket »: the server's proof that this ticket was one unit of a block committed
// before sale, saved as a file the player checks offline with `grattage verify-ticket`.
async function verify(button) {
  const ticketId = button.dataset.verify;
  const row = button.closest(".history-row");
  button.disabled = true;
  try {
    const proof = await api.proof(ticketId);
    const fileName = `ticket-${ticketId}-preuve.json`;
    const link = el("a", {
      class: "btn small primary",
      href: URL.createObjectURL(new Blob([JSON.stringify(proof, null, 2)], { type: "application/json" })),
      download: fileName,
      text: "Télécharger la preuve",
    });
    row.querySelector(".proof")?.remove();
    row.append(el("div", { class: "proof", role: "status" },
      el("p", { text: `Position ${(proof.unit ?? proof).position.toLocaleString("fr-FR")} (comptée depuis 0) parmi les ${proof.commitment.size.toLocaleString("fr-FR")} unités du bloc ${proof.commitment.block_id.slice(0, 12)}…, engagé avant la vente (racine ${proof.commitment.root.slice(0, 16)}…${proof.log ? `, engagement n° ${proof.log.commitment_entry.index} du journal public` : ""}).` }),
      el("p", { text: "Vérifiez-la vous-même, hors ligne, contre le journal public (ou dans votre navigateur avec « Revoir ») :" }),
      el("code", { text: `grattage verify-ticket ${fileName} --log ${location.origin}` }),
      link,
    ));
  } catch (error) {
    handleError(error);
  } finally {
    button.disabled = false;
  }
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
