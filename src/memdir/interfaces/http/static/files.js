// The file view: a folder tree (daily notes newest first, by month), one file rendered
// as Markdown (fact markers hidden, citations as links) or as numbered source lines, and
// free editing: the whole text in a text box, a review of the changes as a diff, then a
// save that is refused when the file changed since it was opened (PUT /files/{path}
// with the SHA-256 the page read).

import { encodePath, getJson, sendJson, session } from "./api.js";
import { lineDiff, renderDiff, diffSummary } from "./diff.js";
import { fill, h, sayError } from "./dom.js";
import { initFileActions } from "./fileactions.js";
import { renderMarkdown } from "./markdown.js";
import { writeState } from "./state.js";

const byId = (id) => document.getElementById(id);
const list = () => byId("file-list");
const title = () => byId("file-title");
const statusLine = () => byId("file-status");
const content = () => byId("file-content");
const filterBox = () => byId("file-filter");

const DAILY = /^memory\/(\d{4})-(\d{2})-(\d{2})[^/]*\.md$/;
const FILTER_LIMIT = 300;

let files = [];
let current = null; // { path, agent, content, sha256 }
let showSource = false;
let context = null; // the app's ctx, for opening cited files

export function knownFiles() {
  return files;
}

// Daily notes newest first, everything else by name.
export function byRecency(a, b) {
  const da = DAILY.test(a);
  const db = DAILY.test(b);
  if (da && db) return b.localeCompare(a);
  if (da !== db) return da ? -1 : 1;
  return a.localeCompare(b);
}

function fileButton(path, label = path) {
  const selected = current && current.path === path && current.agent === session.agent;
  return h("li", {},
    h("button", {
      type: "button", class: "file-link", "aria-current": selected ? "true" : false,
      title: path, onclick: () => openFromList(path),
    }, label));
}

async function openFromList(path) {
  history.pushState(null, "", window.location.href);
  await showFile(path, null, null, session.agent);
  content().focus({ preventScroll: true });
}

function folder(label, children, open) {
  return h("details", { class: "folder", open },
    h("summary", {}, label), h("ul", { class: "file-list" }, children));
}

// The tree: top-level files, then folders; memory/ holds daily notes by month, newest first.
function treeNodes(paths) {
  const top = [];
  const folders = new Map();
  for (const path of paths) {
    const slash = path.indexOf("/");
    if (slash < 0) top.push(path);
    else {
      const name = path.slice(0, slash);
      if (!folders.has(name)) folders.set(name, []);
      folders.get(name).push(path);
    }
  }
  const out = top.sort(byRecency).map((path) => fileButton(path));
  const openPath = current ? current.path : "";
  for (const name of [...folders.keys()].sort()) {
    const inside = folders.get(name).sort(byRecency);
    if (name !== "memory") {
      out.push(h("li", {}, folder(`${name}/`, inside.map((p) => fileButton(p, p.slice(name.length + 1))),
        openPath.startsWith(`${name}/`) || inside.length < 20)));
      continue;
    }
    const months = new Map();
    const others = [];
    for (const path of inside) {
      const m = DAILY.exec(path);
      if (!m) { others.push(path); continue; }
      const month = `${m[1]}-${m[2]}`;
      if (!months.has(month)) months.set(month, []);
      months.get(month).push(path);
    }
    const monthNodes = [...months.entries()].map(([month, notes], i) => h("li", {},
      folder(`${month} (${notes.length})`, notes.map((p) => fileButton(p, p.slice("memory/".length))),
        i === 0 || notes.includes(openPath))));
    out.push(h("li", {}, folder("memory/ daily notes", [...monthNodes,
      ...others.map((p) => fileButton(p, p.slice("memory/".length)))], true)));
  }
  return out;
}

