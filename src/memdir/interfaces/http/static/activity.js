// The activity view: what changed in memory over the last days (files written, facts
// saved, superseded or forgotten; GET /recent), newest first, one heading per day.

import { getJson } from "./api.js";
import { fill, formatNumber, h, sayError } from "./dom.js";

const byId = (id) => document.getElementById(id);
let context = null;

function dayKey(date) {
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

// "Today", "Yesterday" or "Mon 2026-11-23".
export function dayLabel(key, now = new Date()) {
  const today = dayKey(now);
  const yesterday = dayKey(new Date(now.getTime() - 86_400_000));
  if (key === today) return "Today";
  if (key === yesterday) return "Yesterday";
  const [y, m, d] = key.split("-").map(Number);
  const weekday = new Date(y, m - 1, d).toLocaleDateString("en-US", { weekday: "short" });
  return `${weekday} ${key}`;
}

function clock(date) {
  const pad = (n) => String(n).padStart(2, "0");
  return `${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

function sizeText(bytes) {
  return bytes >= 1024 ? `${formatNumber(Math.round(bytes / 102.4) / 10)} kB` : `${bytes} bytes`;
}

const FACT_WORDS = { saved: "fact saved", superseded: "fact superseded", forgotten: "fact forgotten" };

function fileEvent(change) {
  return {
    at: new Date(change.modified),
    node: (time) => h("li", { class: "event file-event" }, time,
      h("span", { class: "badge kind-file" }, "file written"), " ",
      h("button", { type: "button", class: "file-link", onclick: () => context.openFile(change.path, null, null) },
        change.path),
      " ", h("span", { class: "muted" }, sizeText(change.size_bytes))),
  };
}

function factEvent(change) {
  const ended = change.kind !== "saved";
  return {
    at: new Date(change.at),
    node: (time) => h("li", { class: `event fact-event ${change.kind}` }, time,
      h("span", { class: `badge kind-${change.kind}` }, FACT_WORDS[change.kind] || change.kind), " ",
      ended ? h("s", {}, change.fact.text) : change.fact.text,
      change.kind === "forgotten" && change.fact.forgotten_reason
        ? h("span", { class: "muted" }, ` (${change.fact.forgotten_reason})`) : null),
  };
}

export async function refreshActivity(ctx) {
  context = ctx;
  const days = Number(byId("activity-days").value) || 7;
  const status = byId("activity-status");
  fill(status, "Loading what changed…");
  let activity;
  try {
    activity = await getJson("/recent", { days, limit: 1000 });
  } catch (error) {
    fill(byId("activity"));
    fill(status, h("span", { class: "error" }, sayError(error, "Recent activity")));
    return;
  }
  const events = [...activity.files.map(fileEvent), ...activity.facts.map(factEvent)]
    .filter((event) => !Number.isNaN(event.at.getTime()))
    .sort((a, b) => b.at - a.at);
  const more = activity.more_files + activity.more_facts;
  fill(status, `${events.length} changes in the last ${days === 1 ? "day" : `${days} days`}: ` +
    `${activity.files.length} files written, ${activity.facts.length} fact changes` +
    (more ? ` (${more} older ones not shown)` : "") + ".");
  const groups = new Map();
  for (const event of events) {
    const key = dayKey(event.at);
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(event);
  }
  const now = new Date();
  fill(byId("activity"), events.length ? [...groups.entries()].map(([key, dayEvents]) =>
    h("section", { class: "activity-day", "aria-labelledby": `day-${key}` },
      h("h2", { id: `day-${key}` }, dayLabel(key, now), " ",
        h("span", { class: "muted" }, `${dayEvents.length} change${dayEvents.length === 1 ? "" : "s"}`)),
      h("ol", { class: "events" }, dayEvents.map((event) =>
        event.node(h("time", { datetime: event.at.toISOString(), class: "clock" }, clock(event.at)))))))
    : h("p", { class: "muted" }, "Nothing changed in this period."));
}

export function initActivity(ctx) {
  context = ctx;
  byId("activity-days").addEventListener("change", () => refreshActivity(context));
  byId("activity-form").addEventListener("submit", (event) => event.preventDefault());
}
