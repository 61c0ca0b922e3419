import type { Command } from "../command.ts";
import { DAEMON_LOCATION_HELP, DAEMON_OPTIONS, daemonFetch, daemonTargetFrom } from "../daemonClient.ts";

interface HopRow {
  name: string;
  chain: string[];
  state: string;
  mode: string | null;
  remote_version: string | null;
  last_error: string | null;
}

export const hopsCommand: Command = {
  path: ["hops"],
  summary: "List hops (name, chain, state, remote version).",
  usage: "agentd hops [--json] [--url URL]",
  options: { json: { type: "boolean" }, ...DAEMON_OPTIONS },
  help: [
    "      --json            print the list as JSON",
    "      --url URL         agentd to ask (default: the local daemon)",
    ...DAEMON_LOCATION_HELP,
  ],
  async run({ values }) {
    const target = daemonTargetFrom(values);
    const response = await daemonFetch(target, "/api/hops");
    const body = (await response.json()) as { hops?: HopRow[]; error?: { message: string } };
    if (!response.ok || !body.hops) {
      process.stderr.write(`agentd hops: ${body.error?.message ?? `HTTP ${response.status}`}\n`);
      return 1;
    }
    if (values.json) {
      process.stdout.write(`${JSON.stringify(body.hops)}\n`);
      return 0;
    }
    if (body.hops.length === 0) {
      process.stdout.write("no hops; open one with: agentd hop user@host\n");
      return 0;
    }
    const rows = [
      ["NAME", "STATE", "MODE", "VERSION", "CHAIN"],
      ...body.hops.map((h) => [
        h.name,
        h.state,
        h.mode ?? "-",
        h.remote_version ?? "-",
        h.chain.join(" -> ") + (h.last_error && h.state !== "connected" ? `  (${h.last_error})` : ""),
      ]),
    ];
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    process.stdout.write(
      `${rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ")).join("\n")}\n`,
    );
    return 0;
  },
};
