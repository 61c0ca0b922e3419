import type { ApprovalView, SessionTranscript, ToolCallRecord } from "../agent/index.ts";
import { redactText } from "../core/redaction/index.ts";
import { terminalText } from "../core/text/index.ts";

/** How much of a tool's output the transcript shows: its end, where errors and exit codes are. */
const TAIL_LINES = 20;
const TAIL_CHARS = 2000;

export interface TranscriptCall {
  call: ToolCallRecord;
  /** The end of the output the tool returned to the model, secrets redacted. */
  output_tail: string | null;
  exit_code: number | null;
  /** What the call came to in one word: "failed" for a command that ran and exited non-zero, else its outcome or status. */
  result: string;
  /** Ran and failed (non-zero exit, error, timeout); a denied or cancelled call did not run, so it did not fail. */
  failed: boolean;
  approvals: ApprovalView[];
}

export type TranscriptEntry =
  | { type: "message"; role: string; text: string; ts: number }
  | { type: "tool_call"; ts: number; detail: TranscriptCall };

function text(value: unknown): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value))
    return value.map((part) => (typeof part === "object" && part && "text" in part ? String(part.text) : "")).join("");
  return "";
}

export function tail(output: string): string {
  const lines = output.trimEnd().split("\n");
  const last = lines.slice(-TAIL_LINES).join("\n");
  return last.length > TAIL_CHARS ? `…${last.slice(-TAIL_CHARS)}` : lines.length > TAIL_LINES ? `…\n${last}` : last;
}

/** A tool's result as the model read it: JSON with `output` and `exit_code` from the exec tools, plain text otherwise. */
function resultOf(content: string): { output: string; exit_code: number | null } {
  try {
    const parsed = JSON.parse(content) as { output?: unknown; exit_code?: unknown };
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed))
      return {
        output: typeof parsed.output === "string" ? parsed.output : content,
        exit_code: typeof parsed.exit_code === "number" ? parsed.exit_code : null,
      };
  } catch {
    // Not JSON: the tool answered plain text.
  }
  return { output: content, exit_code: null };
}

/** The call's word and whether it failed: the exit code decides when there is one, since the tool's "ok" only says it ran. */
function callResult(call: ToolCallRecord, exitCode: number | null): { result: string; failed: boolean } {
  if (exitCode !== null && exitCode !== 0) return { result: "failed", failed: true };
  const result = call.outcome ?? call.status;
  return { result, failed: call.outcome === "error" || call.outcome === "timeout" };
}

/**
 * The session in reading order: each user and assistant message, each tool call under the
 * message that asked for it with its output tail, exit code, duration and approvals. Pure.
 */
export function transcriptEntries(transcript: SessionTranscript): TranscriptEntry[] {
  const results = new Map<string, string>();
  for (const message of transcript.messages)
    if (message.role === "tool" && typeof message.body.tool_call_id === "string")
      results.set(message.body.tool_call_id, text(message.body.content));
  const detail = (call: ToolCallRecord): TranscriptCall => {
    const result = results.get(call.call_id);
    const parsed = result === undefined ? undefined : resultOf(result);
    const exitCode = parsed?.exit_code ?? null;
    return {
      call,
      // Escape sequences go before the tail is cut and before redaction, so a colour code can neither split a secret nor fill the tail.
      output_tail: parsed ? redactText(tail(terminalText(parsed.output))) : null,
      exit_code: exitCode,
      ...callResult(call, exitCode),
      approvals: transcript.approvals.filter((approval) => approval.tool_call_id === call.id),
    };
  };
  const shown = new Set<string>();
  const entries: TranscriptEntry[] = [];
  for (const message of transcript.messages) {
    if (message.role !== "user" && message.role !== "assistant") continue;
    const body = text(message.body.content);
    if (body) entries.push({ type: "message", role: message.role, text: redactText(terminalText(body)), ts: message.ts });
    const asked = Array.isArray(message.body.tool_calls) ? (message.body.tool_calls as Array<{ id?: unknown }>) : [];
    for (const ask of asked) {
      const call = transcript.tool_calls.find((c) => c.call_id === ask.id && c.turn_id === message.turn_id && !shown.has(c.id));
      if (!call) continue;
      shown.add(call.id);
      entries.push({ type: "tool_call", ts: call.created_at, detail: detail(call) });
    }
  }
  // Calls no assistant message names (an MCP client's direct calls, a step still streaming) go by time.
  for (const call of transcript.tool_calls)
    if (!shown.has(call.id)) entries.push({ type: "tool_call", ts: call.created_at, detail: detail(call) });
  return entries;
}
