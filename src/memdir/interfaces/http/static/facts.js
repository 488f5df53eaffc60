// The facts view: what is true now first (newest first), then what ended (superseded or
// forgotten, newest end first), each with its validity on a shared time axis. Filter by
// text and category; save a fact (POST /facts), edit one (PUT /facts/{id}: a new version
// that supersedes it), forget one with a reason (DELETE /facts/{id}?reason=), and read a
// fact's versions (the chain of supersessions, oldest first).

import { getJson, sendJson } from "./api.js";
import { fill, h, sayError, timeEl } from "./dom.js";

const byId = (id) => document.getElementById(id);
const statusLine = () => byId("facts-status");
const currentList = () => byId("facts");
const endedList = () => byId("facts-ended");
const categorySelect = () => byId("category");
const filterBox = () => byId("fact-filter");

const CATEGORIES = ["preference", "decision", "fact", "context"];
let timeline = { facts: [], categories: [] };
let context = null;

function factElementId(id) {
  return `fact-${id}`;
}

function focusFact(id) {
  const target = document.getElementById(factElementId(id));
  if (!target) return;
  target.scrollIntoView({ block: "center" });
  target.focus({ preventScroll: true });
}

// When a fact stopped being true: superseded (valid_to) or forgotten; null while current.
export function endOf(fact) {
  return fact.valid_to || fact.forgotten_at || null;
}

// Where a fact's validity sits on the shared time axis, as CSS percentages.
function spanStyle(fact, axis) {
  const from = Date.parse(fact.valid_from);
  const end = endOf(fact);
  const to = end ? Date.parse(end) : axis.end;
  const width = Math.max(1, ((to - from) / axis.length) * 100);
  const left = Math.min(99, Math.max(0, ((from - axis.start) / axis.length) * 100));
  return { left: `${left}%`, width: `${Math.min(width, 100 - left)}%` };
}

function stateBadge(fact) {
  const label = { current: "current", superseded: "ended: superseded", forgotten: "ended: forgotten" }[fact.state];
  return h("span", { class: `badge state-${fact.state}` }, label || fact.state);
}

// "valid since …" for a current fact; "valid … until …" for one that ended, and why.
function validity(fact) {
  if (fact.state === "current") return h("p", { class: "validity" }, "true since ", timeEl(fact.valid_from));
  const how = fact.state === "forgotten" ? "forgotten" : "superseded";
  return h("p", { class: "validity" }, "was true from ", timeEl(fact.valid_from), " until ",
    timeEl(endOf(fact)), ` (${how})`);
}

// The versions of a fact: follow `supersedes` back and `superseded_by` forward.
export function versionsOf(fact, byKey) {
  const chain = [fact];
  const seen = new Set([fact.id]);
  for (let f = byKey.get(fact.supersedes); f && !seen.has(f.id); f = byKey.get(f.supersedes)) {
    chain.unshift(f);
    seen.add(f.id);
  }
  for (let f = byKey.get(fact.superseded_by); f && !seen.has(f.id); f = byKey.get(f.superseded_by)) {
    chain.push(f);
    seen.add(f.id);
  }
  return chain;
}

function historyControl(fact, byKey) {
  const chain = versionsOf(fact, byKey);
  if (chain.length < 2) return null;
  return h("details", { class: "fact-history" },
    h("summary", {}, `History: ${chain.length} versions`),
    h("ol", {}, chain.map((version) => h("li", { class: version.id === fact.id ? "this-version" : null },
      version.state === "current" ? h("span", {}, version.text) : h("del", {}, version.text), " ",
      h("span", { class: "muted" }, "from ", timeEl(version.valid_from),
        endOf(version) ? [" until ", timeEl(endOf(version))] : " (current)")))));
}

