// `openclaw memdir status [--agent <id>] [--json]`: is the server up, which memdir agent and
// token an OpenClaw agent uses, and what the index holds.

import { toProviderStatus } from "./memory.js";

export const CLI_DESCRIPTOR = { name: "memdir", description: "memdir memory: server and index status", hasSubcommands: true };

export function registerStatusCli(api, deps) {
  api.registerCli(
    ({ program }) => {
      const memdir = program.command("memdir").description(CLI_DESCRIPTOR.description);
      memdir
        .command("status")
        .description("Check the memdir server and show the index of an agent's memory")
        .option("--agent <id>", "OpenClaw agent id", "main")
        .option("--json", "print JSON")
        .action(async (options) => {
          const report = await statusReport(deps, options.agent);
          // stdout itself: OpenClaw's CLI sends console output to its log on stderr
          process.stdout.write(`${options.json ? JSON.stringify(report, null, 2) : formatReport(report)}\n`);
          if (!report.ok) process.exitCode = 1;
        });
    },
    { descriptors: [CLI_DESCRIPTOR] },
  );
}

export async function statusReport(deps, openclawAgentId) {
  const report = { ok: false, url: deps.settings.url, openclawAgent: openclawAgentId };
  try {
    const target = deps.targetFor(openclawAgentId);
    report.agent = target.agent;
    report.version = (await deps.client.health()).version;
    const index = await deps.client.call(target, "GET", "/api/v1/index/status");
    report.status = toProviderStatus(index, { url: deps.settings.url, agent: target.agent, version: report.version });
    report.ok = true;
  } catch (error) {
    report.error = error.message;
  }
  return report;
}

function formatReport(report) {
  if (!report.ok) return `memdir at ${report.url}: ${report.error}`;
  const s = report.status;
  return [
    `memdir ${report.version} at ${report.url}`,
    `OpenClaw agent ${report.openclawAgent} -> memdir agent ${report.agent}`,
    `index: ${s.files} files, ${s.chunks} chunks, ${s.custom.memdir.vectors} vectors`,
    `embedder: ${s.provider}${s.model ? ` (${s.model})` : ""}`,
  ].join("\n");
}
