import { loadConfig } from "../../core/config/index.ts";
import type { Command } from "../command.ts";

export const configCheckCommand: Command = {
  path: ["config", "check"],
  summary: "Validate the config file. Exit 0 when valid, 2 with file:line:col: what is wrong.",
  usage: "agentd config check [--config FILE]",
  options: { config: { type: "string", short: "c" } },
  help: ["  -c, --config FILE     file to check (default: AGENTD_CONFIG, ./agentd.jsonc, ~/.config/agentd/agentd.jsonc)"],
  async run({ values }) {
    const loaded = loadConfig({ explicitPath: values.config as string | undefined });
    const where = loaded.path ?? "(no config file; defaults)";
    process.stdout.write(`${where}: ok, ${loaded.config.providers.length} provider(s)\n`);
    for (const note of loaded.notes) process.stdout.write(`note: ${note}\n`);
    return 0;
  },
};