function inlineForm(fact, kind, fields, submitLabel, onSubmit) {
  const formEl = h("form", { class: `row ${kind}-form`, hidden: true },
    fields,
    h("button", { type: "submit" }, submitLabel),
    h("button", { type: "button", class: "secondary", onclick: () => { formEl.hidden = true; } }, "Cancel"),
    h("span", { class: `status ${kind}-status`, role: "status" }));
  formEl.addEventListener("keydown", (event) => {
    if (event.key === "Escape") { formEl.hidden = true; event.stopPropagation(); }
  });
  formEl.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await onSubmit(formEl);
    } catch (error) {
      fill(formEl.querySelector(`.${kind}-status`), h("span", { class: "error" }, sayError(error, "The fact")));
    }
  });
  return formEl;
}

// "Forget…" opens a reason field; the fact is retired (kept for as_of and audit).
function forgetControl(fact) {
  const reasonId = `forget-reason-${fact.id}`;
  const formEl = inlineForm(fact, "forget", [
    h("label", { for: reasonId }, "Why is it no longer true?"),
    h("input", { id: reasonId, type: "text", required: true, maxlength: "500" }),
  ], "Forget", async (form) => {
    const reason = form.querySelector("input").value.trim();
    if (!reason) return;
    await sendJson("DELETE", `/facts/${encodeURIComponent(fact.id)}`, undefined, { reason });
    fill(byId("save-fact-status"), `Forgot: ${fact.text} (${reason})`);
    await refreshFacts(context);
  });
  const open = h("button", {
    type: "button", class: "link forget-open",
    onclick: () => { formEl.hidden = false; formEl.querySelector("input").focus(); },
  }, "Forget…");
  return [open, formEl];
}

// "Edit…": new text and category; saved as a new version that supersedes this one.
function editControl(fact) {
  const textId = `edit-fact-${fact.id}`;
  const categoryId = `edit-category-${fact.id}`;
  const formEl = inlineForm(fact, "edit-fact", [
    h("label", { for: textId }, "New text"),
    h("input", { id: textId, type: "text", required: true, maxlength: "500", value: fact.text }),
    h("label", { for: categoryId }, "new category"),
    h("select", { id: categoryId }, CATEGORIES.map((c) => h("option", { value: c, selected: c === fact.category }, c))),
  ], "Save the new version", async (form) => {
    const text = form.querySelector("input").value.trim();
    if (!text) return;
    const category = form.querySelector("select").value;
    const saved = await sendJson("PUT", `/facts/${encodeURIComponent(fact.id)}`, { text, category });
    fill(byId("save-fact-status"), `Updated: ${saved.text || text}`);
    await refreshFacts(context);
  });
  const open = h("button", {
    type: "button", class: "link edit-fact-open",
    onclick: () => { formEl.hidden = false; formEl.querySelector("input").focus(); },
  }, "Edit…");
  return [open, formEl];
}

function factItem(fact, byKey, axis) {
  const textTag = fact.state === "current" ? "span" : fact.state === "forgotten" ? "s" : "del";
  const successor = fact.superseded_by ? byKey.get(fact.superseded_by) : null;
  return h("li", { class: `fact ${fact.state}`, id: factElementId(fact.id), tabindex: "-1" },
    h("div", { class: "fact-head" },
      h("span", { class: "badge category" }, fact.category),
      stateBadge(fact),
      h("button", {
        type: "button", class: "link source-link",
        onclick: () => context.openFile(fact.source_path, fact.source_line, fact.source_line),
        title: "Open the daily note at this fact's line",
      }, `${fact.source_path}:${fact.source_line}`)),
    h(textTag, { class: "fact-text" }, fact.text),
    validity(fact),
    h("div", { class: "span-track", "aria-hidden": "true" },
      h("span", { class: `span-fill ${fact.state}`, style: spanStyle(fact, axis) })),
    fact.state === "current" ? h("div", { class: "fact-actions" }, editControl(fact), forgetControl(fact)) : null,
    fact.superseded_by
      ? h("p", { class: "successor" }, h("span", { "aria-hidden": "true" }, "→ "),
        "superseded by ",
        h("button", { type: "button", class: "link", onclick: () => focusFact(fact.superseded_by) },
          successor ? successor.text : fact.superseded_by))
      : null,
    fact.forgotten_at
      ? h("p", { class: "forgotten-note" }, "forgotten ", timeEl(fact.forgotten_at),
        fact.forgotten_reason ? `: ${fact.forgotten_reason}` : "")
      : null,
    historyControl(fact, byKey));
}

