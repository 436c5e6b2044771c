// The operator's back-office: plain DOM, the JSON API under /api/admin through the pages' one
// fetch wrapper (api.js: the HttpOnly grattage_admin cookie, writes carry X-Grattage-CSRF: 1).
// Everything shown is French (french.js: the API's codes mapped to sentences, counts, money,
// Paris time) with French typography (typography.js). Text goes in with textContent only.
import { loadGames } from "/js/catalogue.js";
import { formatRatio } from "/js/money.js";
import { keepFrenchTypography } from "/js/typography.js";
import { $, button, call, cell, code, fail, flash, onLoggedOut, stateBadge } from "./common.js";
import { ACTIONS, BLOCK_STATES, REPORT_COLUMNS, count, day, euros, moment, percent } from "./french.js";
import { loadPlayers } from "./players.js";

keepFrenchTypography();
onLoggedOut(() => showLogin());

function showLogin() {
  $("login").hidden = false;
  $("office").hidden = true;
  $("who").hidden = true;
}

/** The games the server lists, as the choices of the blocks filter and the emission form. */
async function showGames() {
  const games = await loadGames();
  const option = (game) => {
    const element = document.createElement("option");
    element.value = game.name;
    element.textContent = game.name;
    return element;
  };
  $("blocks-game").replaceChildren($("blocks-game").options[0], ...games.map(option));
  $("emission-form").game.replaceChildren(...games.map(option));
}

async function showOffice() {
  const me = await call("GET", "/api/admin/me");
  $("who-email").textContent = me.email;
  $("who").hidden = false;
  $("login").hidden = true;
  $("office").hidden = false;
  await showGames();
  await Promise.all([loadBlocks(), loadReport(), loadAudit(), loadPlayers()]);
  followRunningJobs().catch(fail);
}

async function loadBlocks() {
  const game = $("blocks-game").value;
  const data = await call("GET", `/api/admin/blocks${game ? "?game=" + encodeURIComponent(game) : ""}`);
  const rows = data.blocks.map((b) => {
    const tr = document.createElement("tr");
    tr.append(
      cell(`#${b.id}`),
      cell(b.game, "text"),
      cell(stateBadge(b.state, BLOCK_STATES), "text"),
      cell(`${count(b.units_sold)} / ${count(b.size)}`),
      cell(count(b.units_remaining)),
      cell(euros(b.stakes_cents)),
      cell(euros(b.prizes_paid_cents)),
      cell(euros(b.ggr_cents)),
      cell(percent(b.prizes_paid_cents, b.stakes_cents)),
      cell(percent(b.table_prizes_total_cents, b.size * b.price_cents)),
      cell(button("Détails", () => showBlock(b.id).catch(fail), "secondary", `Détails du bloc ${b.id}`)),
    );
    return tr;
  });
  $("blocks-rows").replaceChildren(...rows);
  $("blocks-empty").hidden = rows.length > 0;
}

const CHANGES = {
  suspend: { label: "Suspendre", done: "suspendu" },
  resume: { label: "Reprendre", done: "repris" },
  close: { label: "Fermer", done: "fermé" },
  open: { label: "Mettre en vente", done: "mis en vente" },
};

async function change(blockId, action) {
  if (action === "close" && !confirm(`Fermer définitivement le bloc ${blockId} ? Un bloc fermé ne rouvre jamais.`)) return;
  try {
    await call("POST", `/api/admin/blocks/${blockId}/${action}`);
    flash(`Bloc ${blockId} ${CHANGES[action].done}.`);
  } catch (error) {
    fail(error);
  }
  await Promise.all([loadBlocks(), showBlock(blockId), loadAudit()]);
}

