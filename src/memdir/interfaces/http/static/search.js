// The search view: a query form and ranked hits (citation, score, the query's words marked,
// the score breakdown folded away); with no query, the latest notes and facts.

import { getJson } from "./api.js";
import { describeError, fill, formatScore, h, highlighted, timeEl } from "./dom.js";
import { writeState } from "./state.js";

const form = () => document.getElementById("search-form");
const queryBox = () => document.getElementById("query");
const scopeBox = () => document.getElementById("scope");
const statusLine = () => document.getElementById("search-status");
const hitList = () => document.getElementById("hits");
const landing = () => document.getElementById("landing");

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
  // Folded: a hit is read for its text; how the score was made is there on demand.
  return h("details", { class: "why" },
    h("summary", {}, "Score breakdown"),
    h("table", { class: "breakdown" },
      h("thead", {}, h("tr", {},
        h("th", { scope: "col" }, "Signal"),
        h("th", { scope: "col" }, "Value"),
        h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Relative size")))),
      h("tbody", {}, rows)));
}

function hitItem(hit, query, ctx) {
  const open = () => ctx.openFile(hit.path, hit.start_line, hit.end_line, agentOfSource(hit.source));
  return h("li", { class: "hit" },
    h("div", { class: "hit-head" },
      h("button", {
        type: "button", class: "citation", onclick: open,
        title: "Open the file at these lines",
      }, hit.citation),
      h("span", { class: "score" }, "score ", h("strong", {}, formatScore(hit.score))),
      h("span", { class: "source" }, hit.source)),
    h("pre", { class: "snippet" }, highlighted(hit.text, query)),
    breakdownTable(hit));
}

async function runSearch(ctx, query, scope) {
  lastSearch = { query, scope };
  queryBox().value = query;
  scopeBox().value = scope;
  landing().hidden = true;
  fill(statusLine(), "Searching…");
  fill(hitList());
  try {
    const result = await getJson("/search", { query, scope, max_results: 10 });
    const count = result.hits.length;
    fill(statusLine(), count
      ? `${count} hit${count === 1 ? "" : "s"} for “${result.query}”`
      : result.notice || `No hits for “${result.query}”`);
    fill(hitList(), result.hits.map((hit) => hitItem(hit, query, ctx)));
    ctx.indexChanged(); // the search synced the index first
  } catch (error) {
    fill(statusLine(), h("span", { class: "error" }, describeError(error)));
  }
}

function recentFile(change, ctx) {
  return h("li", {},
    h("button", {
      type: "button", class: "file-link", onclick: () => ctx.openFile(change.path, null, null),
    }, change.path),
    " ", h("span", { class: "muted" }, timeEl(change.modified)));
}

function recentFact(change) {
  return h("li", { class: `recent-fact ${change.kind}` },
    h("span", { class: `badge kind-${change.kind}` }, change.kind), " ",
    change.kind === "saved" ? change.fact.text : h("s", {}, change.fact.text),
    " ", h("span", { class: "muted" }, timeEl(change.at)));
}

// What changed lately, shown until the first search.
async function showLanding(ctx) {
  landing().hidden = false;
  fill(statusLine());
  fill(hitList());
  const files = document.getElementById("recent-files");
  const facts = document.getElementById("recent-facts");
  let activity;
  try {
    activity = await getJson("/recent", { days: 30, limit: 40 });
  } catch (error) {
    fill(files, h("li", { class: "error" }, describeError(error)));
    fill(facts);
    return;
  }
  const notes = activity.files.filter((change) => !/^[A-Z]+\.md$/.test(change.path) ||
    change.path === "MEMORY.md").slice(0, 8);
  fill(files, notes.length ? notes.map((change) => recentFile(change, ctx))
    : h("li", { class: "muted" }, "No notes written in the last 30 days."));
  fill(facts, activity.facts.length ? activity.facts.slice(0, 8).map(recentFact)
    : h("li", { class: "muted" }, "No facts saved in the last 30 days."));
}

export function initSearch(ctx) {
  form().addEventListener("submit", (event) => {
    event.preventDefault();
    const query = queryBox().value.trim();
    const scope = scopeBox().value;
    if (!query) return;
    writeState({ q: query, scope: scope === "agent" ? "" : scope }, true);
    runSearch(ctx, query, scope);
  });
}

// Run the search the address names, or show the landing when it names none.
export function restoreSearch(query, scope) {
  lastSearch = query ? { query, scope: scope || "agent" } : null;
}

export function refreshSearch(ctx) {
  if (lastSearch) return runSearch(ctx, lastSearch.query, lastSearch.scope);
  queryBox().value = "";
  return showLanding(ctx);
}
