// Markdown to DOM, for reading notes. Note text is hostile input: nothing here parses
// HTML. Every block and span is built with createElement and text nodes, raw HTML in a
// note shows as the text it is, and links keep only http(s) and mailto addresses. HTML
// comments (memdir's fact markers `<!-- memdir:fact id=... -->` among them) are hidden.
// Each block carries the lines it came from (data-start, data-end), so a citation
// `path:12-14` can highlight the blocks that hold those lines.

import { h } from "./dom.js";

const FENCE = /^\s{0,3}(`{3,}|~{3,})(.*)$/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_RULE = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;
// A citation as memdir prints them: `memory/2026-11-27.md:12` or `MEMORY.md:3-5`.
export const CITATION = /((?:[\w.-]+\/)*[\w.-]+\.md):(\d+)(?:-(\d+))?/;
const INLINE = new RegExp([
  "(`+)([\\s\\S]+?)\\1", // code: 1 ticks, 2 text
  "\\*\\*(.+?)\\*\\*|__(.+?)__", // strong: 3 or 4
  "\\*([^*\\s](?:[^*]*[^*\\s])?)\\*|\\b_([^_\\s](?:[^_]*[^_\\s])?)_\\b", // em: 5 or 6
  "~~(.+?)~~", // strike: 7
  "\\[([^\\]]+)\\]\\(([^()\\s]+)\\)", // link: 8 text, 9 address
  "(https?://[^\\s<>()\\]]+[^\\s<>()\\].,;:!?'\"])", // bare address: 10
  CITATION.source, // citation: 11 path, 12 start, 13 end
].join("|"), "g");

// Hide HTML comments, keeping the line count so line numbers stay true.
export function hideComments(text) {
  return text.replace(/<!--[\s\S]*?-->/g, (comment) => comment.replace(/[^\n]/g, ""));
}

function safeHref(address) {
  try {
    const url = new URL(address, "https://invalid.example/");
    if (["http:", "https:", "mailto:"].includes(url.protocol) && /^(https?:|mailto:)/i.test(address)) {
      return url.href;
    }
  } catch {
    return null;
  }
  return null;
}

