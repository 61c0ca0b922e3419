import { VERSION } from "../../core/version.ts";
import type { Command } from "../command.ts";

export const versionCommand: Command = {
  path: ["version"],
  summary: "Print agentd's version.",
  usage: "agentd version [--json]",
  options: { json: { type: "boolean" } },
  help: ["      --json            print {version, bun, platform, arch}"],
  async run({ values }) {
    const info = { version: VERSION, bun: Bun.version, platform: process.platform, arch: process.arch };
    process.stdout.write(
      values.json ? `${JSON.stringify(info)}\n` : `agentd ${VERSION} (bun ${Bun.version}, ${process.platform}-${process.arch})\n`,
    );
    return 0;
  },
};
