// The registry of the games' page modules, by game name. A module provides what its page does
// differently from the others (game_page.js runs the rest):
//   name, staggerMs (pause between zones in an animated reveal), revealsAfterInactivity,
//   buildZones(page, ticket | null, locked) → Map zone id → ScratchZone (null: the specimen),
//   fillZone(page, zoneId, content, element), winMessage(ticket),
//   and optionally setUp(page), onTicket(page, ticket), onChange(page, ticket),
//   setButtons({ playing }), showResult(ticket), clearResult(), readyToBuy(), choice();
//   for the lobby: cardArt(game) and playLabel.
import { astro } from "./astro.js";
import { cash } from "./cash.js";

export const GAME_MODULES = { [cash.name]: cash, [astro.name]: astro };
