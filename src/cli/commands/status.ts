import { EXIT_UNREACHABLE, type Command } from "../command.ts";
import { DAEMON_LOCATION_HELP, daemonFetch, daemonTargetFrom, UnreachableError } from "../daemonClient.ts";
import { verdictExitCode } from "../../status/hostVerdict.ts";

export const statusCommand: Command = {
  path: ["status"],
  summary: "Print a running agentd's status page as text (or JSON). Exit 0 pass/warn, 1 fail, 5 unreachable.",
  usage: "agentd status [--url URL] [--json]",
  options: {
    url: { type: "string" },
    json: { type: "boolean" },
    token: { type: "string" },
    config: { type: "string", short: "c" },
    "data-dir": { type: "string" },
  },
  help: [
    "      --url URL         agentd to ask (default: AGENTD_URL, the local daemon's ready file, http://127.0.0.1:7070)",
    "      --json            print the JSON document",
    ...DAEMON_LOCATION_HELP,
  ],
  async run({ values }) {
    const target = daemonTargetFrom(values);
    try {
      const accept = values.json ? "application/json" : "text/plain";
      const response = await daemonFetch(target, "/status", { headers: { accept } });
      const body = await response.text();
      if (!response.ok) {
        process.stderr.write(`agentd at ${target.url} answered ${response.status}: ${body}\n`);
        return 1;
      }
      process.stdout.write(body.endsWith("\n") ? body : `${body}\n`);
      return verdictExitCode(body, values.json === true);
    } catch (error) {
      if (!(error instanceof UnreachableError)) throw error;
      process.stderr.write(`${error.message}\n`);
      return EXIT_UNREACHABLE;
    }
  },
};
