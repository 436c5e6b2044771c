// Log-in and sign-up. A new account is logged in at once, then sent where it was going.
import { api } from "./api.js";
import { loadGames } from "./catalogue.js";
import { $, el, handleError, notify } from "./ui.js";

function destination() {
  const next = new URLSearchParams(location.search).get("next");
  // Only ever go back to a page of this site.
  return next && next.startsWith("/") && !next.startsWith("//") ? next : "/";
}

function showTab(name) {
  const login = name === "login";
  $("#tab-login").setAttribute("aria-selected", String(login));
  $("#tab-signup").setAttribute("aria-selected", String(!login));
  $("#login-form").hidden = !login;
  $("#signup-form").hidden = login;
  notify("");
}

async function submitting(form, action) {
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  try {
    await action();
    location.assign(destination());
  } catch (error) {
    if (error.status === 401 && error.code !== "account_locked") {
      notify("Adresse e-mail ou mot de passe incorrect.");
    } else if (error.status === 422 && form.id === "signup-form") {
      notify("Inscription refusée : vérifiez l'adresse e-mail, le mot de passe, vos nom et prénom et que vous avez 18 ans.");
    } else {
      handleError(error);
    }
  } finally {
    button.disabled = false;
  }
}

/** Each game's public rules page, from GET /api/games (no log-in needed): a visitor reads the
 *  rules and the odds before signing up. A failure only leaves the list empty. */
async function showRulesLinks() {
  try {
    const games = await loadGames();
    const withPages = games.filter((game) => game.rules_page);
    $("#rules-links").replaceChildren(...withPages.map((game) =>
      el("li", {}, el("a", { href: game.rules_page, "data-game": game.name, text: `${game.title} — règles, gains et probabilités` }))));
    // A game with its own pages has its try page too (/essai/<name>, as game.html links it).
    $("#try-links").replaceChildren(...withPages.map((game) =>
      el("a", { class: "btn secondary", href: `/essai/${encodeURIComponent(game.name)}`, "data-game": game.name, text: `Essayer ${game.title}` })));
  } catch {
    $("#rules-links").closest("section").hidden = true;
    $("#try-links").closest("section").hidden = true;
  }
}

function main() {
  $("#tab-login").addEventListener("click", () => showTab("login"));
  $("#tab-signup").addEventListener("click", () => showTab("signup"));
  if (new URLSearchParams(location.search).has("signup")) showTab("signup");
  $("#signup-birth").max = new Date().toISOString().slice(0, 10);
  $("#login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    submitting(event.target, () => api.logIn($("#login-email").value.trim(), $("#login-password").value));
  });
  $("#signup-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const email = $("#signup-email").value.trim();
    const password = $("#signup-password").value;
    submitting(event.target, async () => {
      await api.signUp({
        email,
        password,
        firstName: $("#signup-first-name").value.trim(),
        lastName: $("#signup-last-name").value.trim(),
        birthDate: $("#signup-birth").value,
      });
      await api.logIn(email, password);
    });
  });
  if (new URLSearchParams(location.search).has("next")) notify("Connectez-vous pour continuer.", "info");
  showRulesLinks();
}

main();
