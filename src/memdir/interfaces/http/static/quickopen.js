// Quick-open (Ctrl+K, or the "Open a file…" button): type part of a name, arrows and Enter.

import { getJson } from "./api.js";
import { fill, h, sayError } from "./dom.js";
import { byRecency } from "./files.js";

const byId = (id) => document.getElementById(id);
const LIMIT = 30;

let paths = [];
let loading = false;
let enterWhileLoading = false; // Enter before the list came: open the best match when it does
let openFile = null;

// How well `path` matches `needle`: a substring beats letters in order; null: no match.
export function matchScore(path, needle) {
  const hay = path.toLowerCase();
  if (!needle) return 0;
  const at = hay.indexOf(needle);
  if (at >= 0) return 1000 - at - hay.length / 100;
  let from = 0;
  let gaps = 0;
  for (const ch of needle) {
    const found = hay.indexOf(ch, from);
    if (found < 0) return null;
    gaps += found - from;
    from = found + 1;
  }
  return 500 - gaps;
}

function render() {
  const needle = byId("quick-open-input").value.trim().toLowerCase();
  const scored = [];
  for (const path of paths) {
    const score = matchScore(path, needle);
    if (score !== null) scored.push([score, path]);
  }
  scored.sort((a, b) => b[0] - a[0] || byRecency(a[1], b[1]));
  const shown = scored.slice(0, LIMIT).map(([, path]) => h("li", {},
    h("button", { type: "button", class: "file-link", onclick: () => choose(path) }, path)));
  fill(byId("quick-open-list"), shown.length ? shown : h("li", { class: "muted" }, "No file matches"));
}

function choose(path) {
  byId("quick-open").close();
  openFile(path);
}

export async function openQuickOpen() {
  const dialog = byId("quick-open");
  if (dialog.open) return;
  byId("quick-open-input").value = "";
  fill(byId("quick-open-list"), h("li", { class: "muted" }, "Loading the files…"));
  dialog.showModal();
  byId("quick-open-input").focus();
  loading = true;
  enterWhileLoading = false;
  try {
    paths = (await getJson("/files")).files;
  } catch (error) {
    fill(byId("quick-open-list"), h("li", { class: "error" }, sayError(error, "The file list")));
    return;
  } finally {
    loading = false;
  }
  render();
  if (enterWhileLoading) openFirst();
}

function openFirst() {
  const first = byId("quick-open-list").querySelector("button");
  if (first) first.click();
}

function moveFocus(step) {
  const buttons = [...byId("quick-open-list").querySelectorAll("button")];
  if (!buttons.length) return;
  const at = buttons.indexOf(document.activeElement);
  const next = at < 0 ? (step > 0 ? 0 : buttons.length - 1)
    : Math.min(buttons.length - 1, Math.max(-1, at + step));
  if (next < 0) byId("quick-open-input").focus();
  else buttons[next].focus();
}

export function initQuickOpen(open) {
  openFile = open;
  byId("quick-open-input").addEventListener("input", () => { if (!loading) render(); });
  byId("quick-open-button").addEventListener("click", openQuickOpen);
  byId("quick-open-form").addEventListener("submit", (event) => {
    event.preventDefault();
    if (loading) enterWhileLoading = true;
    else openFirst();
  });
  byId("quick-open").addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown") { event.preventDefault(); moveFocus(1); }
    if (event.key === "ArrowUp") { event.preventDefault(); moveFocus(-1); }
  });
  document.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "k") {
      if (byId("workspace").hidden) return;
      event.preventDefault();
      openQuickOpen();
    }
  });
}
