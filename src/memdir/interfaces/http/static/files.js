// The file view: the workspace's Markdown files, one file with line numbers, and exact
// find-and-replace edits (PATCH /files/{path}: the rules of the memory_edit_file tool).

import { encodePath, getJson, sendJson, session } from "./api.js";
import { describeError, fill, h } from "./dom.js";
import { writeState } from "./state.js";

const byId = (id) => document.getElementById(id);
const list = () => byId("file-list");
const title = () => byId("file-title");
const statusLine = () => byId("file-status");
const content = () => byId("file-content");
const filterBox = () => byId("file-filter");

let files = [];
let current = null; // { path, agent }

function fileButton(path) {
  const selected = current && current.path === path && current.agent === session.agent;
  return h("li", {},
    h("button", {
      type: "button", class: "file-link", "aria-current": selected ? "true" : false,
      onclick: () => showFile(path, null, null, session.agent),
    }, path));
}

function renderList() {
  const needle = filterBox().value.trim().toLowerCase();
  const shown = files.filter((path) => path.toLowerCase().includes(needle));
  fill(list(), shown.length ? shown.map(fileButton) : h("li", { class: "muted" }, "No files"));
}

export async function loadFileList() {
  try {
    files = (await getJson("/files")).files;
  } catch (error) {
    files = [];
    fill(list(), h("li", { class: "error" }, describeError(error)));
    return;
  }
  renderList();
}

function lineRow(number, text, highlightedLine) {
  return h("div", { class: highlightedLine ? "line hl" : "line", dataset: { line: String(number) } },
    h("span", { class: "ln" }, String(number)),
    h("span", { class: "lt" }, text === "" ? "\u200b" : text));
}

// Show `path` (of `agent`'s workspace) with lines start..end highlighted and in view.
export async function showFile(path, start, end, agent) {
  current = { path, agent };
  closeEditor();
  byId("edit-open").hidden = true;
  fill(title(), path);
  fill(statusLine(), "Loading…");
  fill(content());
  writeState({ file: path, lines: start ? `${start}-${end || start}` : "" });
  let file;
  try {
    file = await getJson(`/files/${encodePath(path)}`, {}, agent);
  } catch (error) {
    fill(statusLine(), h("span", { class: "error" }, describeError(error)));
    return;
  }
  const lines = file.content.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  const first = start || 0;
  const last = end || first;
  const rows = lines.map((text, i) => lineRow(i + 1, text, first > 0 && i + 1 >= first && i + 1 <= last));
  fill(content(), rows);
  byId("edit-open").hidden = false;
  const where = agent ? ` (agent ${agent})` : "";
  fill(statusLine(), first
    ? `${lines.length} lines${where}; lines ${first}–${last} highlighted`
    : `${lines.length} lines${where}`);
  renderList();
  const mark = content().querySelector(".line.hl");
  if (mark) {
    mark.setAttribute("tabindex", "-1");
    mark.scrollIntoView({ block: "center" });
    mark.focus({ preventScroll: true });
  }
}

// Forget the open file (the agent changed: its file is another workspace's).
export function closeFile() {
  current = null;
  closeEditor();
  byId("edit-open").hidden = true;
  fill(title(), "No file open");
  fill(statusLine());
  fill(content());
  writeState({ file: "", lines: "" });
}

function openEditor() {
  const selection = window.getSelection ? String(window.getSelection()) : "";
  byId("edit-form").hidden = false;
  byId("edit-open").hidden = true;
  byId("edit-old").value = selection;
  byId("edit-new").value = selection;
  byId("edit-all").checked = false;
  fill(byId("edit-status"));
  byId("edit-old").focus();
}

function closeEditor() {
  byId("edit-form").hidden = true;
  if (current) byId("edit-open").hidden = false;
}

async function saveEdit(event) {
  event.preventDefault();
  if (!current) return;
  const body = {
    old_text: byId("edit-old").value,
    new_text: byId("edit-new").value,
    replace_all: byId("edit-all").checked,
  };
  if (!body.old_text) {
    fill(byId("edit-status"), h("span", { class: "error" }, "Give the exact text to replace."));
    return;
  }
  fill(byId("edit-status"), "Saving…");
  let result;
  try {
    result = await sendJson("PATCH", `/files/${encodePath(current.path)}`, body, {}, current.agent);
  } catch (error) {
    fill(byId("edit-status"), h("span", { class: "error" }, describeError(error)));
    return;
  }
  const count = result.replacements;
  await showFile(current.path, null, null, current.agent);
  fill(statusLine(), `Saved: replaced ${count} occurrence${count === 1 ? "" : "s"}.`);
}

export function initFiles() {
  filterBox().addEventListener("input", renderList);
  byId("edit-open").addEventListener("click", openEditor);
  byId("edit-cancel").addEventListener("click", closeEditor);
  byId("edit-form").addEventListener("submit", saveEdit);
}

export async function refreshFiles() {
  await loadFileList();
}