function renderList() {
  const needle = filterBox().value.trim().toLowerCase();
  if (!files.length) {
    fill(list(), h("p", { class: "muted" }, "No files"));
    return;
  }
  if (!needle) {
    fill(list(), h("ul", { class: "file-list tree-root", "aria-label": "Files and folders" }, treeNodes(files)));
    return;
  }
  const shown = files.filter((path) => path.toLowerCase().includes(needle)).sort(byRecency);
  fill(list(), h("ul", { class: "file-list", "aria-label": "Matching files" },
    shown.length ? shown.slice(0, FILTER_LIMIT).map((path) => fileButton(path))
      : h("li", { class: "muted" }, "No file matches"),
    shown.length > FILTER_LIMIT ? h("li", { class: "muted" },
      `${shown.length - FILTER_LIMIT} more: type more of the name`) : null));
}

export async function loadFileList() {
  try {
    files = (await getJson("/files")).files;
  } catch (error) {
    files = [];
    fill(list(), h("p", { class: "error" }, sayError(error, "The file list")));
    return;
  }
  renderList();
}

function lineRow(number, text, highlightedLine) {
  return h("div", { class: highlightedLine ? "line hl" : "line", dataset: { line: String(number) } },
    h("span", { class: "ln" }, String(number)),
    h("span", { class: "lt" }, text === "" ? "\u200b" : text));
}

function sourceRows(text, first, last) {
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines.map((line, i) => lineRow(i + 1, line, first > 0 && i + 1 >= first && i + 1 <= last));
}

function renderedBlocks(text, first, last) {
  const opts = { onCitation: (path, start, end) => context.openFile(path, start, end, current.agent) };
  const blocks = renderMarkdown(text, opts);
  if (first > 0) {
    for (const el of blocks) {
      if (Number(el.dataset.end) >= first && Number(el.dataset.start) <= last) el.classList.add("hl");
    }
    if (!blocks.some((el) => el.classList.contains("hl"))) {
      const next = blocks.find((el) => Number(el.dataset.start) >= first);
      if (next) next.classList.add("hl");
    }
  }
  return blocks.length ? blocks : [h("p", { class: "muted" }, "This file is empty.")];
}

function renderContent(first, last) {
  const el = content();
  el.className = showSource ? "file-content code" : "file-content markdown";
  fill(el, showSource ? sourceRows(current.content, first, last) : renderedBlocks(current.content, first, last));
  const button = byId("view-source");
  button.setAttribute("aria-pressed", String(showSource));
  fill(button, showSource ? "Show rendered" : "Show source");
}

function lineCount(text) {
  const n = text.split("\n").length;
  return text.endsWith("\n") ? n - 1 : n;
}

// Show `path` (of `agent`'s workspace) with lines start..end highlighted and in view.
export async function showFile(path, start, end, agent) {
  current = { path, agent, content: "", sha256: null };
  closeForms();
  byId("file-actions").hidden = true;
  fill(title(), path);
  fill(statusLine(), "Loading…");
  fill(content());
  writeState({ file: path, lines: start ? `${start}-${end || start}` : "" });
  let file;
  try {
    file = await getJson(`/files/${encodePath(path)}`, {}, agent);
  } catch (error) {
    fill(statusLine(), h("span", { class: "error" }, sayError(error, "This file")));
    return;
  }
  if (!current || current.path !== path) return; // another file was opened meanwhile
  current.content = file.content;
  current.sha256 = file.sha256 || null;
  const first = start || 0;
  const last = end || first;
  current.first = first;
  current.last = last;
  renderContent(first, last);
  byId("file-actions").hidden = false;
  const where = agent ? ` (agent ${agent})` : "";
  const lines = lineCount(file.content);
  fill(statusLine(), first
    ? `${lines} lines${where}; lines ${first}–${last} highlighted`
    : `${lines} lines${where}`);
  renderList();
  const mark = content().querySelector(".hl");
  if (mark) {
    mark.setAttribute("tabindex", "-1");
    mark.scrollIntoView({ block: "center" });
    mark.focus({ preventScroll: true });
  }
}