function timeAxis(facts) {
  const starts = facts.map((f) => Date.parse(f.valid_from)).filter(Number.isFinite);
  const ends = facts.map((f) => Date.parse(endOf(f) || "")).filter(Number.isFinite);
  const start = Math.min(...starts);
  const end = Math.max(Date.now(), ...ends);
  return { start, end, length: Math.max(1, end - start) };
}

function fillCategories(categories) {
  const select = categorySelect();
  const chosen = select.value;
  fill(select, h("option", { value: "" }, "All categories"),
    categories.map((c) => h("option", { value: c }, c)));
  select.value = categories.includes(chosen) ? chosen : "";
}

const newest = (key) => (a, b) => String(key(b)).localeCompare(String(key(a)));

function render() {
  const all = timeline.facts;
  const needle = filterBox().value.trim().toLowerCase();
  const category = categorySelect().value;
  const shown = all.filter((f) => (!category || f.category === category) &&
    (!needle || f.text.toLowerCase().includes(needle)));
  const byKey = new Map(all.map((f) => [f.id, f]));
  const axis = all.length ? timeAxis(all) : null;
  const current = shown.filter((f) => f.state === "current").sort(newest((f) => f.valid_from));
  const ended = shown.filter((f) => f.state !== "current").sort(newest(endOf));
  const filtered = needle || category ? ` matching the filter (of ${all.length})` : "";
  fill(statusLine(), all.length
    ? `${shown.length} facts${filtered}: ${current.length} current, ${ended.length} ended.`
    : "No facts saved yet.");
  fill(currentList(), current.length ? current.map((f) => factItem(f, byKey, axis))
    : h("li", { class: "muted" }, "None."));
  fill(endedList(), ended.length ? ended.map((f) => factItem(f, byKey, axis))
    : h("li", { class: "muted" }, "None."));
}

export async function refreshFacts(ctx) {
  context = ctx;
  fill(statusLine(), "Loading facts…");
  try {
    timeline = await getJson("/facts/timeline");
  } catch (error) {
    fill(currentList());
    fill(endedList());
    const text = error.status === 501 ? `Facts are not available here: ${error.detail}`
      : sayError(error, "The facts");
    fill(statusLine(), h("span", { class: error.status === 501 ? "muted" : "error" }, text));
    return;
  }
  fillCategories(timeline.categories);
  render();
}

const SAVED = { add: "Saved", update: "Updated", supersede: "Saved, superseding an older fact",
  none: "Already known" };

async function saveFact(event, ctx) {
  event.preventDefault();
  const textBox = byId("fact-text");
  const status = byId("save-fact-status");
  const content = textBox.value.trim();
  if (!content) return;
  const body = { content };
  const category = byId("fact-category").value;
  if (category) body.category = category;
  fill(status, "Saving…");
  let outcome;
  try {
    outcome = await sendJson("POST", "/facts", body);
  } catch (error) {
    fill(status, h("span", { class: "error" }, sayError(error, "The fact")));
    return;
  }
  const verb = SAVED[outcome.action] || "Saved";
  fill(status, outcome.fact ? `${verb}: ${outcome.fact.text}` : `Nothing saved: ${outcome.reason}`);
  textBox.value = "";
  await refreshFacts(ctx);
}

export function initFacts(ctx) {
  context = ctx;
  categorySelect().addEventListener("change", render);
  filterBox().addEventListener("input", render);
  byId("facts-form").addEventListener("submit", (e) => e.preventDefault());
  byId("save-fact-form").addEventListener("submit", (e) => saveFact(e, ctx));
}
