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

/** /health: agentd's own status and checks, and the host's verdict beside them (daemons before it carry none). */
type HealthAnswer = HealthDocument & { verdict?: { status: string; reason: string; reasons: string[] } };

/**
 * One line, led by the verdict `agentd status` exits on; agentd's own health follows when the
 * verdict has reasons. `self` (or a daemon without a verdict) gives agentd's own health alone.
 */
function summarize(doc: HealthAnswer, self: boolean): string {
  const checks = Object.values(doc.checks).flat();
  const failing = checks.filter((check) => check.status === "fail").length;
  const warn = checks.filter((check) => check.status === "warn").length;
  const own = `${checks.length} checks, ${failing} failing${warn > 0 && doc.verdict && !self ? `, ${warn} warn` : ""}, up ${formatUptime(doc.uptime_s)}`;
  if (self || !doc.verdict) return `agentd ${doc.status} ${own}`;
  if (doc.verdict.reasons.length === 0) return `agentd ${doc.verdict.status} ${own}`;
  return `agentd ${doc.verdict.status}: ${doc.verdict.reasons.join("; ")} (agentd itself ${doc.status}: ${own})`;
}

/** The exit code: the verdict's, as `agentd status` gives it; agentd's own with --self (what a container's health check wants). */
function exitOf(doc: HealthAnswer, self: boolean): number {
  const status = self || !doc.verdict ? doc.status : doc.verdict.status;
  return status === "fail" ? HEALTH_EXIT.fail : HEALTH_EXIT.pass;
}

export const healthCommand: Command = {
  path: ["health"],
  summary:
    "Ask a running agentd for the host's verdict (as agentd status gives it). Exit 0 pass/warn, 1 fail, 4 token missing or rejected, 5 unreachable.",
  usage: "agentd health [--url URL] [--json] [--wait 30s] [--self]",
  options: {
    url: { type: "string" },
    json: { type: "boolean" },
    wait: { type: "string" },
    self: { type: "boolean" },
    token: { type: "string" },
    config: { type: "string", short: "c" },
    "data-dir": { type: "string" },
  },
  help: [
    "      --url URL         agentd to ask (default: AGENTD_URL, the local daemon's ready file, http://127.0.0.1:7070)",
    "      --json            print the health document instead of one line",
    "      --wait DURATION   keep asking until it passes or DURATION ends (e.g. 30s)",
    "      --self            agentd's own health only (store, memory, privilege gate), not the checks it watches:",
    "                        for a container's or a service manager's health check",
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
          const doc = JSON.parse(body) as HealthAnswer;
          const self = values.self === true;
          outcome = { code: exitOf(doc, self), line: summarize(doc, self), body };
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
