// The back office's players: look-up by e-mail, name or number (paged), a player's file
// (account, balance, limits, exclusion, recent tickets and movements), and suspending the
// account or lifting the suspension, with a reason the audit log keeps.
import { $, button, call, cell, code, fact, fail, flash, stateBadge } from "./common.js";
import { MOVEMENTS, PLAYER_STATUSES, TICKET_STATES, count, day, euros, moment } from "./french.js";

const PAGE = 20;
let lastQuery = "";
let nextOffset = null;
let shown = null; // the player whose file is open

function fullName(player) {
  const name = [player.first_name, player.last_name].filter(Boolean).join(" ");
  return name || "—";
}

function playerRow(player) {
  const tr = document.createElement("tr");
  tr.append(
    cell(`#${player.id}`),
    cell(code(player.email), "text"),
    cell(fullName(player), "text"),
    cell(moment(player.created_at), "text"),
    cell(stateBadge(player.status, PLAYER_STATUSES), "text"),
    cell(button("Ouvrir", () => showPlayer(player.id).catch(fail), "secondary", `Ouvrir la fiche de ${player.email}`)),
  );
  return tr;
}

/** The first page of the accounts ``query`` finds (every account for an empty one). */
export async function loadPlayers(query = lastQuery) {
  lastQuery = query;
  const params = new URLSearchParams({ q: query, limit: String(PAGE) });
  const data = await call("GET", `/api/admin/players?${params}`);
  $("player-rows").replaceChildren(...data.players.map(playerRow));
  nextOffset = data.next_offset;
  $("players-more").hidden = nextOffset === null;
  $("players-empty").hidden = data.players.length > 0;
}

async function morePlayers() {
  const params = new URLSearchParams({ q: lastQuery, limit: String(PAGE), offset: String(nextOffset) });
  const data = await call("GET", `/api/admin/players?${params}`);
  $("player-rows").append(...data.players.map(playerRow));
  nextOffset = data.next_offset;
  $("players-more").hidden = nextOffset === null;
}

function limitFacts(label, limit) {
  const pending = limit.pending
    ? ` ; hausse à ${euros(limit.pending.weekly_limit_cents)} le ${moment(limit.pending.effective_at)}`
    : "";
  return fact(
    label,
    `${euros(limit.weekly_limit_cents)} par semaine, ${euros(limit.spent_this_week_cents)} utilisés, ` +
      `${euros(limit.remaining_cents)} restants${pending}`,
  );
}

function exclusionText(exclusion) {
  if (!exclusion.excluded) return "aucune";
  return exclusion.permanent ? "définitive" : `jusqu'au ${moment(exclusion.until)}`;
}

function registerText(listed) {
  if (listed === null) return "non consulté (pas de registre, ou compte sans identité)";
  return listed ? "inscrit au fichier des interdits de jeux" : "non inscrit";
}

function showFile(file) {
  shown = file;
  $("player").hidden = false;
  $("player-title").textContent = `Joueur n° ${file.id} — ${fullName(file)}`;
  const suspension = file.suspension;
  $("player-account").replaceChildren(
    ...fact("E-mail", code(file.email)),
    ...fact("Né(e) le", day(file.birth_date)),
    ...fact("Inscrit le", moment(file.created_at)),
    ...fact("Statut", stateBadge(file.status, PLAYER_STATUSES)),
    ...(suspension
      ? [
          ...fact("Suspendu le", moment(suspension.suspended_at)),
          ...fact("Par", code(suspension.suspended_by)),
          ...fact("Motif", suspension.reason),
        ]
      : []),
    ...fact("Solde", euros(file.balance_cents)),
  );
  $("player-limits").replaceChildren(
    ...limitFacts("Dépôts", file.limits.deposit),
    ...limitFacts("Mises", file.limits.stake),
  );
  $("player-exclusion").replaceChildren(
    ...fact("Auto-exclusion", exclusionText(file.limits.exclusion)),
    ...fact("Registre national (ANJ)", registerText(file.nationally_excluded)),
  );
  const form = $("suspension-form");
  form.reset();
  $("suspension-submit").textContent = suspension ? "Lever la suspension" : "Suspendre le compte";
  $("suspension-submit").className = suspension ? "" : "danger";
  $("suspension-hint").textContent = suspension
    ? "Lever la suspension rend au joueur la connexion, le jeu et les dépôts : il se reconnecte lui-même."
    : "Un compte suspendu ne peut ni se connecter, ni jouer, ni déposer ; ses sessions sont fermées. Ses tickets déjà achetés se terminent et leurs gains sont versés.";
  $("player-tickets").replaceChildren(
    ...file.tickets.map((ticket) => {
      const tr = document.createElement("tr");
      tr.append(
        cell(`#${ticket.id}`),
        cell(ticket.game, "text"),
        cell(euros(ticket.stake_cents)),
        cell(ticket.prize_cents === null ? "—" : euros(ticket.prize_cents)),
        cell(TICKET_STATES[ticket.state] ?? ticket.state, "text"),
        cell(moment(ticket.created_at), "text"),
      );
      return tr;
    }),
  );
  $("player-tickets-empty").hidden = file.tickets.length > 0;
  $("player-movements").replaceChildren(
    ...file.movements.map((movement) => {
      const tr = document.createElement("tr");
      tr.append(
        cell(String(movement.id)),
        cell(MOVEMENTS[movement.kind] ?? movement.kind, "text"),
        cell(euros(movement.amount_cents)),
        cell(movement.ticket_id === null ? "—" : `#${movement.ticket_id}`),
        cell(moment(movement.created_at), "text"),
      );
      return tr;
    }),
  );
  $("player-movements-empty").hidden = file.movements.length > 0;
}

async function showPlayer(playerId) {
  showFile(await call("GET", `/api/admin/players/${playerId}`));
  $("player").scrollIntoView({ behavior: "smooth" });
}

$("player-search").addEventListener("submit", (event) => {
  event.preventDefault();
  loadPlayers(event.target.q.value.trim()).catch(fail);
});

$("players-more").addEventListener("click", () => morePlayers().catch(fail));

$("suspension-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  if (!shown) return;
  const reason = event.target.reason.value.trim();
  const lifting = shown.status === "suspended";
  const question = lifting
    ? `Lever la suspension du compte ${shown.email} ?`
    : `Suspendre le compte ${shown.email} ? Il ne pourra plus se connecter, jouer ni déposer.`;
  if (!confirm(question)) return;
  try {
    const file = await call("POST", `/api/admin/players/${shown.id}/${lifting ? "reinstate" : "suspend"}`, { reason });
    showFile(file);
    flash(lifting ? `Suspension du joueur n° ${file.id} levée.` : `Joueur n° ${file.id} suspendu.`);
    document.dispatchEvent(new Event("grattage:audit-changed"));
    await loadPlayers();
  } catch (error) {
    // The one rule a reason can break (docs/back-office.md): said, not « données refusées ».
    if (error.status === 422) {
      flash("Le motif doit compter de 3 à 500 caractères visibles, sans caractère invisible.", "error");
    } else {
      fail(error);
    }
  }
});