// Forget the open file (the agent changed: its file is another workspace's).
export function closeFile() {
  current = null;
  closeForms();
  byId("file-actions").hidden = true;
  fill(title(), "No file open");
  fill(statusLine());
  fill(content());
  writeState({ file: "", lines: "" });
}

// -- editing ---------------------------------------------------------------------------

function closeForms() {
  for (const id of ["edit-form", "rename-form", "delete-form", "history-box"]) byId(id).hidden = true;
  byId("edit-review-box").hidden = true;
  byId("edit-reload").hidden = true;
  fill(byId("edit-status"));
}

function openEditor() {
  if (!current) return;
  closeForms();
  byId("edit-form").hidden = false;
  const box = byId("edit-text");
  box.value = current.content;
  box.rows = Math.min(30, Math.max(8, lineCount(current.content) + 1));
  box.focus();
}

function cancelEditor() {
  closeForms();
  byId("edit-open").focus();
}

function review(event) {
  event.preventDefault();
  if (!current) return;
  const rows = lineDiff(current.content, byId("edit-text").value);
  fill(byId("edit-diff"), renderDiff(rows));
  byId("edit-review-box").hidden = false;
  fill(byId("edit-status"), `Review: ${diffSummary(rows)}. Nothing is saved yet.`);
  byId("edit-save").focus();
}

const CHANGED = "This file changed since you opened it (an agent or another window wrote to " +
  "it), so nothing was saved. Your text is still in the box: copy what you need, then load " +
  "the newer version.";

function showConflict() {
  fill(byId("edit-status"), h("span", { class: "error" }, CHANGED));
  byId("edit-review-box").hidden = true;
  byId("edit-reload").hidden = false;
  byId("edit-reload").focus();
}

async function save() {
  if (!current) return;
  const text = byId("edit-text").value;
  const { path, agent } = current;
  fill(byId("edit-status"), "Saving…");
  const body = { content: text };
  try {
    if (current.sha256) body.expected_sha256 = current.sha256;
    else {
      // A server without file hashes: compare the text itself just before writing.
      const now = await getJson(`/files/${encodePath(path)}`, {}, agent);
      if (now.content !== current.content) {
        showConflict();
        return;
      }
    }
    await sendJson("PUT", `/files/${encodePath(path)}`, body, {}, agent);
  } catch (error) {
    if (error.status === 409) showConflict();
    else fill(byId("edit-status"), h("span", { class: "error" }, sayError(error, "Your change")));
    return;
  }
  await showFile(path, null, null, agent);
  fill(statusLine(), `Saved ${path}.`);
  byId("edit-open").focus();
}

async function reloadAfterConflict() {
  if (!current) return;
  await showFile(current.path, null, null, current.agent);
  openEditor();
  fill(byId("edit-status"), "This is the newer version: make your change again.");
}

export function initFiles(ctx) {
  context = ctx;
  initFileActions({
    current: () => current,
    show: (path) => showFile(path, null, null, current ? current.agent : session.agent),
    reloadList: loadFileList,
    close: closeFile,
    edit: openEditor,
  });
  filterBox().addEventListener("input", renderList);
  byId("edit-open").addEventListener("click", openEditor);
  byId("edit-cancel").addEventListener("click", cancelEditor);
  byId("edit-back").addEventListener("click", () => {
    byId("edit-review-box").hidden = true;
    fill(byId("edit-status"));
    byId("edit-text").focus();
  });
  byId("edit-form").addEventListener("submit", review);
  byId("edit-save").addEventListener("click", save);
  byId("edit-reload").addEventListener("click", reloadAfterConflict);
  byId("edit-text").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) review(event);
    else if (event.key === "Escape") cancelEditor();
  });
  byId("view-source").addEventListener("click", () => {
    if (!current) return;
    showSource = !showSource;
    renderContent(current.first || 0, current.last || 0);
  });
}

export async function refreshFiles() {
  await loadFileList();
}