async function showBlock(blockId) {
  const b = await call("GET", `/api/admin/blocks/${blockId}`);
  $("block").hidden = false;
  $("block-title").textContent = `Bloc n° ${b.id} — ${b.game} (${b.table_title})`;
  $("block-summary").replaceChildren(
    stateBadge(b.state, BLOCK_STATES),
    document.createTextNode(
      ` ${count(b.units_sold)} tickets vendus sur ${count(b.size)}, ${count(b.players)} joueurs ; ` +
        `mises ${euros(b.stakes_cents)}, gains payés ${euros(b.prizes_paid_cents)}, ` +
        `PBJ ${euros(b.ggr_cents)} ; taux de retour ${percent(b.prizes_paid_cents, b.stakes_cents)} ` +
        `pour ${percent(b.table_prizes_total_cents, b.size * b.price_cents)} dans la table.`,
    ),
  );
  const allowed = [];
  if (b.state === "open" || b.state === "pending") allowed.push("suspend");
  if (b.state === "pending") allowed.push("open");
  if (b.state === "suspended") allowed.push("resume");
  if (["open", "pending", "suspended"].includes(b.state)) allowed.push("close");
  const actions = allowed.map((action) =>
    button(CHANGES[action].label, () => change(b.id, action), action === "close" ? "danger" : ""),
  );
  $("block-actions").replaceChildren(...actions);
  const stamp = Date.now();
  $("chart-payout").src = `/api/admin/blocks/${b.id}/charts/payout.svg?t=${stamp}`;
  $("chart-tiers").src = `/api/admin/blocks/${b.id}/charts/tiers.svg?t=${stamp}`;
  $("tier-rows").replaceChildren(
    ...b.tiers.map((t) => {
      const tr = document.createElement("tr");
      tr.append(
        cell(String(t.tier)),
        cell(euros(t.prize_cents)),
        cell(count(t.table_count)),
        cell(formatRatio(t.table_count * b.units_sold, b.size)), // the table's share of the sales
        cell(count(t.paid_count)),
        cell(euros(t.paid_cents)),
      );
      return tr;
    }),
  );
  $("block").scrollIntoView({ behavior: "smooth" });
}

function reportQuery(format) {
  const form = $("report-form");
  const params = new URLSearchParams({ format });
  if (form.from.value) params.set("from", form.from.value);
  if (form.to.value) params.set("to", form.to.value);
  return `/api/admin/reports/${form.kind.value}?${params}`;
}

async function loadReport() {
  $("report-csv").href = reportQuery("csv");
  $("report-json").href = reportQuery("json");
  const kind = $("report-form").kind.value;
  const data = await call("GET", reportQuery("json"));
  const columns =
    kind === "blocks"
      ? ["block_id", "game", "state", "units_sold", "stakes_cents", "prizes_cents", "ggr_cents", "players"]
      : ["day", "game", "units_sold", "stakes_cents", "prizes_cents", "ggr_cents", "players"];
  const head = document.createElement("tr");
  for (const name of columns) {
    const th = document.createElement("th");
    th.textContent = REPORT_COLUMNS[name];
    if (["game", "state"].includes(name)) th.className = "text";
    head.append(th);
  }
  $("report-head").replaceChildren(head);
  const shown = (name, value) => {
    if (name.endsWith("_cents")) return euros(value);
    if (name === "state") return value ? BLOCK_STATES[value] ?? value : "—";
    if (name === "day") return day(value);
    if (name === "block_id") return `#${value}`;
    return typeof value === "number" ? count(value) : String(value ?? "—");
  };
  $("report-rows").replaceChildren(
    ...data.rows.map((row) => {
      const tr = document.createElement("tr");
      for (const name of columns) {
        tr.append(cell(shown(name, row[name]), ["game", "state"].includes(name) ? "text" : ""));
      }
      return tr;
    }),
  );
  $("report-empty").hidden = data.rows.length > 0;
}

async function loadAudit() {
  const data = await call("GET", "/api/admin/audit?limit=50");
  $("audit-rows").replaceChildren(
    ...data.entries.map((e) => {
      const tr = document.createElement("tr");
      const action = document.createElement("span");
      action.append(document.createTextNode(ACTIONS[e.action] ?? e.action), " ", code(e.action));
      tr.append(
        cell(String(e.id)),
        cell(moment(e.created_at), "text"),
        cell(code(e.actor), "text"),
        cell(action, "text"),
        cell(code(e.subject), "text"),
        cell(code(JSON.stringify(e.details)), "text details"),
      );
      return tr;
    }),
  );
}

$("login-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  try {
    await call("POST", "/api/admin/sessions", { email: form.email.value, password: form.password.value });
    form.password.value = "";
    flash("");
    await showOffice();
  } catch (error) {
    fail(error);
  }
});

$("log-out").addEventListener("click", async () => {
  await call("DELETE", "/api/admin/sessions").catch(() => null);
  showLogin();
});

$("blocks-game").addEventListener("change", () => loadBlocks().catch(fail));

const JOB_POLL_MS = 500;
const STAGES = {
  queued: "en attente de démarrage",
  shuffling: "génération du",
  committing: "engagement du",
  storing: "stockage du",
  opening: "mise en vente du premier bloc",
  done: "terminé",
};

