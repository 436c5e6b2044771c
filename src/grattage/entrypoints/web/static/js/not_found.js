// The French 404 page (not_found.html): public, so it shows a visitor's header; a logged-in
// player gets the usual one back (visitor_header.js).
import { handleError } from "./ui.js";
import { showWhoIsHere } from "./visitor_header.js";

showWhoIsHere().catch(handleError);
