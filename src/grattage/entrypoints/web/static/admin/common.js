// What the back office's modules share: the API through /js/api.js (an ended session brings
// the log-in form back), the message line, and small DOM builders. Text goes in with
// textContent only; technical names (codes, addresses, JSON) go in <code>, which French
// typography leaves as they are.
import { requester } from "/js/api.js";
import { messageOf } from "./french.js";

export const $ = (id) => document.getElementById(id);

let loggedOut = () => {};

/** What to do when the session has ended (a 401): the main module shows the log-in form. */
export function onLoggedOut(action) {
  loggedOut = action;
}

export const call = requester(() => loggedOut());

export function flash(text, kind = "ok") {
  const box = $("flash");
  box.textContent = text;
  box.className = kind;
}

/** A failed request (or a bug) said in French in the message line. */
export function fail(error) {
  flash(messageOf(error), "error");
}

export function cell(content, className) {
  const td = document.createElement("td");
  if (content instanceof Node) td.append(content);
  else td.textContent = content ?? "—";
  if (className) td.className = className;
  return td;
}

export function code(text) {
  const element = document.createElement("code");
  element.textContent = text;
  return element;
}

export function stateBadge(state, names) {
  const span = document.createElement("span");
  span.className = `state ${state}`;
  span.textContent = names[state] ?? state;
  return span;
}

export function button(label, onClick, className = "", accessibleName = "") {
  const element = document.createElement("button");
  element.type = "button";
  element.textContent = label;
  element.className = className;
  if (accessibleName) element.setAttribute("aria-label", accessibleName);
  element.addEventListener("click", onClick);
  return element;
}

/** A term and its value, for a <dl>. */
export function fact(term, value) {
  const dt = document.createElement("dt");
  dt.textContent = term;
  const dd = document.createElement("dd");
  if (value instanceof Node) dd.append(value);
  else dd.textContent = value ?? "—";
  return [dt, dd];
}
