// memdir as OpenClaw's memory: the entry OpenClaw's plugin loader imports. It fills the
// exclusive memory slot (plugins.slots.memory = "memdir") and talks to a running
// `memdir serve` over its REST API.

import { definePluginEntry } from "openclaw/plugin-sdk/plugin-entry";
import { MemdirClient } from "./src/client.js";
import { registerCapture, registerRecall } from "./src/hooks.js";
import { memoryCapability } from "./src/runtime.js";
import { readSettings, resolveAgent } from "./src/settings.js";
import { registerStatusCli } from "./src/status-cli.js";
import { TOOL_NAMES, createTools } from "./src/tools.js";

export default definePluginEntry({
  id: "memdir",
  name: "Memory (memdir)",
  description: "memdir as OpenClaw's memory: Markdown as the truth, facts over time, calibrated recall, citations that resolve",
  kind: "memory",
  register(api) {
    const settings = readSettings(api.pluginConfig);
    const client = new MemdirClient(settings);
    const deps = {
      settings,
      client,
      targetFor: (agentId) => resolveAgent(settings, agentId),
      citationsMode: () => {
        const mode = (api.runtime?.config?.current?.() ?? api.config)?.memory?.citations;
        return mode === "on" || mode === "off" ? mode : "auto";
      },
    };
    registerStatusCli(api, deps);
    if (api.registrationMode === "cli-metadata") return;
    api.registerMemoryCapability(memoryCapability(deps));
    api.registerTool((ctx) => createTools(ctx, deps), { names: TOOL_NAMES });
    registerRecall(api, deps);
    registerCapture(api, deps);
  },
});
