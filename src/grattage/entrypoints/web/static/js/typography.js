// French typography on every player page and the back office: a no-break space before « : »,
// « » », « € » and « % » and after « « », a narrow no-break space before « ; ! ? » and between a
// number's groups of three digits, so that a phone never wraps the punctuation to the next line
// (« Solde insuffisant / : faites un dépôt ») nor a number in two (« 500 / 000 € »).
//
// The pages' texts come from templates, from a dozen modules and from the API's codes mapped to
// French; fixing each string by hand misses the next one written. So the spaces are set where
// text reaches the page: once over the document, then on every text node added or changed
// (a MutationObserver). Code, commands and typed input are left as they are.

const KEEP_AS_IS = new Set(["CODE", "PRE", "SCRIPT", "STYLE", "TEXTAREA", "KBD", "SAMP"]);
const NO_BREAK_SPACE = "\u00a0";
const NARROW_NO_BREAK_SPACE = "\u202f";

/** The text with French spaces around its punctuation, inside numbers and before their unit
 * (only plain spaces are replaced): a table's title written « Cash 500 000 € » by an operator
 * never breaks as « Cash 500 / 000 € ». */
export function frenchSpaces(text) {
  return text
    .replace(/(\d) (?=\d{3}(?!\d))/g, `$1${NARROW_NO_BREAK_SPACE}`)
    .replace(/(\d) +(?=[€%])/g, `$1${NO_BREAK_SPACE}`)
    .replace(/ +([:»])/g, `${NO_BREAK_SPACE}$1`)
    .replace(/ +([;!?])/g, `${NARROW_NO_BREAK_SPACE}$1`)
    .replace(/« +/g, `«${NO_BREAK_SPACE}`);
}

function keptAsIs(node) {
  for (let parent = node.parentElement; parent; parent = parent.parentElement) {
    if (KEEP_AS_IS.has(parent.tagName)) return true;
  }
  return false;
}

function fixText(node) {
  if (keptAsIs(node)) return;
  const fixed = frenchSpaces(node.data);
  if (fixed !== node.data) node.data = fixed; // a second pass finds nothing: no loop
}

function fixTree(root) {
  if (root.nodeType === Node.TEXT_NODE) {
    fixText(root);
    return;
  }
  if (root.nodeType !== Node.ELEMENT_NODE || KEEP_AS_IS.has(root.tagName)) return;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) fixText(node);
}

let started = false;

/** Fix the page now and whatever is written into it later. */
export function keepFrenchTypography() {
  if (started) return;
  started = true;
  fixTree(document.body);
  new MutationObserver((mutations) => {
    for (const mutation of mutations) {
      if (mutation.type === "characterData") fixText(mutation.target);
      else for (const node of mutation.addedNodes) fixTree(node);
    }
  }).observe(document.body, { childList: true, characterData: true, subtree: true });
}
