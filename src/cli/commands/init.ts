import { existsSync, writeFileSync } from "node:fs";
import { CONFIG_TEMPLATE } from "../../core/config/template.ts";
import { UsageError, type Command } from "../command.ts";

export const initCommand: Command = {
  path: ["init"],
  summary: "Write a commented agentd.jsonc with every section and the defaults of its common settings.",
  usage: "agentd init [--config FILE] [--force]",
  options: { config: { type: "string", short: "c" }, force: { type: "boolean" } },
  help: ["  -c, --config FILE     where to write it (default ./agentd.jsonc)", "      --force           overwrite an existing file"],
  async run({ values }) {
    const path = (values.config as string | undefined) ?? "agentd.jsonc";
    if (existsSync(path) && !values.force) throw new UsageError(`Cannot write ${path}: it already exists (use --force to overwrite)`);
    writeFileSync(path, CONFIG_TEMPLATE, { mode: 0o644 });
    process.stdout.write(`wrote ${path}\n`);
    return 0;
  },
};
