// The "Why recalled" view: the trace of searches and recalls (GET /trace), newest first:
// when, who asked, and each hit with its score and the reasons in words, its citation
// opening the cited lines. With tracing off, it says how to turn it on.

import { getJson } from "./api.js";
import { fill, formatScore, h, highlighted, sayError, timeEl } from "./dom.js";
import { strength, whyInWords } from "./search.js";

const byId = (id) => document.getElementById(id);
let context = null;

const turnOn = () => [
  "Tracing is off, so nothing is recorded about searches and recalls. Turn it on with the " +
  "setting ", h("code", {}, "trace.enabled = true"), ": add ",
  h("code", {}, "[trace] enabled = true"), " to ", h("code", {}, "$MEMDIR_HOME/memdir.toml"),
  " and restart the server, or start it with ",
  h("code", {}, "memdir --set trace.enabled=true serve"), ".",
];

// "path:12-14" -> { path, start, end }; null for what cites no lines.
export function parseCitation(cited) {
  const match = /^(.+):(\d+)(?:-(\d+))?$/.exec(String(cited || ""));
  if (!match) return null;
  const start = Number(match[2]);
  return { path: match[1], start, end: match[3] ? Number(match[3]) : start };
}

// Who asked, in words: "agent coder · token e174… · through memory_search".
export function whoAsked(entry) {
  const parts = [];
  if (entry.agent) parts.push(`agent ${entry.agent}`);
  if (entry.token) parts.push(`token ${entry.token}`);
  if (entry.session) parts.push(`session ${entry.session}`);
  if (entry.tool) parts.push(`through ${entry.tool}`);
  return parts.length ? parts.join(" · ") : "not recorded (the CLI or Python, without a token)";
}

function citationButton(hit) {
  const cited = parseCitation(hit.cited);
  if (!cited) return h("span", { class: "muted" }, hit.cited || `fact ${hit.fact}`);
  const open = () => context.openFile(cited.path, cited.start, cited.end);
  return h("button", {
    type: "button", class: "citation", onclick: open, title: "Open the file at these lines",
  }, hit.cited);
}

function hitItem(entry, hit) {
  const asHit = { breakdown: hit.breakdown || {}, text: hit.text || "", retired: hit.retired };
  return h("li", { class: "trace-hit" },
    h("div", { class: "hit-head" },
      citationButton(hit),
      h("span", { class: "score" }, strength(hit.score), " · score ",
        h("strong", {}, formatScore(hit.score)))),
    hit.fact && hit.text ? h("p", { class: "trace-fact" }, hit.text) : null,
    !hit.fact && hit.text ? h("pre", { class: "snippet" }, highlighted(hit.text, entry.query)) : null,
    h("p", { class: "why-words" }, "Why: ", whyInWords(asHit, entry.query)));
}

function entryItem(entry, index) {
  const hits = Array.isArray(entry.hits) ? entry.hits.filter((hit) => hit && typeof hit === "object") : [];
  const kind = entry.kind === "recall" ? "recall" : "search";
  const id = `trace-entry-${index}`;
  return h("li", { class: "trace-entry hit" },
    h("h3", { id, class: "trace-query" },
      h("span", { class: `badge kind-${kind}` }, kind === "recall" ? "facts recalled" : "searched"), " ",
      `“${entry.query ?? ""}”`),
    h("p", { class: "muted" }, timeEl(entry.time), " · asked by ", whoAsked(entry)),
    hits.length
      ? h("ol", { class: "trace-hits", "aria-labelledby": id }, hits.map((hit) => hitItem(entry, hit)))
      : h("p", { class: "muted" }, "Nothing came back."));
}

const NAMES = {
  "": ["search or recall", "searches and recalls"],
  search: ["search", "searches"],
  recall: ["recall", "recalls"],
};

export async function refreshTrace(ctx) {
  context = ctx;
  const kind = byId("trace-kind").value;
  const status = byId("trace-status");
  const off = byId("trace-off");
  fill(status, "Loading the recent searches and recalls…");
  let trace;
  try {
    trace = await getJson("/trace", { limit: 50, kind });
  } catch (error) {
    fill(byId("trace-list"));
    fill(status, h("span", { class: "error" }, sayError(error, "The trace")));
    return;
  }
  off.hidden = trace.enabled;
  fill(off, trace.enabled ? [] : h("p", {}, turnOn()));
  const count = trace.entries.length;
  const [one, many] = NAMES[kind] || NAMES[""];
  const skipped = trace.skipped
    ? ` ${trace.skipped} unreadable line${trace.skipped === 1 ? "" : "s"} of the trace file left out.`
    : "";
  fill(status, (count
    ? `The last ${count === 1 ? one : `${count} ${many}`}, newest first.`
    : trace.enabled ? `No ${one} traced yet.` : "") + skipped);
  fill(byId("trace-list"), trace.entries.map(entryItem));
}

export function initTrace(ctx) {
  context = ctx;
  byId("trace-kind").addEventListener("change", () => refreshTrace(context));
  byId("trace-form").addEventListener("submit", (event) => event.preventDefault());
}
