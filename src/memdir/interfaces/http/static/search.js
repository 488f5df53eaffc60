// The search view: a query form and ranked hits (citation, score, the query's words marked,
// the score breakdown folded away); with no query, the latest notes and facts.

import { getJson } from "./api.js";
import { sayError, fill, formatScore, h, highlighted, timeEl } from "./dom.js";
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

// Signals that are fractions (0-1) get a bar of that fraction; the others (raw BM25,
// the recency multiplier) are shown as numbers only, so no bar is scaled to another.
function breakdownTable(hit) {
  const entries = Object.entries(hit.breakdown || {});
  const rows = entries.map(([signal, value]) => {
    const number = Number(value);
    const fraction = Number.isFinite(number) && number >= 0 && number <= 1 && signal !== "recency";
    return h("tr", {},
      h("th", { scope: "row" }, signal),
      h("td", { class: "num" }, formatScore(value)),
      h("td", { class: "bar-cell" }, fraction
        ? h("span", { class: "bar", "aria-hidden": "true" },
          h("span", { class: "bar-fill", style: { width: `${Math.round(number * 100)}%` } }))
        : h("span", { class: "muted" }, "not a 0–1 value")));
  });
  return h("details", { class: "why" },
    h("summary", {}, "Show the raw score breakdown"),
    h("table", { class: "breakdown" },
      h("thead", {}, h("tr", {},
        h("th", { scope: "col" }, "Signal"),
        h("th", { scope: "col" }, "Value"),
        h("th", { scope: "col" }, "On a 0–1 scale"))),
      h("tbody", {}, rows)));
}

// The query's words that occur in `text` (case-insensitive, whole or as a word's start).
export function matchedWords(text, query) {
  const hay = String(text).toLowerCase();
  const words = [...new Set(String(query).toLowerCase().match(/[\p{L}\p{N}_]{2,}/gu) || [])]
    .filter((word) => !STOPWORDS.has(word));
  return words.filter((word) => hay.includes(word));
}

const STOPWORDS = new Set(["a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does",
  "for", "from", "how", "in", "is", "it", "of", "on", "or", "the", "to", "was", "we", "what",
  "when", "where", "which", "who", "why", "with", "about"]);

// Why a hit was found, in words: "matched 'billing'; close in meaning; written recently".
export function whyInWords(hit, query) {
  const b = hit.breakdown || {};
  const reasons = [];
  const words = matchedWords(hit.text, query);
  if (words.length) reasons.push(`matched ${words.map((w) => `‘${w}’`).join(", ")}`);
  else if ((b.bm25 || 0) > 0) reasons.push("shares word forms with the query");
  const cosine = Number(b.vector);
  if (cosine >= 0.5) reasons.push("close in meaning");
  else if (cosine >= 0.3) reasons.push("somewhat close in meaning");
  if ((b.neighbour || 0) > 0 && !(b.fused > 0)) reasons.push("next to a strong match");
  else if ((b.chunk || 0) > 0 && b.fused === 0) reasons.push("part of a matching passage");
  if ((b.recency || 1) > 1.01) reasons.push("written recently");
  if (hit.retired) reasons.push("from a fact that has since ended");
  return reasons.length ? reasons.join("; ") : "ranked by the combined signals";
}

// "strong match" / "good match" / "weak match" for a 0-1 score.
export function strength(score) {
  const value = Number(score);
  if (value >= 0.7) return "strong match";
  if (value >= 0.4) return "good match";
  return "weak match";
}

function hitItem(hit, query, ctx) {
  const open = () => ctx.openFile(hit.path, hit.start_line, hit.end_line, agentOfSource(hit.source));
  return h("li", { class: "hit" },
    h("div", { class: "hit-head" },
      h("button", {
        type: "button", class: "citation", onclick: open,
        title: "Open the file at these lines",
      }, hit.citation),
      h("span", { class: "score" }, strength(hit.score), " · score ", h("strong", {}, formatScore(hit.score))),
      h("span", { class: "source" }, hit.source)),
    h("p", { class: "why-words" }, "Why: ", whyInWords(hit, query)),
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
    fill(statusLine(), h("span", { class: "error" }, sayError(error, "The search")));
  }
}

function recentFile(change, ctx) {
  return h("li", {},
    h("button", {
      type: "button", class: "file-link", onclick: () => ctx.openFile(change.path, null, null),
    }, change.path),
    " ", h("span", { class: "muted" }, timeEl(change.modified)));
}

// A fact as it stands now (the newest change to it): struck through once it ended.
function factState(fact) {
  if (fact.forgotten_at) return "forgotten";
  return fact.valid_to ? "superseded" : "current";
}

function recentFact(change) {
  const state = factState(change.fact);
  return h("li", { class: `recent-fact ${state}` },
    h("span", { class: `badge state-${state}` }, state === "current" ? "current" : `ended: ${state}`), " ",
    state === "current" ? change.fact.text : h("s", {}, change.fact.text),
    " ", h("span", { class: "muted" }, timeEl(change.at)));
}

// One row per fact, its newest change first.
function latestPerFact(changes) {
  const seen = new Set();
  return changes.filter((change) => !seen.has(change.fact.id) && seen.add(change.fact.id));
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
    fill(files, h("li", { class: "error" }, sayError(error, "Recent activity")));
    fill(facts);
    return;
  }
  const notes = activity.files.filter((change) => !/^[A-Z]+\.md$/.test(change.path) ||
    change.path === "MEMORY.md").slice(0, 8);
  fill(files, notes.length ? notes.map((change) => recentFile(change, ctx))
    : h("li", { class: "muted" }, "No notes written in the last 30 days."));
  const latest = latestPerFact(activity.facts);
  fill(facts, latest.length ? latest.slice(0, 8).map(recentFact)
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
