// The file view: the workspace's Markdown files and one file with line numbers.

import { encodePath, getJson, session } from "./api.js";
import { describeError, fill, h } from "./dom.js";

const list = () => document.getElementById("file-list");
const title = () => document.getElementById("file-title");
const statusLine = () => document.getElementById("file-status");
const content = () => document.getElementById("file-content");
const filterBox = () => document.getElementById("file-filter");

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

function lineRow(number, text, highlighted) {
  return h("div", { class: highlighted ? "line hl" : "line", dataset: { line: String(number) } },
    h("span", { class: "ln" }, String(number)),
    h("span", { class: "lt" }, text === "" ? "\u200b" : text));
}

// Show `path` (of `agent`'s workspace) with lines start..end highlighted and in view.
export async function showFile(path, start, end, agent) {
  current = { path, agent };
  fill(title(), path);
  fill(statusLine(), "Loading…");
  fill(content());
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

export function initFiles() {
  filterBox().addEventListener("input", renderList);
}

export async function refreshFiles() {
  await loadFileList();
}
