// The operator's back-office: plain DOM, the JSON API under /api/admin through the pages' one
// fetch wrapper (api.js: the HttpOnly grattage_admin cookie, writes carry X-Grattage-CSRF: 1),
// amounts through money.js. Text goes in with textContent only.
import { requester } from "/js/api.js";
import { loadGames } from "/js/catalogue.js";
import { formatEuros as euros, formatPercent, formatRatio } from "/js/money.js";

const $ = (id) => document.getElementById(id);

/** A share as « 75,00 % »; "—" when nothing was staked yet. */
function percent(numerator, denominator) {
  return denominator ? formatPercent(numerator, denominator) : "—";
}

function flash(text, kind = "ok") {
  const box = $("flash");
  box.textContent = text;
  box.className = kind;
}

// An ended session brings the log-in form back.
const call = requester(() => showLogin());

function cell(text, className) {
  const td = document.createElement("td");
  if (text instanceof Node) td.append(text);
  else td.textContent = text ?? "—";
  if (className) td.className = className;
  return td;
}

function stateBadge(state) {
  const span = document.createElement("span");
  span.className = `state ${state}`;
  span.textContent = state;
  return span;
}

function button(label, onClick, className = "") {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = label;
  b.className = className;
  b.addEventListener("click", onClick);
  return b;
}

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
  await Promise.all([loadBlocks(), loadReport(), loadAudit()]);
  followRunningJobs().catch((error) => flash(error.serverMessage || error.message, "error"));
}

async function loadBlocks() {
  const game = $("blocks-game").value;
  const data = await call("GET", `/api/admin/blocks${game ? "?game=" + encodeURIComponent(game) : ""}`);
  const rows = data.blocks.map((b) => {
    const tr = document.createElement("tr");
    tr.append(
      cell(`#${b.id}`),
      cell(b.game, "text"),
      cell(stateBadge(b.state), "text"),
      cell(`${b.units_sold} / ${b.size}`),
      cell(String(b.units_remaining)),
      cell(euros(b.stakes_cents)),
      cell(euros(b.prizes_paid_cents)),
      cell(euros(b.ggr_cents)),
      cell(percent(b.prizes_paid_cents, b.stakes_cents)),
      cell(percent(b.table_prizes_total_cents, b.size * b.price_cents)),
      cell(button("Details", () => showBlock(b.id), "secondary")),
    );
    return tr;
  });
  $("blocks-rows").replaceChildren(...rows);
}

async function change(blockId, action) {
  if (action === "close" && !confirm(`Close block ${blockId} for good? A closed block never reopens.`)) return;
  try {
    await call("POST", `/api/admin/blocks/${blockId}/${action}`);
    flash(`Block ${blockId}: ${action} done.`);
  } catch (error) {
    flash(error.serverMessage || error.message, "error");
  }
  await Promise.all([loadBlocks(), showBlock(blockId), loadAudit()]);
}

async function showBlock(blockId) {
  const b = await call("GET", `/api/admin/blocks/${blockId}`);
  $("block").hidden = false;
  $("block-title").textContent = `Block #${b.id} — ${b.game} (${b.table_title})`;
  $("block-summary").replaceChildren(
    stateBadge(b.state),
    document.createTextNode(
      ` ${b.units_sold} of ${b.size} sold, ${b.players} players; stakes ${euros(b.stakes_cents)}, ` +
        `prizes paid ${euros(b.prizes_paid_cents)}, GGR ${euros(b.ggr_cents)}; payout so far ` +
        `${percent(b.prizes_paid_cents, b.stakes_cents)} against ` +
        `${percent(b.table_prizes_total_cents, b.size * b.price_cents)} in the table.`,
    ),
  );
  const actions = [];
  if (b.state === "open" || b.state === "pending") actions.push(button("Suspend", () => change(b.id, "suspend")));
  if (b.state === "pending") actions.push(button("Open", () => change(b.id, "open")));
  if (b.state === "suspended") actions.push(button("Resume", () => change(b.id, "resume")));
  if (["open", "pending", "suspended"].includes(b.state)) actions.push(button("Close", () => change(b.id, "close"), "danger"));
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
        cell(String(t.table_count)),
        cell(formatRatio(t.table_count * b.units_sold, b.size)), // the table's share of the sales
        cell(String(t.paid_count)),
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
    th.textContent = name.replace("_cents", "").replace("_", " ");
    head.append(th);
  }
  $("report-head").replaceChildren(head);
  $("report-rows").replaceChildren(
    ...data.rows.map((row) => {
      const tr = document.createElement("tr");
      for (const name of columns) {
        const value = row[name];
        tr.append(cell(name.endsWith("_cents") ? euros(value) : String(value ?? "—"), typeof value === "string" ? "text" : ""));
      }
      return tr;
    }),
  );
}

