// The facts timeline: every fact with its validity; superseded ones struck through
// with an arrow to their successor, forgotten ones marked. Filter by category; save a
// fact (POST /facts) and forget one with a reason (DELETE /facts/{id}?reason=).

import { getJson, sendJson } from "./api.js";
import { describeError, fill, h, timeEl } from "./dom.js";

const statusLine = () => document.getElementById("facts-status");
const list = () => document.getElementById("facts");
const categorySelect = () => document.getElementById("category");

function factElementId(id) {
  return `fact-${id}`;
}

function focusFact(id) {
  const target = document.getElementById(factElementId(id));
  if (!target) return;
  target.scrollIntoView({ block: "center" });
  target.focus({ preventScroll: true });
}

// Where a fact's validity sits on the shared time axis, as CSS percentages.
function spanStyle(fact, axis) {
  const from = Date.parse(fact.valid_from);
  const to = fact.valid_to ? Date.parse(fact.valid_to) : axis.end;
  const width = Math.max(1, ((to - from) / axis.length) * 100);
  const left = Math.min(99, ((from - axis.start) / axis.length) * 100);
  return { left: `${left}%`, width: `${Math.min(width, 100 - left)}%` };
}

function stateBadge(fact) {
  const label = { current: "current", superseded: "superseded", forgotten: "forgotten" }[fact.state];
  return h("span", { class: `badge state-${fact.state}` }, label || fact.state);
}

// "Forget…" opens a reason field; the fact is retired (kept for as_of and audit).
function forgetControl(fact, ctx) {
  const reasonId = `forget-reason-${fact.id}`;
  const formEl = h("form", { class: "row forget-form", hidden: true },
    h("label", { for: reasonId }, "Why is it no longer true?"),
    h("input", { id: reasonId, type: "text", required: true, maxlength: "500" }),
    h("button", { type: "submit" }, "Forget"),
    h("button", { type: "button", class: "secondary", onclick: () => { formEl.hidden = true; } },
      "Cancel"),
    h("span", { class: "status forget-status", role: "status" }));
  formEl.addEventListener("submit", async (event) => {
    event.preventDefault();
    const reason = formEl.querySelector("input").value.trim();
    if (!reason) return;
    try {
      await sendJson("DELETE", `/facts/${encodeURIComponent(fact.id)}`, undefined, { reason });
    } catch (error) {
      fill(formEl.querySelector(".forget-status"), h("span", { class: "error" }, describeError(error)));
      return;
    }
    fill(document.getElementById("save-fact-status"), `Forgot: ${fact.text} (${reason})`);
    await refreshFacts(ctx);
  });
  const open = h("button", {
    type: "button", class: "link forget-open",
    onclick: () => { formEl.hidden = false; formEl.querySelector("input").focus(); },
  }, "Forget…");
  return [open, formEl];
}

function factItem(fact, byId, axis, ctx) {
  const textTag = fact.state === "current" ? "span" : fact.state === "forgotten" ? "s" : "del";
  const successor = fact.superseded_by ? byId.get(fact.superseded_by) : null;
  const validity = h("p", { class: "validity" }, "valid ", timeEl(fact.valid_from), " → ",
    fact.valid_to ? timeEl(fact.valid_to) : "now");
  return h("li", { class: `fact ${fact.state}`, id: factElementId(fact.id), tabindex: "-1" },
    h("div", { class: "fact-head" },
      h("span", { class: "badge category" }, fact.category),
      stateBadge(fact),
      h("button", {
        type: "button", class: "link source-link",
        onclick: () => ctx.openFile(fact.source_path, fact.source_line, fact.source_line),
        title: "Open the daily note at this fact's line",
      }, `${fact.source_path}:${fact.source_line}`)),
    h(textTag, { class: "fact-text" }, fact.text),
    validity,
    fact.state === "current" ? forgetControl(fact, ctx) : null,
    h("div", { class: "span-track", "aria-hidden": "true" },
      h("span", { class: `span-fill ${fact.state}`, style: spanStyle(fact, axis) })),
    successor || fact.superseded_by
      ? h("p", { class: "successor" }, h("span", { "aria-hidden": "true" }, "→ "),
        "superseded by ",
        h("button", { type: "button", class: "link", onclick: () => focusFact(fact.superseded_by) },
          successor ? successor.text : fact.superseded_by))
      : null,
    fact.forgotten_at
      ? h("p", { class: "forgotten-note" }, "forgotten ", timeEl(fact.forgotten_at),
        fact.forgotten_reason ? `: ${fact.forgotten_reason}` : "")
      : null);
}

function timeAxis(facts) {
  const starts = facts.map((f) => Date.parse(f.valid_from)).filter(Number.isFinite);
  const ends = facts.map((f) => Date.parse(f.valid_to || f.forgotten_at || "")).filter(Number.isFinite);
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

export async function refreshFacts(ctx) {
  fill(statusLine(), "Loading facts…");
  let timeline;
  try {
    timeline = await getJson("/facts/timeline", { category: categorySelect().value });
  } catch (error) {
    fill(list());
    const text = error.status === 501 || error.status === 404
      ? `Facts not available: ${error.detail}`
      : describeError(error);
    fill(statusLine(), h("span", { class: error.status === 501 ? "muted" : "error" }, text));
    return;
  }
  fillCategories(timeline.categories);
  const facts = timeline.facts;
  const byId = new Map(facts.map((f) => [f.id, f]));
  const counts = facts.reduce((acc, f) => ({ ...acc, [f.state]: (acc[f.state] || 0) + 1 }), {});
  fill(statusLine(), facts.length
    ? `${facts.length} facts: ${counts.current || 0} current, ${counts.superseded || 0} ` +
      `superseded, ${counts.forgotten || 0} forgotten`
    : "No facts saved yet.");
  const axis = facts.length ? timeAxis(facts) : null;
  fill(list(), facts.map((fact) => factItem(fact, byId, axis, ctx)));
}

const SAVED = { add: "Saved", update: "Updated", supersede: "Saved, superseding an older fact",
  none: "Already known" };

async function saveFact(event, ctx) {
  event.preventDefault();
  const textBox = document.getElementById("fact-text");
  const status = document.getElementById("save-fact-status");
  const content = textBox.value.trim();
  if (!content) return;
  const body = { content };
  const category = document.getElementById("fact-category").value;
  if (category) body.category = category;
  fill(status, "Saving…");
  let outcome;
  try {
    outcome = await sendJson("POST", "/facts", body);
  } catch (error) {
    fill(status, h("span", { class: "error" }, describeError(error)));
    return;
  }
  const verb = SAVED[outcome.action] || "Saved";
  fill(status, outcome.fact ? `${verb}: ${outcome.fact.text}` : `Nothing saved: ${outcome.reason}`);
  textBox.value = "";
  await refreshFacts(ctx);
}

export function initFacts(ctx) {
  categorySelect().addEventListener("change", () => refreshFacts(ctx));
  document.getElementById("facts-form").addEventListener("submit", (e) => e.preventDefault());
  document.getElementById("save-fact-form").addEventListener("submit", (e) => saveFact(e, ctx));
}
