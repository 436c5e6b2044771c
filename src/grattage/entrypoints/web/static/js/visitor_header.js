// The header of a public page (the rules, the 404 page): a logged-in player gets the usual one
// back (balance, session clock, log-out), a visitor keeps the invitation to sign up.
import { api, ApiError } from "./api.js";
import { watchSession } from "./responsible.js";
import { $, refreshBalance } from "./ui.js";

/** Show who is here. GET /api/me answers 401 to a visitor: that is no error here; any other
 *  failure is thrown to the page. */
export async function showWhoIsHere() {
  try {
    const me = await refreshBalance();
    document.body.classList.remove("visitor");
    watchSession(me, refreshBalance);
    $("#logout")?.addEventListener("click", async () => {
      try {
        await api.logOut();
      } catch {
        // Logged out already, or the server is away: the log-in page is the right place anyway.
      }
      location.assign("/login.html");
    });
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 401)) throw error;
  }
}
