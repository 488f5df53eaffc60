// The memory slot's capability: the search manager OpenClaw's own surfaces use
// (`openclaw status --all`, recall lanes of other plugins) and the prompt section that
// tells the model how to use the tools.

import { readMemoryFile, searchMemory, toProviderStatus } from "./memory.js";

/**
 * A MemorySearchManager over memdir for one agent. `status()` is synchronous in OpenClaw's
 * contract, so the index figures are fetched when the manager is made.
 */
async function openManager(deps, agentId) {
  const target = deps.targetFor(agentId);
  const [health, index] = await Promise.all([
    deps.client.health(),
    deps.client.call(target, "GET", "/api/v1/index/status"),
  ]);
  const snapshot = toProviderStatus(index, { url: deps.settings.url, agent: target.agent, version: health.version });
  return {
    async search(query, opts = {}) {
      const found = await searchMemory(deps.client, target, {
        query,
        maxResults: opts.maxResults,
        minScore: opts.minScore,
        signal: opts.signal,
      });
      return found.results;
    },
    async readFile({ relPath, from, lines }) {
      return readMemoryFile(deps.client, target, { relPath, from, lines });
    },
    status() {
      return snapshot;
    },
    async sync() {
      await deps.client.call(target, "POST", "/api/v1/index/sync");
    },
    async probeEmbeddingAvailability() {
      return { ok: snapshot.vector.enabled, checked: true, ...(snapshot.vector.enabled ? {} : { error: "memdir runs keyword-only (embeddings.provider = none)" }) };
    },
    async probeVectorAvailability() {
      return snapshot.vector.available;
    },
    async close() {},
  };
}

export function memoryCapability(deps) {
  return {
    promptBuilder: ({ availableTools, citationsMode }) => promptSection(availableTools, citationsMode),
    runtime: {
      async getMemorySearchManager({ agentId }) {
        try {
          return { manager: await openManager(deps, agentId) };
        } catch (error) {
          return { manager: null, error: `memdir unavailable: ${error.message}` };
        }
      },
      resolveMemoryBackendConfig() {
        return { backend: "memdir", url: deps.settings.url };
      },
      async closeAllMemorySearchManagers() {},
    },
  };
}

/** The system prompt's memory section, naming only the tools this turn has. */
export function promptSection(availableTools, citationsMode) {
  const has = (name) => availableTools?.has?.(name);
  if (!has("memory_search") && !has("memory_get")) return [];
  const lines = ["## Memory Recall"];
  if (has("memory_search")) {
    lines.push(
      "Before answering anything about prior work, decisions, dates, people, preferences, or todos: run memory_search" +
        (has("memory_get") ? "; for a hit, use memory_get with its path and lines to read exactly what it cites." : ".") +
        " If it finds nothing, say you checked memory and found nothing.",
    );
  }
  if (has("memory_save")) lines.push("Save a durable fact with memory_save; retire a wrong one with memory_forget and a reason.");
  lines.push(
    citationsMode === "off"
      ? "Citations are disabled: do not mention file paths or line numbers in replies unless the user explicitly asks."
      : "Citations: include Source: <path#line> when it helps the user verify memory snippets.",
    "",
  );
  return lines;
}
