// Create, rename and delete a file (PUT create_only, POST /files/rename, DELETE with the
// SHA-256 the page read), and its earlier versions: what each change did and putting the
// file back as it was (GET /history?path=, /history/{id}/diff, POST /history/{id}/restore;
// a restore is itself a version, so it can be undone the same way).

import { encodePath, getJson, sendJson } from "./api.js";
import { fill, h, sayError, timeEl } from "./dom.js";

const byId = (id) => document.getElementById(id);

// What files.js lends: the open file, and how to show a file and reload the tree.
let files = null;

function status(text, isError = false) {
  fill(byId("file-status"), isError ? h("span", { class: "error" }, text) : text);
}

function hideForms() {
  for (const id of ["edit-form", "rename-form", "delete-form", "history-box"]) byId(id).hidden = true;
}

// -- create ------------------------------------------------------------------------------

function openNewFile() {
  const form = byId("new-file-form");
  form.hidden = false;
  fill(byId("new-file-status"));
  byId("new-file-path").value = "notes/";
  byId("new-file-path").focus();
}

function closeNewFile() {
  byId("new-file-form").hidden = true;
  byId("file-new").focus();
}

// "ideas" -> "ideas.md"; a leading slash dropped.
export function newFilePath(typed) {
  const path = typed.trim().replace(/^\/+/, "");
  if (!path || path.endsWith("/")) return "";
  return /\.md$/i.test(path) ? path : `${path}.md`;
}

async function createFile(event) {
  event.preventDefault();
  const path = newFilePath(byId("new-file-path").value);
  const say = (text) => fill(byId("new-file-status"), h("span", { class: "error" }, text));
  if (!path) {
    say("Give the new file a name, e.g. notes/ideas.md.");
    return;
  }
  const name = path.split("/").pop().replace(/\.md$/i, "");
  try {
    await sendJson("PUT", `/files/${encodePath(path)}`, { content: `# ${name}\n`, create_only: true });
  } catch (error) {
    say(error.status === 409 ? `There is already a file at ${path}: open it, or pick another name.`
      : sayError(error, "The new file"));
    return;
  }
  byId("new-file-form").hidden = true;
  await files.reloadList();
  await files.show(path);
  status(`Created ${path}.`);
  files.edit();
}

// -- rename ------------------------------------------------------------------------------

function openRename() {
  const current = files.current();
  if (!current) return;
  hideForms();
  byId("rename-form").hidden = false;
  byId("rename-path").value = current.path;
  byId("rename-path").focus();
}

async function rename(event) {
  event.preventDefault();
  const current = files.current();
  if (!current) return;
  const to = newFilePath(byId("rename-path").value);
  if (!to || to === current.path) {
    byId("rename-form").hidden = true;
    return;
  }
  try {
    await sendJson("POST", "/files/rename", { from: current.path, to, expected_sha256: current.sha256 },
      {}, current.agent);
  } catch (error) {
    status(error.status === 409
      ? `Not renamed: there is already a file at ${to}, or ${current.path} changed since you opened it.`
      : sayError(error, "The rename"), true);
    return;
  }
  await files.reloadList();
  await files.show(to);
  status(`Renamed ${current.path} to ${to}.`);
  byId("file-rename").focus();
}

// -- delete ------------------------------------------------------------------------------

function openDelete() {
  if (!files.current()) return;
  hideForms();
  byId("delete-form").hidden = false;
  byId("delete-form").querySelector("button[type=submit]").focus();
}

async function deleteFile(event) {
  event.preventDefault();
  const current = files.current();
  if (!current) return;
  try {
    await sendJson("DELETE", `/files/${encodePath(current.path)}`, undefined,
      { expected_sha256: current.sha256 }, current.agent);
  } catch (error) {
    status(error.status === 409
      ? `Not deleted: ${current.path} changed since you opened it. Reload it and look first.`
      : sayError(error, "The file"), true);
    return;
  }
  files.close();
  await files.reloadList();
  status(`Deleted ${current.path}. Its earlier versions stay in the history.`);
  byId("file-filter").focus();
}

// -- history -----------------------------------------------------------------------------

