import { SHOWN_DIGEST_CHARS } from "../../agent/approvalDigest.ts";
import { oneLine } from "../../core/text/index.ts";
import { UsageError, type Command } from "../command.ts";
import { DAEMON_LOCATION_HELP, daemonFetch, daemonJson, daemonTargetFrom } from "../daemonClient.ts";

const DECISIONS: Record<string, string> = {
  once: "allow_once",
  session: "allow_session",
  deny: "deny",
  allow_once: "allow_once",
  allow_session: "allow_session",
};

export interface ApprovalView {
  id: string;
  /** agent, mcp or watchdog (a run_command of the watchdog, id wd_<n>, decided once: allow or deny). */
  kind?: string;
  requested_by?: string;
  session_id: string | null;
  incident_id?: number;
  summary: string;
  scope: string;
  status: string;
  decided_by: string | null;
  tool: string;
  command?: string;
  command_spans?: Array<{ text: string; redacted: boolean }>;
  workdir?: string;
  target?: string;
  task?: string;
  reasons?: string[];
  /** A bare escalation's words as they will be exec'd. */
  argv?: string[];
  /** What a decision is bound to; set while pending. */
  digest?: string;
}

/**
 * An approval as the approver must see it: the raw command, where it runs, for which task, and what
 * logs hide. Every field is one line (oneLine): a command holding newlines cannot draw lines of its
 * own, such as a harmless-looking trailer or a second, fake approval.
 */
export function describeApproval(a: ApprovalView): string {
  const from = a.session_id !== null ? `session ${a.session_id}` : `incident ${a.incident_id ?? "?"}`;
  const lines = [`${a.id}  ${a.scope.padEnd(15)}  ${a.tool}  (${oneLine(a.requested_by ?? "asked")}, ${from})`];
  if (a.command === undefined) lines.push(`  ${oneLine(a.summary)}`);
  else {
    lines.push(`  command: ${oneLine(a.command)}`);
    const hidden = (a.command_spans ?? []).filter((span) => span.redacted).map((span) => oneLine(span.text));
    if (hidden.length > 0) lines.push(`  redacted in logs: ${hidden.join(", ")}`);
    lines.push(`  on ${oneLine(a.target ?? "local")}${a.workdir !== undefined ? ` in ${oneLine(a.workdir)}` : ""}`);
    if (a.reasons?.length) lines.push(`  asked because: ${a.reasons.map(oneLine).join("; ")}`);
    // Quoted one by one: a space inside a word, or an empty word, shows.
    if (a.argv) lines.push(`  runs as these words, without a shell: ${a.argv.map((word) => oneLine(JSON.stringify(word))).join(" ")}`);
  }
  if (a.digest) lines.push(`  digest: ${a.digest.slice(0, SHOWN_DIGEST_CHARS)}`);
  if (a.task) lines.push(`  ${a.kind === "watchdog" ? "incident" : "task"}: ${oneLine(a.task)}`);
  if (a.kind === "watchdog") lines.push(`  decide: agentd approve ${a.id} once|deny`);
  return `${lines.join("\n")}\n`;
}

export const approveCommand: Command = {
  path: ["approve"],
  summary: "Decide a pending tool call or watchdog command: once, session or deny. Without arguments, list what is pending (both kinds).",
  usage: "agentd approve [<approval-id> once|session|deny] [--url URL]",
  allowPositionals: true,
  options: {
    url: { type: "string" },
    token: { type: "string" },
    json: { type: "boolean" },
    config: { type: "string", short: "c" },
    "data-dir": { type: "string" },
  },
  help: [
    "      --url URL         agentd to talk to (default: AGENTD_URL, the local daemon's ready file, http://127.0.0.1:7070)",
    "      --json            print the answer as JSON",
    ...DAEMON_LOCATION_HELP,
  ],
  async run({ values, positionals }) {
    const target = daemonTargetFrom(values);
    if (positionals.length === 0) {
      const response = await daemonFetch(target, "/api/approvals");
      const body = (await response.json()) as { approvals: ApprovalView[] };
      if (values.json) process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
      else if (body.approvals.length === 0) process.stdout.write("No approvals are pending.\n");
      else for (const a of body.approvals) process.stdout.write(describeApproval(a));
      return 0;
    }
    const [id, word] = positionals;
    const decision = word ? DECISIONS[word] : undefined;
    if (positionals.length !== 2 || !decision)
      throw new UsageError("expected an approval id and one of once, session, deny (e.g. agentd approve apr_1234 once)");
    const path = `/api/approvals/${encodeURIComponent(id!)}`;
    // The decision names the digest of the approval as read now: if it changes before the decision
    // lands, agentd refuses it (approval_changed) and nothing runs.
    const { digest } = await daemonJson<ApprovalView>(target, path);
    const body = await daemonJson<{ approval?: ApprovalView; resumed?: boolean; released?: string[]; request?: unknown }>(target, path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decision, decided_by: "cli", ...(digest ? { digest } : {}) }),
    });
    if (values.json) process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    else if (body.approval?.kind === "watchdog") process.stdout.write(`${body.approval.status}: ${body.approval.summary}\n`);
    else {
      const more = [
        body.released?.length ? `released ${body.released.length} more` : "",
        body.resumed ? "the turn continues" : "other calls still wait",
      ]
        .filter(Boolean)
        .join("; ");
      process.stdout.write(`${body.approval!.status}: ${body.approval!.summary} (${more})\n`);
    }
    return 0;
  },
};