/** The stage a job is at, and of which block: « engagement du bloc 2 sur 5 ». */
function jobPlace(job) {
  const stage = STAGES[job.stage] ?? job.stage;
  return job.block && !["opening", "queued", "done"].includes(job.stage) ? `${stage} bloc ${job.block} sur ${job.blocks}` : stage;
}

/** Whether the stage counts its steps (generating a block is one step). */
function measured(job) {
  return job.total > 0 && (job.stage === "committing" || job.stage === "storing");
}

/** Where a running job is: « Tâche d'émission 3 : engagement du bloc 2 sur 5 (40 %)… ». */
function jobProgressText(job) {
  const share = measured(job) ? ` (${Math.floor((100 * job.done) / job.total)} %)` : "";
  return `Tâche d'émission ${job.id} : ${jobPlace(job)}${share}…`;
}

function jobOutcomeText(job) {
  const blocks = (ids) => (ids.length ? ids.map((id) => `n° ${id}`).join(", ") : "aucun");
  if (job.state === "succeeded") {
    return `Émission ${job.emission_id} : blocs ${blocks(job.block_ids)} créés ; mis en vente : ${blocks(job.opened)}.`;
  }
  // The job's error is the server's English line: its log has the details, the page says why
  // in French.
  const stored = job.block_ids.length
    ? ` Blocs stockés avant l'échec : ${blocks(job.block_ids)} (fermés, sauf s'ils étaient déjà en vente).`
    : " Aucun bloc n'a été stocké.";
  return `La tâche d'émission ${job.id} a échoué (${jobPlace(job)}) : le journal du serveur en donne la raison.${stored}`;
}

/** Follow a job until it ends: its progress under the form, the blocks as each is sealed. */
async function followJob(location) {
  const box = $("emission-job");
  const submit = $("emission-form").querySelector("button");
  submit.disabled = true;
  box.hidden = false;
  let seen = -1;
  try {
    for (;;) {
      let job;
      try {
        job = await call("GET", location);
      } catch (error) {
        if (error.status !== 503) throw error; // the database is away a moment: ask again
        await new Promise((resolve) => setTimeout(resolve, JOB_POLL_MS));
        continue;
      }
      if (job.block_ids.length !== seen) {
        seen = job.block_ids.length;
        await loadBlocks();
      }
      if (job.state !== "running") {
        flash(jobOutcomeText(job), job.state === "succeeded" ? "ok" : "error");
        await Promise.all([loadBlocks(), loadAudit()]);
        return;
      }
      $("emission-job-text").textContent = jobProgressText(job);
      const bar = $("emission-job-progress");
      if (measured(job)) {
        bar.max = job.total;
        bar.value = job.done;
      } else {
        bar.removeAttribute("value"); // generating reports no steps: an indeterminate bar
      }
      await new Promise((resolve) => setTimeout(resolve, JOB_POLL_MS));
    }
  } finally {
    box.hidden = true;
    submit.disabled = false;
  }
}

/** A job still running when the page (re)loads is followed again. */
async function followRunningJobs() {
  const data = await call("GET", "/api/admin/jobs");
  const running = data.jobs.find((job) => job.state === "running");
  if (running) await followJob(`/api/admin/jobs/${running.id}`);
}

$("emission-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  const body = { game: form.game.value, blocks: Number.parseInt(form.blocks.value, 10) };
  const file = form.table.files[0];
  if (file) {
    body.prize_table = await file.text();
    body.prize_table_name = file.name;
  }
  try {
    const started = await call("POST", "/api/admin/emissions", body);
    flash(`Tâche d'émission ${started.job_id} lancée.`);
    await followJob(started.location);
  } catch (error) {
    fail(error);
  }
});

$("report-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    await loadReport();
  } catch (error) {
    fail(error);
  }
});

$("audit-verify").addEventListener("click", async () => {
  try {
    const result = await call("GET", "/api/admin/audit/verify");
    // The server's « problem » is English: the page says where the chain breaks, in French.
    $("audit-result").textContent = result.clean
      ? `Chaîne intacte : ${count(result.entries)} entrées vérifiées.`
      : `Chaîne rompue à l'entrée ${result.first_bad} : modifiée, retirée ou déplacée. Lancez « grattage audit verify » pour le détail.`;
    $("audit-result").className = result.clean ? "ok" : "error";
  } catch (error) {
    fail(error);
  }
});

document.addEventListener("grattage:audit-changed", () => loadAudit().catch(fail));

showOffice().catch(showLogin);
