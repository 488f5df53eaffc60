// The context view: the assembled system prompt as the agent reads it, each file's
// injected characters against its budget, a switch and an order for each file
// (PUT /prompt/files/{path}: prompt.toml), and the recent daily notes read at session start.

import { encodePath, getJson, sendJson } from "./api.js";
import { fill, formatNumber, h, sayError } from "./dom.js";

const byId = (id) => document.getElementById(id);
const summary = () => byId("context-summary");
const list = () => byId("context-files");

let context = null;

// The budget each file had, replaying the prompt builder's rule: files in order,
// each min(per_file_chars, room left of total_chars); missing files use no room;
// below min_room_chars of room, later files are skipped (budget 0).
export function fileBudgets(report) {
  const { per_file_chars: perFile, total_chars: total, min_room_chars: minRoom } = report.budget;
  let room = total;
  return report.files.map((file) => {
    if (file.status === "MISSING" || file.status === "DISABLED" || file.status === "EXCLUDED") return null;
    if (room === 0 || room < minRoom) return 0;
    const budget = Math.min(perFile, room);
    room = Math.max(0, room - file.injected_chars);
    return budget;
  });
}

function meter(file, budget) {
  const max = Math.max(budget || 0, file.injected_chars, 1);
  const width = `${Math.min(100, (file.injected_chars / max) * 100)}%`;
  const label = `${file.name}: ${formatNumber(file.injected_chars)} of ` +
    `${budget === null ? 0 : formatNumber(budget)} characters injected`;
  return h("div", {
    class: "meter", role: "meter", "aria-label": label,
    "aria-valuemin": "0", "aria-valuemax": String(budget || 0),
    "aria-valuenow": String(file.injected_chars),
  }, h("span", { class: "meter-fill", style: { width } }));
}

async function changeFile(path, change, focusId) {
  fill(summary(), "Saving prompt.toml…");
  try {
    await sendJson("PUT", `/prompt/files/${encodePath(path)}`, change);
  } catch (error) {
    fill(summary(), h("span", { class: "error" }, sayError(error, "The prompt setting")));
    return;
  }
  await refreshContext(context);
  const again = byId(focusId);
  if (again) again.focus();
}

// Move `files[i]` one place up (-1) or down (+1): the two swap their sort_order.
async function move(files, i, step) {
  const a = files[i];
  const b = files[i + step];
  if (!b) return;
  const aOrder = a.sort_order === b.sort_order ? b.sort_order - step : b.sort_order;
  const bOrder = a.sort_order;
  fill(summary(), "Saving prompt.toml…");
  try {
    await sendJson("PUT", `/prompt/files/${encodePath(b.path)}`, { sort_order: bOrder });
    await sendJson("PUT", `/prompt/files/${encodePath(a.path)}`, { sort_order: aOrder });
  } catch (error) {
    fill(summary(), h("span", { class: "error" }, sayError(error, "The new order")));
    return;
  }
  await refreshContext(context);
  const again = byId(`${step < 0 ? "up" : "down"}-${a.path}`) || byId(`toggle-${a.path}`);
  if (again) again.focus();
}

function fileRow(setting, file, budget, files, i) {
  const status = file ? file.status : setting.enabled ? "MISSING" : "DISABLED";
  const toggleId = `toggle-${setting.path}`;
  const budgetText = !file || budget === null ? "not in the prompt (uses no budget)"
    : `${formatNumber(file.injected_chars)} injected / budget ${formatNumber(budget)} chars · ` +
      `raw ${formatNumber(file.raw_chars)} chars · ~${formatNumber(file.injected_tokens)} tokens`;
  return h("li", { class: `budget-row status-${status.toLowerCase()}` },
    h("div", { class: "budget-head" },
      h("input", {
        type: "checkbox", id: toggleId, checked: setting.enabled,
        onchange: (event) => changeFile(setting.path, { enabled: event.target.checked }, toggleId),
      }),
      h("label", { for: toggleId, class: "file-name" }, setting.path),
      h("span", { class: `badge status-${status.toLowerCase()}` }, status),
      h("span", { class: "order-buttons" },
        h("button", {
          type: "button", class: "secondary small", id: `up-${setting.path}`, disabled: i === 0,
          "aria-label": `Move ${setting.path} up`, onclick: () => move(files, i, -1),
        }, "↑"),
        h("button", {
          type: "button", class: "secondary small", id: `down-${setting.path}`,
          disabled: i === files.length - 1,
          "aria-label": `Move ${setting.path} down`, onclick: () => move(files, i, 1),
        }, "↓"))),
    file && budget !== null ? meter(file, budget) : null,
    h("p", { class: "budget-text" }, budgetText, file && file.note ? ` · ${file.note}` : ""));
}

function noteRow(note) {
  return h("li", { class: `budget-row status-${note.status.toLowerCase()}` },
    h("div", { class: "budget-head" },
      h("button", {
        type: "button", class: "file-link file-name",
        onclick: () => context.openFile(note.name, null, null),
      }, note.name),
      h("span", { class: `badge status-${note.status.toLowerCase()}` }, note.status)),
    h("p", { class: "budget-text" },
      `${formatNumber(note.injected_chars)} of ${formatNumber(note.raw_chars)} chars in the prompt ` +
      `· ~${formatNumber(note.injected_tokens)} tokens`));
}

export async function refreshContext(ctx) {
  context = ctx;
  fill(summary(), "Loading the context report…");
  let report;
  let settings;
  let prompt;
  try {
    [report, settings, prompt] = await Promise.all([
      getJson("/context"), getJson("/prompt/files"), getJson("/prompt")]);
  } catch (error) {
    fill(list());
    fill(summary(), h("span", { class: "error" }, sayError(error, "The context report")));
    return;
  }
  const budgets = fileBudgets(report);
  const byName = new Map(report.files.map((file, i) => [file.name, [file, budgets[i]]]));
  const files = settings.files;
  const injected = report.files.reduce((sum, f) => sum + f.injected_chars, 0);
  fill(summary(),
    `The system prompt is ${formatNumber(report.prompt_chars)} chars ` +
    `(~${formatNumber(report.prompt_tokens)} tokens); bootstrap files use ` +
    `${formatNumber(injected)} of ${formatNumber(report.budget.total_chars)} chars ` +
    `(at most ${formatNumber(report.budget.per_file_chars)} per file).`);
  fill(list(), files.map((setting, i) => {
    const [file, budget] = byName.get(setting.path) || [null, null];
    return fileRow(setting, file, budget, files, i);
  }));
  const notes = report.recent_notes || [];
  fill(byId("context-notes"), notes.length ? notes.map(noteRow)
    : h("li", { class: "muted" }, "No daily notes are read at session start."));
  fill(byId("prompt-text"), prompt.prompt);
}