async function loadAudit() {
  const data = await call("GET", "/api/admin/audit?limit=50");
  $("audit-rows").replaceChildren(
    ...data.entries.map((e) => {
      const tr = document.createElement("tr");
      tr.append(
        cell(String(e.id)),
        cell(e.created_at, "text"),
        cell(e.actor, "text"),
        cell(e.action, "text"),
        cell(e.subject, "text"),
        cell(JSON.stringify(e.details), "text"),
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
    flash(error.serverMessage || error.message, "error");
  }
});

$("log-out").addEventListener("click", async () => {
  await call("DELETE", "/api/admin/sessions").catch(() => null);
  showLogin();
});

$("blocks-game").addEventListener("change", loadBlocks);

const JOB_POLL_MS = 500;
const STAGES = {
  queued: "waiting to start",
  shuffling: "generating",
  committing: "committing to",
  storing: "storing",
  opening: "opening the first block",
  done: "done",
};

/** The stage a job is at, and of which block: « committing to block 2 of 5 ». */
function jobPlace(job) {
  const stage = STAGES[job.stage] ?? job.stage;
  return job.block && job.stage !== "opening" ? `${stage} block ${job.block} of ${job.blocks}` : stage;
}

/** Whether the stage counts its steps (generating a block is one step). */
function measured(job) {
  return job.total > 0 && (job.stage === "committing" || job.stage === "storing");
}

/** Where a running job is: « Emission job 3: committing to block 2 of 5 (40 %)… ». */
function jobProgressText(job) {
  const share = measured(job) ? ` (${Math.floor((100 * job.done) / job.total)} %)` : "";
  return `Emission job ${job.id}: ${jobPlace(job)}${share}…`;
}

function jobOutcomeText(job) {
  const blocks = (ids) => (ids.length ? ids.map((id) => `#${id}`).join(", ") : "none");
  if (job.state === "succeeded") {
    return `Emission ${job.emission_id}: blocks ${blocks(job.block_ids)} created; opened ${blocks(job.opened)}.`;
  }
  const stored = job.block_ids.length
    ? ` Blocks stored before the failure: ${blocks(job.block_ids)} (closed unless already on sale).`
    : " No block was stored.";
  return `Emission job ${job.id} failed (${jobPlace(job)}): ${job.error.replace(/\.$/, "")}.${stored}`;
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
    flash(`Emission job ${started.job_id} started.`);
    await followJob(started.location);
  } catch (error) {
    flash(error.serverMessage || error.message, "error");
  }
});

$("report-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    await loadReport();
  } catch (error) {
    flash(error.serverMessage || error.message, "error");
  }
});

$("audit-verify").addEventListener("click", async () => {
  const result = await call("GET", "/api/admin/audit/verify");
  $("audit-result").textContent = result.clean
    ? `Chain intact: ${result.entries} entries.`
    : `Entry ${result.first_bad} is bad: ${result.problem}`;
  $("audit-result").className = result.clean ? "ok" : "error";
});

showOffice().catch(showLogin);
