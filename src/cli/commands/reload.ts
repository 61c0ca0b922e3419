import type { Command } from "../command.ts";
import { describeReload, type ReloadAnswer } from "../reloadSummary.ts";
import { DAEMON_LOCATION_HELP, DAEMON_OPTIONS, daemonError, daemonFetch, daemonTargetFrom } from "../daemonClient.ts";

export const reloadCommand: Command = {
  path: ["reload"],
  summary:
    "Make the running agentd re-read its config (as SIGHUP does) and print what changed, what it applied and what needs a restart. Exit 0 reloaded, 1 invalid config, 5 unreachable.",
  usage: "agentd reload [--url URL]",
  options: { ...DAEMON_OPTIONS },
  help: [
    "      --url URL         agentd to reload (default: AGENTD_URL, the local daemon's ready file); loopback only",
    ...DAEMON_LOCATION_HELP,
  ],
  async run({ values }) {
    const target = daemonTargetFrom(values);
    const response = await daemonFetch(target, "/api/admin/reload", { method: "POST", timeoutMs: 20_000 });
    const text = await response.text();
    if (!response.ok && response.status !== 503 && response.status !== 504) throw daemonError(response.status, text);
    const answer = JSON.parse(text) as ReloadAnswer;
    if (answer.result === "reloaded") {
      process.stdout.write(describeReload(target.url, answer));
      return 0;
    }
    process.stderr.write(`agentd: config reload failed: ${answer.problem ?? "unknown reason"}\n`);
    return 1;
  },
};
