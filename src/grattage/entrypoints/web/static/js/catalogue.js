// The list of games, as GET /api/games sends it: names, titles, page addresses. No page keeps
// its own list: a game added on the server appears in the lobby and the history by itself.
import { api } from "./api.js";

let loading = null;

/** The games, asked once per page (a failed request is asked again next time). */
export function loadGames() {
  loading ??= api.games().then(({ games }) => games, (error) => {
    loading = null;
    throw error;
  });
  return loading;
}

export function findGame(games, name) {
  return games.find((game) => game.name === name) ?? null;
}

/** « Cash 500 000 € » for "cash"; a game the server no longer lists keeps its name. */
export function gameTitle(games, name) {
  return findGame(games, name)?.title ?? name;
}

/** The address that replays or resumes a ticket, on its game's page (null if none is known). */
export function ticketPage(games, name, ticketId) {
  const page = findGame(games, name)?.page;
  return page ? `${page}?ticket=${encodeURIComponent(ticketId)}` : null;
}