function diffView(text) {
  const lines = text.split("\n").filter((line) => !/^(diff --git|index |--- |\+\+\+ )/.test(line));
  if (!lines.some((line) => line.trim())) return [h("p", { class: "muted" }, "No change to this file.")];
  return lines.map((line) => {
    const kind = line.startsWith("@@") ? "gap" : line.startsWith("+") ? "ins" : line.startsWith("-") ? "del" : "same";
    const word = kind === "ins" ? "added: " : kind === "del" ? "removed: " : "";
    const text = kind === "gap" ? "…" : line.slice(1);
    return h("div", { class: `diff-row ${kind}` }, h("span", { class: "ln" }),
      h("span", { class: "sign", "aria-hidden": "true" }, kind === "ins" ? "+" : kind === "del" ? "−" : ""),
      h("span", { class: "lt" }, word ? h("span", { class: "visually-hidden" }, word) : null,
        text === "" ? "\u200b" : text));
  });
}

async function showDiff(version, path, agent) {
  fill(byId("history-diff"), h("p", { class: "muted" }, "Loading the changes…"));
  try {
    const answer = await getJson(`/history/${version.id}/diff`, { path }, agent);
    fill(byId("history-diff"), diffView(answer.diff));
  } catch (error) {
    fill(byId("history-diff"), h("p", { class: "error" }, sayError(error, "That version")));
  }
}

async function restore(version, path, agent) {
  try {
    await sendJson("POST", `/history/${version.id}/restore`, { path, reason: "restored in the browser" }, {}, agent);
  } catch (error) {
    status(sayError(error, "The earlier version"), true);
    return;
  }
  await files.show(path);
  status(`Restored ${path} as it was at ${version.time.replace("T", " ").slice(0, 16)}. ` +
    "The restore is a version too: the history can undo it.");
  byId("file-history").focus();
}

function who(version) {
  const parts = [version.tool, version.agent ? `agent ${version.agent}` : null, version.reason];
  return parts.filter(Boolean).join(" · ") || "a change";
}

async function openHistory() {
  const current = files.current();
  if (!current) return;
  const { path, agent } = current;
  hideForms();
  const box = byId("history-box");
  box.hidden = false;
  fill(byId("history-list"), h("li", { class: "muted" }, "Loading the versions…"));
  fill(byId("history-diff"));
  let versions;
  try {
    versions = (await getJson("/history", { path, limit: 20 }, agent)).versions;
  } catch (error) {
    fill(byId("history-list"), h("li", { class: "error" }, sayError(error, "The history")));
    return;
  }
  if (!versions.length) {
    fill(byId("history-list"), h("li", { class: "muted" }, "No earlier versions of this file are kept."));
    return;
  }
  fill(byId("history-list"), versions.map((version, i) => h("li", {},
    timeEl(version.time), " ", h("span", { class: "muted" }, who(version)), " ",
    h("button", { type: "button", class: "link", onclick: () => showDiff(version, path, agent) },
      i === 0 ? "What the last change did" : "What this change did"),
    i > 0 ? [" ", h("button", {
      type: "button", class: "link restore", onclick: () => restore(version, path, agent),
    }, i === 1 ? "Restore the previous version" : "Restore this version")] : null)));
  if (versions.length > 1) {
    await showDiff(versions[0], path, agent);
    byId("history-list").querySelector("button.restore").focus();
  } else {
    fill(byId("history-diff"), h("p", { class: "muted" }, "This is the first version of the file."));
    byId("history-close").focus();
  }
}

export function initFileActions(lent) {
  files = lent;
  byId("file-new").hidden = false;
  byId("file-rename").hidden = false;
  byId("file-delete").hidden = false;
  byId("file-history").hidden = false;
  byId("file-new").addEventListener("click", openNewFile);
  byId("new-file-cancel").addEventListener("click", closeNewFile);
  byId("new-file-form").addEventListener("submit", createFile);
  byId("file-rename").addEventListener("click", openRename);
  byId("rename-cancel").addEventListener("click", () => { byId("rename-form").hidden = true; byId("file-rename").focus(); });
  byId("rename-form").addEventListener("submit", rename);
  byId("file-delete").addEventListener("click", openDelete);
  byId("delete-cancel").addEventListener("click", () => { byId("delete-form").hidden = true; byId("file-delete").focus(); });
  byId("delete-form").addEventListener("submit", deleteFile);
  byId("file-history").addEventListener("click", openHistory);
  byId("history-close").addEventListener("click", () => { byId("history-box").hidden = true; byId("file-history").focus(); });
  for (const id of ["new-file-form", "rename-form", "delete-form", "history-box"]) {
    byId(id).addEventListener("keydown", (event) => {
      if (event.key === "Escape") { byId(id).hidden = true; event.stopPropagation(); }
    });
  }
}
