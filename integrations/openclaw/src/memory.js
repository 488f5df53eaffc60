// memdir's answers in OpenClaw's shapes: search hits as MemorySearchResult, file reads as
// MemoryReadResult, the index as MemoryProviderStatus (openclaw/plugin-sdk memory-host types).

import { MemdirError } from "./client.js";

/** OpenClaw's defaults for memory_get without `lines` (memory-host-sdk read-file). */
export const DEFAULT_READ_LINES = 120;
export const DEFAULT_READ_MAX_CHARS = 12000;

/** OpenClaw's citation form: `path#L3` or `path#L3-L5`. */
export function formatCitation(path, startLine, endLine) {
  return startLine === endLine ? `${path}#L${startLine}` : `${path}#L${startLine}-L${endLine}`;
}

/** OpenClaw's own annotations on a memory line (`<!-- importance: 9 -->`, trigger, project):
 * memory-core strips them from snippets, and so does this plugin (memdir strips its own). */
const ANNOTATION = /\s*<!--\s*(?:trigger|importance|project)\s*:[^>]*-->/gi;

/** One memdir hit as OpenClaw's MemorySearchResult; `path` is what memory_get takes back. */
export function toSearchResult(hit) {
  const path = hit.cited_path || hit.path;
  return {
    path,
    startLine: hit.start_line,
    endLine: hit.end_line,
    score: hit.score,
    snippet: hit.text.replace(ANNOTATION, ""),
    source: "memory",
    citation: formatCitation(path, hit.start_line, hit.end_line),
  };
}

/**
 * Hybrid search. `results` is empty when nothing reached the confidence floor (memdir's
 * search.min_score unless `minScore` is given); `notice` then says why.
 */
export async function searchMemory(client, target, { query, maxResults, minScore, signal }) {
  const found = await client.call(target, "GET", "/api/v1/search", {
    query: { query, max_results: maxResults, min_score: minScore },
    signal,
  });
  return {
    results: found.hits.map(toSearchResult),
    confidence: found.confidence,
    notice: found.notice || undefined,
  };
}

/** A line range of a memory file, bounded as OpenClaw bounds memory_get. */
export async function readMemoryFile(client, target, { relPath, from, lines, signal }) {
  const start = from ?? 1;
  const count = lines ?? DEFAULT_READ_LINES;
  let part;
  try {
    part = await client.call(target, "GET", `/api/v1/files/${encodePath(relPath)}`, {
      query: { from: start, lines: count },
      signal,
    });
  } catch (error) {
    if (error instanceof MemdirError && error.status === 404) return { status: "not_found", text: "", path: relPath };
    throw error;
  }
  const selected = part.content === "" ? [] : part.content.replace(/\n$/, "").split("\n");
  const fitted = fitLines(selected, DEFAULT_READ_MAX_CHARS);
  const lastLine = part.start_line + fitted.length - 1;
  const result = { status: "ok", text: fitted.join("\n"), path: part.path, from: part.start_line, lines: fitted.length };
  if (lastLine < part.total_lines) {
    result.truncated = true;
    result.nextFrom = lastLine + 1;
    result.text += `\n\n[More content available. Use from=${lastLine + 1} to continue.]`;
  }
  return result;
}

function fitLines(lines, maxChars) {
  const kept = [];
  let chars = 0;
  for (const line of lines) {
    chars += line.length + (kept.length ? 1 : 0);
    if (kept.length && chars > maxChars) break;
    kept.push(line);
  }
  return kept;
}

export function encodePath(path) {
  return String(path).split("/").map(encodeURIComponent).join("/");
}

/** `GET /index/status` as OpenClaw's MemoryProviderStatus (plus memdir's own figures). */
export function toProviderStatus(index, { url, agent, version }) {
  const identity = index.identity ?? {};
  return {
    backend: "memdir",
    provider: identity.provider ?? "none",
    model: identity.model,
    files: index.files,
    chunks: index.chunks,
    dirty: false,
    dbPath: index.db_path,
    sources: ["memory"],
    fts: { enabled: true, available: true },
    vector: {
      enabled: Boolean(identity.provider && identity.provider !== "none"),
      available: index.vectors > 0,
      dims: identity.dimensions,
    },
    custom: { memdir: { url, agent, version, vectors: index.vectors, vectorBackend: index.vector_backend } },
  };
}
