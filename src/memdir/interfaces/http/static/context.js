// The context report: each bootstrap file's injected characters against its budget.

import { getJson } from "./api.js";
import { describeError, fill, formatNumber, h } from "./dom.js";

const summary = () => document.getElementById("context-summary");
const list = () => document.getElementById("context-files");

// The budget each file had, replaying the prompt builder's rule: files in order,
// each min(per_file_chars, room left of total_chars); missing files use no room;
// below min_room_chars of room, later files are skipped (budget 0).
export function fileBudgets(report) {
  const { per_file_chars: perFile, total_chars: total, min_room_chars: minRoom } = report.budget;
  let room = total;
  return report.files.map((file) => {
    if (file.status === "MISSING") return null;
    if (room === 0 || room < minRoom) return 0;
    const budget = Math.min(perFile, room);
    room = Math.max(0, room - file.injected_chars);
    return budget;
  });
}

function fileRow(file, budget) {
  const max = Math.max(budget || 0, file.injected_chars, 1);
  const width = `${Math.min(100, (file.injected_chars / max) * 100)}%`;
  const budgetText = budget === null ? "not in the prompt (uses no budget)"
    : `${formatNumber(file.injected_chars)} injected / budget ${formatNumber(budget)} chars`;
  const label = `${file.name}: ${formatNumber(file.injected_chars)} of ` +
    `${budget === null ? 0 : formatNumber(budget)} characters injected`;
  return h("li", { class: `budget-row status-${file.status.toLowerCase()}` },
    h("div", { class: "budget-head" },
      h("span", { class: "file-name" }, file.name),
      h("span", { class: `badge status-${file.status.toLowerCase()}` }, file.status)),
    h("div", {
      class: "meter", role: "meter", "aria-label": label,
      "aria-valuemin": "0", "aria-valuemax": String(budget || 0),
      "aria-valuenow": String(file.injected_chars),
    }, h("span", { class: "meter-fill", style: { width } })),
    h("p", { class: "budget-text" },
      `${budgetText} · raw ${formatNumber(file.raw_chars)} chars · ~${formatNumber(file.injected_tokens)} tokens`));
}

export async function refreshContext() {
  fill(summary(), "Loading the context report…");
  let report;
  try {
    report = await getJson("/context");
  } catch (error) {
    fill(list());
    fill(summary(), h("span", { class: "error" }, describeError(error)));
    return;
  }
  const budgets = fileBudgets(report);
  const injected = report.files.reduce((sum, f) => sum + f.injected_chars, 0);
  fill(summary(),
    `The system prompt is ${formatNumber(report.prompt_chars)} chars ` +
    `(~${formatNumber(report.prompt_tokens)} tokens); bootstrap files use ` +
    `${formatNumber(injected)} of ${formatNumber(report.budget.total_chars)} chars ` +
    `(at most ${formatNumber(report.budget.per_file_chars)} per file).`);
  fill(list(), report.files.map((file, i) => fileRow(file, budgets[i])));
}
