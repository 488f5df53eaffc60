// The agent tools. memory_search and memory_get take OpenClaw's argument names and return
// memory-core's result shapes; memory_save, memory_recall and memory_forget reach memdir's
// facts (statements with a validity period, retired with a reason, never deleted).

import { jsonResult } from "openclaw/plugin-sdk/tool-results";
import { readMemoryFile, searchMemory } from "./memory.js";

const SEARCH_PARAMETERS = {
  type: "object",
  properties: {
    query: { type: "string", description: "What to look for, in words." },
    maxResults: { type: "integer", minimum: 1, maximum: 100, description: "At most this many hits." },
    minScore: { type: "number", minimum: 0, description: "Drop hits scoring below (default: memdir's search.min_score, 0.1)." },
  },
  required: ["query"],
  additionalProperties: false,
};

const GET_PARAMETERS = {
  type: "object",
  properties: {
    path: { type: "string", description: "The path of a hit, exactly as memory_search gave it." },
    from: { type: "integer", minimum: 1, description: "First line (1-based); default 1." },
    lines: { type: "integer", minimum: 1, description: "How many lines; default 120." },
  },
  required: ["path"],
  additionalProperties: false,
};

const SAVE_PARAMETERS = {
  type: "object",
  properties: {
    content: { type: "string", description: "One short, self-contained statement." },
    category: { type: "string", description: "preference, decision, fact, context, ..." },
    importance: { type: "integer", minimum: 1, maximum: 10, description: "1 (trivial) to 10 (critical); default: estimated." },
  },
  required: ["content"],
  additionalProperties: false,
};

const RECALL_PARAMETERS = {
  type: "object",
  properties: {
    query: { type: "string", description: "What you want to know." },
    category: { type: "string" },
    asOf: { type: "string", description: "ISO 8601 date or datetime: what was true at that moment." },
    limit: { type: "integer", minimum: 1, maximum: 50, description: "How many facts; default 5." },
  },
  required: ["query"],
  additionalProperties: false,
};

const FORGET_PARAMETERS = {
  type: "object",
  properties: {
    factId: { type: "string", description: "Id of the fact, from memory_recall." },
    query: { type: "string", description: "Text matching the fact, when you have no id." },
    reason: { type: "string", description: "Why the fact no longer holds." },
  },
  required: ["reason"],
  additionalProperties: false,
};

export const TOOL_NAMES = ["memory_search", "memory_get", "memory_save", "memory_recall", "memory_forget"];

/**
 * The tools for one run. `ctx` is OpenClaw's tool context (agentId, sessionKey, ...);
 * `deps` holds the client, the settings and how to read OpenClaw's live config.
 */
