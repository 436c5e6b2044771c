// What the back office says, in French, from one place: the API's error codes mapped to
// sentences (as /js/api.js does for players), the names of states, stages and audited actions,
// and the French ways of writing counts, shares and moments (Paris time). The server's own
// messages are English and for logs and scripts: the page never shows them.
import { formatEuros, formatRatio, formatShortPercent } from "/js/money.js";

const ERRORS = {
  unauthorized: "Identifiants refusés, ou session expirée : connectez-vous.",
  account_locked: "Trop d'essais de connexion pour cette adresse : elle est verrouillée un moment. Réessayez plus tard.",
  rate_limited: "Trop de tentatives depuis cette adresse : réessayez dans un moment.",
  forbidden: "Action refusée : ces identifiants n'ouvrent pas le back-office.",
  not_found: "Introuvable : cet élément n'existe pas (ou plus).",
  conflict: "Action impossible dans l'état actuel : elle est déjà faite, ou l'état ne la permet pas. La page est à jour.",
  invalid_input: "Données refusées : vérifiez la saisie.",
  unknown_game: "Ce jeu n'existe pas.",
  invalid_prize_table: "Table de lots refusée : le fichier ne suit pas le format des tables, ou le jeu ne peut pas habiller ses lots.",
  unstorable_value: "Données refusées : un caractère ne peut pas être enregistré.",
  unavailable: "Service momentanément indisponible : réessayez dans un instant.",
  busy: "Serveur occupé : réessayez dans un instant.",
  internal_error: "Erreur du serveur : rien n'a été modifié. Le journal du serveur a le détail.",
  internal_inconsistency: "Le serveur a trouvé ses données incohérentes et a refusé l'action : rien n'a été modifié.",
  too_large: "Fichier trop gros.",
  network: "Connexion au serveur impossible : vérifiez le réseau.",
};

const BY_STATUS = {
  401: ERRORS.unauthorized,
  403: ERRORS.forbidden,
  404: ERRORS.not_found,
  409: ERRORS.conflict,
  422: ERRORS.invalid_input,
  429: ERRORS.rate_limited,
  503: ERRORS.unavailable,
};

/** The French sentence for a failed request (an ApiError of /js/api.js), or any error. */
export function messageOf(error) {
  if (error && typeof error.status === "number") {
    return ERRORS[error.code] || BY_STATUS[error.status] || (error.status >= 500 ? ERRORS.internal_error : "Une erreur est survenue.");
  }
  return "Une erreur inattendue est survenue dans la page.";
}

export const BLOCK_STATES = {
  pending: "en attente",
  open: "en vente",
  suspended: "suspendu",
  exhausted: "épuisé",
  closed: "fermé",
};

export const PLAYER_STATUSES = { active: "actif", suspended: "suspendu" };

export const TICKET_STATES = { covered: "en tirage", playing: "en cours", finished: "terminé" };

export const MOVEMENTS = { deposit: "dépôt", stake: "mise", prize: "gain" };

export const ACTIONS = {
  "operator.create": "opérateur créé",
  "operator.log_in": "connexion d'un opérateur",
  "operator.log_in_failed": "connexion refusée",
  "operator.log_out": "déconnexion d'un opérateur",
  "emission.create": "émission créée",
  "emission.job.start": "tâche d'émission lancée",
  "emission.job.finish": "tâche d'émission terminée",
  "emission.job.fail": "tâche d'émission échouée",
  "block.create": "bloc créé",
  "block.commitment": "engagement du bloc publié",
  "block.open": "bloc mis en vente",
  "block.opened": "bloc mis en vente",
  "block.suspended": "bloc suspendu",
  "block.resumed": "bloc repris",
  "block.exhausted": "bloc épuisé",
  "block.closed": "bloc fermé",
  "block.ended": "bloc terminé",
  "player.suspend": "joueur suspendu",
  "player.reinstate": "suspension levée",
};

export const REPORT_COLUMNS = {
  block_id: "Bloc",
  day: "Jour (UTC)",
  game: "Jeu",
  state: "État",
  units_sold: "Vendus",
  stakes_cents: "Mises",
  prizes_cents: "Gains",
  ggr_cents: "PBJ",
  players: "Joueurs",
};

/** A count with French thousands: 12000000 → « 12 000 000 ». */
export function count(value) {
  return Number.isSafeInteger(value) ? formatRatio(value, 1, 0) : "—";
}

/** Money from integer cents, always with its cents: « 1 234,50 € ». */
export function euros(cents) {
  return formatEuros(cents, { alwaysDecimals: true });
}

/** A share with at most two decimals, « 133,33 % », « 75 % »; "—" before anything is staked. */
export function percent(numerator, denominator) {
  return denominator ? formatShortPercent(numerator, denominator) : "—";
}

const MOMENT = new Intl.DateTimeFormat("fr-FR", {
  day: "2-digit", month: "2-digit", year: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit",
  timeZone: "Europe/Paris",
});
const DAY = new Intl.DateTimeFormat("fr-FR", { day: "2-digit", month: "2-digit", year: "numeric", timeZone: "UTC" });

/** An API moment (ISO 8601, UTC) in Paris time: « 03/12/2026 14:21:50 ». */
export function moment(iso) {
  if (!iso) return "—";
  const parsed = new Date(iso);
  return Number.isNaN(parsed.getTime()) ? iso : MOMENT.format(parsed);
}

/** An API date (YYYY-MM-DD) as the French write it: « 09/03/1988 ». */
export function day(iso) {
  if (!iso) return "—";
  const parsed = new Date(`${iso}T00:00:00Z`);
  return Number.isNaN(parsed.getTime()) ? iso : DAY.format(parsed);
}