// Inline Markdown of `text` as nodes; `opts.onCitation(path, start, end)` opens a cited file.
export function inline(text, opts = {}) {
  const out = [];
  let last = 0;
  const pattern = new RegExp(INLINE); // its own lastIndex: inline() recurses
  for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    last = pattern.lastIndex;
    if (m[1]) out.push(h("code", {}, m[2]));
    else if (m[3] || m[4]) out.push(h("strong", {}, inline(m[3] || m[4], opts)));
    else if (m[5] || m[6]) out.push(h("em", {}, inline(m[5] || m[6], opts)));
    else if (m[7]) out.push(h("del", {}, inline(m[7], opts)));
    else if (m[8]) out.push(link(m[8], m[9], opts));
    else if (m[10]) out.push(link(m[10], m[10], opts));
    else if (m[11]) out.push(citation(m[0], m[11], m[12], m[13], opts));
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

function link(label, address, opts) {
  if (/^[\w./-]+\.md$/.test(address) && opts.onCitation) {
    return h("button", { type: "button", class: "link doc-link", onclick: () => opts.onCitation(address, null, null) },
      inline(label, {}));
  }
  const href = safeHref(address);
  if (!href) return `[${label}](${address})`;
  return h("a", { href, rel: "noopener noreferrer nofollow", target: "_blank" }, inline(label, {}));
}

function citation(whole, path, start, end, opts) {
  const first = Number.parseInt(start, 10);
  const lastLine = end ? Number.parseInt(end, 10) : first;
  if (!opts.onCitation) return h("span", { class: "cite" }, whole);
  return h("button", {
    type: "button", class: "cite", title: `Open ${path} at line ${first}`,
    onclick: () => opts.onCitation(path, first, lastLine),
  }, whole);
}

function block(tag, start, end, props, ...children) {
  const el = h(tag, props, ...children);
  el.dataset.start = String(start);
  el.dataset.end = String(end);
  el.classList.add("md-block");
  return el;
}

function isBlockStart(line) {
  return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || ITEM.test(line);
}

function splitRow(line) {
  return line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((cell) => cell.trim());
}

// A run of list lines as nested <ul>/<ol>: an item deeper than the one before opens a list in it.
function buildList(items, opts) {
  const roots = [];
  const stack = []; // { indent, list, lastLi }
  for (const item of items) {
    while (stack.length && stack[stack.length - 1].indent > item.indent) stack.pop();
    let top = stack[stack.length - 1];
    if (!top || top.indent < item.indent) {
      const list = h(item.ordered ? "ol" : "ul", {});
      if (top) (top.lastLi || top.list).append(list);
      else roots.push(list);
      top = { indent: item.indent, list, lastLi: null };
      stack.push(top);
    }
    const task = /^\[([ xX])\]\s+(.*)$/.exec(item.text);
    const li = h("li", { class: task ? "task" : null },
      task ? h("span", { class: "task-box", "aria-hidden": "true" }, task[1] === " " ? "☐ " : "☑ ") : null,
      task ? h("span", { class: "visually-hidden" }, task[1] === " " ? "to do: " : "done: ") : null,
      inline(task ? task[2] : item.text, opts));
    li.dataset.line = String(item.line);
    top.list.append(li);
    top.lastLi = li;
  }
  return roots;
}

// The blocks of `text` (whose first line is line `offset + 1`) as an array of elements.
export function renderMarkdown(text, opts = {}, offset = 0) {
  const lines = hideComments(text).split("\n");
  const blocks = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const n = offset + i + 1;
    if (!line.trim()) { i += 1; continue; }
    let m = FENCE.exec(line);
    if (m) {
      const fence = m[1];
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence)) body.push(lines[i++]);
      i += 1;
      blocks.push(block("pre", n, offset + Math.min(i, lines.length), { class: "md-code" },
        h("code", {}, body.join("\n"))));
      continue;
    }
    m = HEADING.exec(line);
    if (m) {
      const level = Math.min(6, m[1].length + 2); // the page owns h1 and h2
      blocks.push(block(`h${level}`, n, n, {}, inline(m[2], opts)));
      i += 1;
      continue;
    }
    if (RULE.test(line)) {
      blocks.push(block("hr", n, n, {}));
      i += 1;
      continue;
    }
    if (QUOTE.test(line)) {
      const body = [];
      while (i < lines.length && QUOTE.test(lines[i])) body.push(QUOTE.exec(lines[i++])[1]);
      blocks.push(block("blockquote", n, offset + i, {}, renderMarkdown(body.join("\n"), opts, n - 1)));
      continue;
    }
    if (ITEM.test(line)) {
      const items = [];
      while (i < lines.length) {
        const item = ITEM.exec(lines[i]);
        if (item) {
          items.push({ indent: item[1].replace(/\t/g, "    ").length, ordered: /\d/.test(item[2]),
            text: item[3], line: offset + i + 1 });
        } else if (lines[i].trim() && /^\s+/.test(lines[i]) && items.length) {
          items[items.length - 1].text += ` ${lines[i].trim()}`;
        } else break;
        i += 1;
      }
      for (const list of buildList(items, opts)) {
        blocks.push(block("div", n, offset + i, { class: "md-list" }, list));
      }
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1])) {
      const head = splitRow(line);
      const rows = [];
      i += 2;
      while (i < lines.length && lines[i].includes("|") && lines[i].trim()) rows.push(splitRow(lines[i++]));
      blocks.push(block("div", n, offset + i, { class: "md-table" }, h("table", {},
        h("thead", {}, h("tr", {}, head.map((cell) => h("th", { scope: "col" }, inline(cell, opts))))),
        h("tbody", {}, rows.map((row) => h("tr", {}, row.map((cell) => h("td", {}, inline(cell, opts)))))))));
      continue;
    }
    const body = [line];
    i += 1;
    while (i < lines.length && lines[i].trim() && !isBlockStart(lines[i])) body.push(lines[i++]);
    const parts = [];
    body.forEach((text, k) => {
      if (k) parts.push(h("br", {}));
      parts.push(inline(text.trim(), opts));
    });
    blocks.push(block("p", n, offset + i, {}, parts));
  }
  return blocks;
}
