// The search view: a query form and ranked hits with citation, score and breakdown.

import { getJson } from "./api.js";
import { describeError, fill, formatScore, h } from "./dom.js";

const form = () => document.getElementById("search-form");
const statusLine = () => document.getElementById("search-status");
const hitList = () => document.getElementById("hits");

let lastSearch = null;

// The agent a hit's file belongs to: "agent:coder" -> "coder"; "global" -> "".
function agentOfSource(source) {
  return source && source.startsWith("agent:") ? source.slice("agent:".length) : "";
}

function breakdownTable(hit) {
  const entries = Object.entries(hit.breakdown || {});
  const largest = Math.max(1e-9, ...entries.map(([, v]) => Math.abs(Number(v)) || 0));
  const rows = entries.map(([signal, value]) => {
    const width = `${Math.round((Math.abs(Number(value)) / largest) * 100)}%`;
    return h("tr", {},
      h("th", { scope: "row" }, signal),
      h("td", { class: "num" }, formatScore(value)),
      h("td", { class: "bar-cell" },
        h("span", { class: "bar", "aria-hidden": "true" },
          h("span", { class: "bar-fill", style: { width } }))));
  });
  return h("table", { class: "breakdown" },
    h("caption", {}, "Score breakdown"),
    h("thead", {}, h("tr", {},
      h("th", { scope: "col" }, "Signal"),
      h("th", { scope: "col" }, "Value"),
      h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Relative size")))),
    h("tbody", {}, rows));
}

function hitItem(hit, ctx) {
  const open = () => ctx.openFile(hit.path, hit.start_line, hit.end_line, agentOfSource(hit.source));
  return h("li", { class: "hit" },
    h("div", { class: "hit-head" },
      h("button", {
        type: "button", class: "citation", onclick: open,
        title: "Open the file at these lines",
      }, hit.citation),
      h("span", { class: "score" }, "score ", h("strong", {}, formatScore(hit.score))),
      h("span", { class: "source" }, hit.source)),
    h("pre", { class: "snippet" }, hit.text),
    breakdownTable(hit));
}

async function runSearch(ctx, query, scope) {
  lastSearch = { query, scope };
  fill(statusLine(), "Searching…");
  fill(hitList());
  try {
    const result = await getJson("/search", { query, scope, max_results: 10 });
    const count = result.hits.length;
    fill(statusLine(), count
      ? `${count} hit${count === 1 ? "" : "s"} for “${result.query}”`
      : result.notice || `No hits for “${result.query}”`);
    fill(hitList(), result.hits.map((hit) => hitItem(hit, ctx)));
    ctx.indexChanged(); // the search synced the index first
  } catch (error) {
    fill(statusLine(), h("span", { class: "error" }, describeError(error)));
  }
}

export function initSearch(ctx) {
  form().addEventListener("submit", (event) => {
    event.preventDefault();
    const query = document.getElementById("query").value.trim();
    if (query) runSearch(ctx, query, document.getElementById("scope").value);
  });
}

export function refreshSearch(ctx) {
  if (lastSearch) return runSearch(ctx, lastSearch.query, lastSearch.scope);
  fill(statusLine());
  fill(hitList());
  return undefined;
}