export function createTools(ctx, deps) {
  const target = () => deps.targetFor(ctx.agentId);
  return [
    {
      name: "memory_search",
      label: "Memory Search",
      description:
        "Mandatory recall step: search memory (MEMORY.md, USER.md, daily notes in memory/, saved facts) by meaning and keywords before answering questions about prior work, decisions, dates, people, preferences, or todos. Each hit has path, startLine, endLine, score (memdir's calibrated confidence, 0-1) and a citation; read more with memory_get. An empty result means nothing in memory reached the confidence floor: say you checked and found nothing rather than guess.",
      parameters: SEARCH_PARAMETERS,
      async execute(_toolCallId, params, signal) {
        const query = readString(params, "query", "memory_search", true);
        const maxResults = readInteger(params, "maxResults", "memory_search");
        const minScore = readNumber(params, "minScore", "memory_search");
        let found;
        try {
          found = await searchMemory(deps.client, target(), { query, maxResults, minScore, signal });
        } catch (error) {
          if (signal?.aborted || isRefusal(error)) throw error;
          return jsonResult(unavailable(error));
        }
        const mode = deps.citationsMode();
        const include = mode === "on" || (mode === "auto" && isDirectSession(ctx.sessionKey));
        return jsonResult({
          results: found.results.map((result) => present(result, include)),
          provider: "memdir",
          citations: mode,
          mode: "hybrid",
          confidence: found.confidence,
          ...(found.notice ? { notice: found.notice } : {}),
        });
      },
    },
    {
      name: "memory_get",
      label: "Memory Get",
      description:
        "Exact excerpt read from a memory file: pass the path of a memory_search hit as it is (with from=startLine and lines=endLine-startLine+1 for just the cited lines). Defaults to 120 lines from line 1 and says how to continue when more remains. status=ok means the excerpt was read; status=not_found means the file does not exist; status=error means the read failed.",
      parameters: GET_PARAMETERS,
      async execute(_toolCallId, params, signal) {
        const relPath = readString(params, "path", "memory_get", true);
        const from = readInteger(params, "from", "memory_get");
        const lines = readInteger(params, "lines", "memory_get");
        try {
          return jsonResult(await readMemoryFile(deps.client, target(), { relPath, from, lines, signal }));
        } catch (error) {
          if (signal?.aborted) throw error;
          return jsonResult({ path: relPath, text: "", status: "error", code: error.code ?? "MEMORY_READ_FAILED", error: error.message });
        }
      },
    },
    {
      name: "memory_save",
      label: "Memory Save",
      description:
        "Remember one durable fact (a preference, decision, fact about the user or project). Write one short self-contained statement. It goes to today's daily note (memory/YYYY-MM-DD.md) and memdir's facts; a fact that updates an older one supersedes it, and the old one stays queryable by date.",
      parameters: SAVE_PARAMETERS,
      async execute(_toolCallId, params, signal) {
        const body = {
          content: readString(params, "content", "memory_save", true),
          category: readString(params, "category", "memory_save"),
          importance: readInteger(params, "importance", "memory_save"),
        };
        const saved = await deps.client.call(target(), "POST", "/api/v1/facts", { body, signal });
        // memdir indexes a saved note lazily (the next full sync, up to index.refresh_seconds
        // later); an incremental sync now (tens of ms) makes the fact searchable at once.
        const indexed = await deps.client.call(target(), "POST", "/api/v1/index/sync", { signal }).then(() => true, () => false);
        const where = saved.location;
        return jsonResult({
          action: saved.action,
          fact: { id: saved.fact.id, text: saved.fact.text, category: saved.fact.category, importance: saved.fact.importance },
          ...(saved.superseded ? { superseded: { id: saved.superseded.id, text: saved.superseded.text } } : {}),
          ...(where ? { path: where.path, startLine: where.start_line, endLine: where.end_line } : {}),
          reason: saved.reason,
          indexed,
        });
      },
    },
    {
      name: "memory_recall",
      label: "Memory Recall",
      description:
        "Recall saved facts relevant to a question, most relevant first, with their ids, categories and dates. Pass asOf (ISO date or datetime) to see what was true then, including facts superseded since.",
      parameters: RECALL_PARAMETERS,
      async execute(_toolCallId, params, signal) {
        const query = {
          query: readString(params, "query", "memory_recall", true),
          category: readString(params, "category", "memory_recall"),
          as_of: readString(params, "asOf", "memory_recall"),
          limit: readInteger(params, "limit", "memory_recall"),
        };
        const found = await deps.client.call(target(), "GET", "/api/v1/facts/recall", { query, signal });
        return jsonResult({ facts: found.facts });
      },
    },
    {
      name: "memory_forget",
      label: "Memory Forget",
      description:
        "Retire a saved fact that is wrong or no longer true, by factId (from memory_recall) or by a query matching it; always give the reason. memory_recall no longer returns it, but nothing is deleted: its line stays in its daily note, and a forget line with the reason is added to today's.",
      parameters: FORGET_PARAMETERS,
      async execute(_toolCallId, params, signal) {
        const factId = readString(params, "factId", "memory_forget");
        const query = readString(params, "query", "memory_forget");
        const reason = readString(params, "reason", "memory_forget", true);
        if (Boolean(factId) === Boolean(query)) throw new Error("memory_forget: pass exactly one of factId or query");
        if (factId) {
          const retired = await deps.client.call(target(), "DELETE", `/api/v1/facts/${encodeURIComponent(factId)}`, { query: { reason }, signal });
          return jsonResult({ forgotten: retired });
        }
        const done = await deps.client.call(target(), "POST", "/api/v1/tools/memory_forget", { body: { query, reason }, signal });
        return jsonResult({ result: done.result });
      },
    },
  ];
}

/** memory-core's presentation: the citation field, and `Source:` under the snippet. */
function present(result, include) {
  if (!include) return { ...result, citation: undefined };
  return { ...result, snippet: `${result.snippet.trimEnd()}\n\nSource: ${result.citation}` };
}

/** memory-core's `auto` citations: on in direct chats, off in groups and channels. */
export function isDirectSession(sessionKey) {
  const rest = String(sessionKey ?? "").toLowerCase().split(":").slice(2);
  return !rest.includes("group") && !rest.includes("channel");
}

/** A 4xx other than 401: the arguments were refused; the model should fix them. */
function isRefusal(error) {
  return error.status >= 400 && error.status < 500 && error.status !== 401;
}

/** memory-core's shape for a search that could not run. */
function unavailable(error) {
  const warning = "Memory search is unavailable: memdir did not answer.";
  const action = error.message;
  return { results: [], disabled: true, unavailable: true, error: error.message, warning, action, debug: { warning, action, error: error.message } };
}

function readString(params, name, tool, required = false) {
  const value = params?.[name];
  if (value === undefined || value === null || value === "") {
    if (required) throw new Error(`${tool}: ${name} is required (a non-empty string)`);
    return undefined;
  }
  if (typeof value !== "string") throw new Error(`${tool}: ${name} must be a string, got ${typeof value}`);
  return value;
}

function readInteger(params, name, tool) {
  const value = params?.[name];
  if (value === undefined || value === null) return undefined;
  if (!Number.isInteger(value) || value < 1) throw new Error(`${tool}: ${name} must be a positive integer, got ${JSON.stringify(value)}`);
  return value;
}

function readNumber(params, name, tool) {
  const value = params?.[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) throw new Error(`${tool}: ${name} must be a number >= 0, got ${JSON.stringify(value)}`);
  return value;
}
