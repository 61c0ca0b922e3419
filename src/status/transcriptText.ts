import type { SessionTranscript } from "../agent/index.ts";
import { redactText } from "../core/redaction/index.ts";
import { revealInvisibleChars } from "../core/text/index.ts";
import { formatAge, formatMs } from "./statusFormat.ts";
import { terminalText } from "../core/text/index.ts";
import { transcriptEntries } from "./transcriptView.ts";

function indent(text: string): string[] {
  return revealInvisibleChars(text)
    .split("\n")
    .map((line) => `    ${line}`);
}

/** The curl view of a session: each message, each tool call with its exit code, duration, approvals and output tail. */
export function renderTranscriptText(transcript: SessionTranscript, now: number): string {
  const { session } = transcript;
  const lines = [
    `session ${session.id}  ${session.state}  on ${session.target}  ${session.kind === "mcp" ? `MCP ${session.client ?? ""}` : session.model}`,
  ];
  if (session.title) lines.push(`task: ${revealInvisibleChars(session.title)}`);
  for (const entry of transcriptEntries(transcript)) {
    lines.push("");
    if (entry.type === "message") {
      lines.push(`${entry.role.toUpperCase()}  ${formatAge(entry.ts, now)}`, ...indent(entry.text));
      continue;
    }
    const { call, exit_code, output_tail, approvals, result, failed } = entry.detail;
    const mark = failed ? "✗" : result === "ok" ? "✓" : call.outcome ? "–" : "…";
    const exit = exit_code !== null ? ` exit ${exit_code}` : "";
    lines.push(
      `${mark} ${call.tool}  ${result}${exit}  ${formatMs(call.duration_ms)}  ${revealInvisibleChars(JSON.stringify(call.arguments))}`,
    );
    for (const approval of approvals)
      lines.push(`  approval ${approval.id}: ${approval.status}${approval.decided_by ? ` by ${approval.decided_by}` : ""}`);
    if (call.error_message) lines.push(`  error: ${redactText(terminalText(call.error_message))}`);
    if (output_tail) lines.push(...indent(output_tail));
  }
  return `${lines.join("\n")}\n`;
}
