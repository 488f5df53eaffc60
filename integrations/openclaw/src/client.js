// A small client of memdir's REST API (docs/rest.md): one bearer token and one memdir
// agent per call, problem JSON turned into errors that say what to do.

import { GLOBAL } from "./settings.js";

export class MemdirError extends Error {
  /** @param {string} message @param {{status?: number, code?: string}} [extra] */
  constructor(message, extra = {}) {
    super(message);
    this.name = "MemdirError";
    this.status = extra.status;
    this.code = extra.code ?? (extra.status ? `MEMDIR_HTTP_${extra.status}` : "MEMDIR_UNREACHABLE");
  }
}

export class MemdirClient {
  /** @param {{url: string, timeoutMs: number}} settings */
  constructor(settings) {
    this.url = settings.url;
    this.timeoutMs = settings.timeoutMs;
  }

  /**
   * @param {{agent: string, token: () => string}} target
   * @param {string} method
   * @param {string} path  e.g. "/api/v1/search"
   * @param {{query?: Record<string, unknown>, body?: unknown, signal?: AbortSignal}} [options]
   */
  async call(target, method, path, options = {}) {
    const url = new URL(this.url + path);
    if (target.agent !== GLOBAL) url.searchParams.set("agent", target.agent);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(key, String(value));
    }
    const headers = { Authorization: `Bearer ${target.token()}`, Accept: "application/json" };
    if (options.body !== undefined) headers["Content-Type"] = "application/json";
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    return this.fetchJson(url, { method, headers, body }, options.signal);
  }

  /** `/health` needs no token. */
  async health() {
    return this.fetchJson(new URL(`${this.url}/health`), { method: "GET" });
  }

  async fetchJson(url, init, callerSignal) {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = callerSignal ? AbortSignal.any([callerSignal, timeout]) : timeout;
    let response;
    try {
      response = await fetch(url, { ...init, signal });
    } catch (error) {
      if (callerSignal?.aborted) throw error;
      const why = timeout.aborted ? `no answer within ${this.timeoutMs} ms` : String(error.cause?.code ?? error.message);
      throw new MemdirError(`memdir at ${this.url} is unreachable (${why}); start it with \`memdir serve\` or fix plugins.entries.memdir.config.url`);
    }
    const text = await response.text();
    const data = text ? safeJson(text) : null;
    if (response.ok) return data;
    throw problemError(response.status, data, this.url);
  }
}

function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return { detail: text.slice(0, 500) };
  }
}

function problemError(status, problem, url) {
  const detail = problem?.detail ?? problem?.title ?? "no detail";
  if (status === 401) {
    return new MemdirError(`memdir at ${url} refused the token (401): set plugins.entries.memdir.config.tokenFile (or token) to the server's token, $MEMDIR_HOME/api-token`, { status, code: "MEMDIR_UNAUTHORIZED" });
  }
  if (status === 404) return new MemdirError(detail, { status, code: "MEMDIR_NOT_FOUND" });
  return new MemdirError(`memdir answered ${status}: ${detail}`, { status });
}
