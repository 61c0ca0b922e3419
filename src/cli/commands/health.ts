import type { HealthDocument } from "../../core/health/index.ts";
import { formatUptime } from "../../status/statusText.ts";
import { parseDuration, type Command } from "../command.ts";
import {
  DAEMON_LOCATION_HELP,
  daemonFetch,
  daemonTargetFrom,
  EXIT_TOKEN,
  EXIT_UNREACHABLE,
  TokenRejectedError,
  UnreachableError,
} from "../daemonClient.ts";

const HEALTH_EXIT = { pass: 0, warn: 0, fail: 1, unreachable: EXIT_UNREACHABLE, token: EXIT_TOKEN } as const;

function summarize(doc: HealthDocument): string {
  const checks = Object.values(doc.checks).flat();
  const failing = checks.filter((check) => check.status === "fail").length;
  return `agentd ${doc.status} ${checks.length} checks, ${failing} failing, up ${formatUptime(doc.uptime_s)}`;
}

export const healthCommand: Command = {
  path: ["health"],
  summary: "Ask a running agentd for its health. Exit 0 pass/warn, 1 fail, 2 unreachable, 4 token missing or rejected.",
  usage: "agentd health [--url URL] [--json] [--wait 30s]",
  options: {
    url: { type: "string" },
    json: { type: "boolean" },
    wait: { type: "string" },
    token: { type: "string" },
    config: { type: "string", short: "c" },
    "data-dir": { type: "string" },
  },
  help: [
    "      --url URL         agentd to ask (default: AGENTD_URL, the local daemon's ready file, http://127.0.0.1:7070)",
    "      --json            print the health document instead of one line",
    "      --wait DURATION   keep asking until it passes or DURATION ends (e.g. 30s)",
    ...DAEMON_LOCATION_HELP,
  ],
  async run({ values }) {
    const target = daemonTargetFrom(values);
    const deadline = Date.now() + (values.wait ? parseDuration(values.wait as string) : 0);
    for (;;) {
      let outcome: { code: number; line: string; body?: string };
      try {
        const response = await daemonFetch(target, "/health", { timeoutMs: 5000 });
        const body = await response.text();
        if (response.status === 403) {
          outcome = { code: HEALTH_EXIT.token, line: `agentd at ${target.url} refused the request (${response.status}): ${body.trim()}` };
        } else {
          const doc = JSON.parse(body) as HealthDocument;
          outcome = { code: doc.status === "fail" ? HEALTH_EXIT.fail : HEALTH_EXIT.pass, line: summarize(doc), body };
        }
      } catch (error) {
        if (error instanceof TokenRejectedError) {
          process.stderr.write(`${error.message}\n`);
          return HEALTH_EXIT.token;
        }
        const message =
          error instanceof UnreachableError
            ? error.message
            : `Cannot read the health answer from ${target.url}: ${(error as Error).message}`;
        outcome = { code: HEALTH_EXIT.unreachable, line: message };
      }
      if (outcome.code === 0 || Date.now() >= deadline) {
        const stream = outcome.code === 0 ? process.stdout : process.stderr;
        if (values.json && outcome.body) process.stdout.write(`${outcome.body}\n`);
        else stream.write(`${outcome.line}\n`);
        return outcome.code;
      }
      await Bun.sleep(Math.min(500, Math.max(0, deadline - Date.now())));
    }
  },
};
