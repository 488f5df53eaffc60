// A line diff for the review before a save, and its rendering as removed/added rows.

import { h } from "./dom.js";

const MAX_CELLS = 4_000_000; // above this the changed middle is shown as replaced whole

// Rows { op: " " | "-" | "+", text, old, new } turning `before` into `after` (by lines).
export function lineDiff(before, after) {
  const a = before.split("\n");
  const b = after.split("\n");
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail += 1;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  const rows = [];
  for (let i = 0; i < head; i += 1) rows.push({ op: " ", text: a[i], old: i + 1, new: i + 1 });
  for (const row of middle(midA, midB)) {
    rows.push({ ...row, old: row.old === null ? null : row.old + head + 1,
      new: row.new === null ? null : row.new + head + 1 });
  }
  for (let k = tail; k > 0; k -= 1) {
    rows.push({ op: " ", text: a[a.length - k], old: a.length - k + 1, new: b.length - k + 1 });
  }
  return rows;
}

// The longest common subsequence of the changed middle, walked into rows.
function middle(a, b) {
  if (!a.length || !b.length || a.length * b.length > MAX_CELLS) {
    return [...a.map((text, i) => ({ op: "-", text, old: i, new: null })),
      ...b.map((text, j) => ({ op: "+", text, old: null, new: j }))];
  }
  const width = b.length + 1;
  const table = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      table[i * width + j] = a[i] === b[j] ? table[(i + 1) * width + j + 1] + 1
        : Math.max(table[(i + 1) * width + j], table[i * width + j + 1]);
    }
  }
  const rows = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) rows.push({ op: " ", text: a[i], old: i++, new: j++ });
    else if (table[(i + 1) * width + j] >= table[i * width + j + 1]) rows.push({ op: "-", text: a[i], old: i++, new: null });
    else rows.push({ op: "+", text: b[j], old: null, new: j++ });
  }
  while (i < a.length) rows.push({ op: "-", text: a[i], old: i++, new: null });
  while (j < b.length) rows.push({ op: "+", text: b[j], old: null, new: j++ });
  return rows;
}

const WORDS = { "-": "removed", "+": "added", " ": "" };

// Rows with `context` unchanged lines around each change; gaps become one "…" row.
export function renderDiff(rows, context = 3) {
  const changed = rows.map((row) => row.op !== " ");
  if (!changed.includes(true)) return [h("p", { class: "muted" }, "No changes.")];
  const keep = rows.map((_, i) => {
    for (let k = Math.max(0, i - context); k <= Math.min(rows.length - 1, i + context); k += 1) {
      if (changed[k]) return true;
    }
    return false;
  });
  const out = [];
  let skipped = false;
  rows.forEach((row, i) => {
    if (!keep[i]) {
      if (!skipped) out.push(h("div", { class: "diff-row gap" }, h("span", { class: "ln" }, "…"),
        h("span", { class: "sign" }), h("span", { class: "lt" }, "unchanged lines")));
      skipped = true;
      return;
    }
    skipped = false;
    const cls = row.op === "-" ? "del" : row.op === "+" ? "ins" : "same";
    out.push(h("div", { class: `diff-row ${cls}` },
      h("span", { class: "ln" }, String(row.new ?? row.old ?? "")),
      h("span", { class: "sign", "aria-hidden": "true" }, row.op === " " ? "" : row.op === "-" ? "−" : "+"),
      h("span", { class: "lt" }, WORDS[row.op] ? h("span", { class: "visually-hidden" }, `${WORDS[row.op]}: `) : null,
        row.text === "" ? "\u200b" : row.text)));
  });
  return out;
}

// "2 lines added, 1 removed" for a status line.
export function diffSummary(rows) {
  const added = rows.filter((row) => row.op === "+").length;
  const removed = rows.filter((row) => row.op === "-").length;
  const plural = (n) => (n === 1 ? "line" : "lines");
  return `${added} ${plural(added)} added, ${removed} ${plural(removed)} removed`;
}
