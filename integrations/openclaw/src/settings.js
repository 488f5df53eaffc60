// The plugin's settings (plugins.entries.memdir.config in openclaw.json), read once at
// registration. Each OpenClaw agent maps to one memdir agent and one bearer token.

import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export const DEFAULT_URL = "http://127.0.0.1:8765";
const AGENT_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** The memdir "agent" that names memdir's global workspace (requests carry no ?agent=). */
export const GLOBAL = "global";
const CAPTURE_MODES = ["extract", "note", "off"];

/** Where a token lives when no setting names it: the server's own token file. */
export function defaultTokenFile(env = process.env) {
  const home = env.MEMDIR_HOME?.trim() || join(homedir(), ".memdir");
  return join(expandHome(home), "api-token");
}

export function expandHome(path) {
  return path === "~" || path.startsWith("~/") ? join(homedir(), path.slice(1)) : path;
}

/**
 * Checks the raw config and fills in defaults. Throws an Error naming the setting to fix.
 * @param {Record<string, unknown> | undefined} raw
 */
export function readSettings(raw = {}, env = process.env) {
  const cfg = raw ?? {};
  const url = String(cfg.url ?? DEFAULT_URL).replace(/\/+$/, "");
  if (!/^https?:\/\/[^/]+/.test(url)) {
    throw new Error(`plugins.entries.memdir.config.url ${JSON.stringify(cfg.url)} is not an http(s) URL; use e.g. ${DEFAULT_URL}`);
  }
  const recall = { enabled: true, maxResults: 3, minScore: undefined, maxChars: 2000, ...(cfg.recall ?? {}) };
  const capture = cfg.capture ?? "extract";
  if (!CAPTURE_MODES.includes(capture)) {
    throw new Error(`plugins.entries.memdir.config.capture ${JSON.stringify(capture)} is not one of ${CAPTURE_MODES.join(", ")}`);
  }
  const agents = {};
  for (const [openclawId, entry] of Object.entries(cfg.agents ?? {})) {
    const mapped = typeof entry === "string" ? { agent: entry } : { ...entry };
    if (mapped.agent !== undefined && !AGENT_ID.test(mapped.agent)) {
      throw new Error(`plugins.entries.memdir.config.agents.${openclawId}.agent ${JSON.stringify(mapped.agent)} is not a memdir agent id ([a-z0-9][a-z0-9_-]{0,63})`);
    }
    agents[openclawId] = mapped;
  }
  return {
    url,
    token: cfg.token,
    tokenFile: cfg.tokenFile,
    agents,
    recall,
    capture,
    timeoutMs: Number(cfg.timeoutMs ?? 10000),
    env,
  };
}

/**
 * The memdir agent and the token for one OpenClaw agent: its `agents` entry first, then the
 * top-level `token`/`tokenFile`, then $MEMDIR_HOME/api-token. An OpenClaw agent without an
 * entry uses the memdir agent of the same id; "global" is memdir's global workspace.
 */
export function resolveAgent(settings, openclawAgentId) {
  const id = openclawAgentId || "main";
  const entry = settings.agents[id] ?? {};
  const agent = entry.agent ?? id;
  if (!AGENT_ID.test(agent)) {
    throw new Error(`OpenClaw agent ${JSON.stringify(id)} has no memdir agent id; map it with plugins.entries.memdir.config.agents.${id} = "<memdir agent id>"`);
  }
  const token = () => readToken(entry, settings);
  return { openclawAgentId: id, agent, token };
}

function readToken(entry, settings) {
  const inline = entry.token ?? (entry.tokenFile ? undefined : settings.token);
  if (typeof inline === "string" && inline.trim()) return inline.trim();
  const file = expandHome(entry.tokenFile ?? settings.tokenFile ?? defaultTokenFile(settings.env));
  try {
    return readFileSync(file, "utf8").trim();
  } catch (error) {
    throw new Error(`cannot read the memdir token from ${file} (${error.code ?? error.message}); start the server once (memdir serve creates it) or set plugins.entries.memdir.config.tokenFile`);
  }
}
