/** One event of a session stream as the CLI receives it. */
export interface StreamedEvent {
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

export interface TranscriptOutput {
  /** The model's text, written as it streams. */
  text?: string;
  /** A status line for stderr (tool calls, progress, endings). */
  note?: string;
}

function shortJson(value: unknown, max = 160): string {
  const text = JSON.stringify(value ?? {});
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** How `agentd run` shows each event: text to stdout, everything else as short notes. Pure. */
export function transcriptLine(event: StreamedEvent): TranscriptOutput {
  const d = event.data;
  switch (event.type) {
    case "text.delta":
      return { text: String(d.delta ?? "") };
    case "tool.start":
      return { note: `→ ${d.tool} ${shortJson(d.arguments)}` };
    case "tool.progress":
      return { note: `  … ${d.tool} ${d.message ?? "running"} (${Math.round(Number(d.elapsed_ms ?? 0) / 1000)} s)` };
    case "tool.end":
      return {
        note: `← ${d.tool} ${d.outcome} in ${Math.round(Number(d.duration_ms ?? 0))} ms${d.error ? `: ${(d.error as { message?: unknown; code?: unknown }).message ?? (d.error as { message?: unknown; code?: unknown }).code}` : ""}`,
      };
    case "approval.decided":
      return { note: `✓ ${d.summary}: ${d.decision} (by ${d.decided_by})` };
    case "error":
      return { note: `error: ${d.message ?? d.code}` };
    case "turn.end":
      return {
        note: d.reason === "stop" ? undefined : `turn ended: ${d.reason}${d.cause ? ` (${d.cause})` : ""}${d.error ? `: ${d.error}` : ""}`,
      };
    default:
      return {};
  }
}

export function approvalQuestion(approval: { tool: string; summary: string }): string {
  return `Allow ${approval.summary}? [o]nce / [s]ession / [d]eny `;
}

/** Reads the answer to the approval question: o/once, s/session, d/deny; undefined for anything else. */
export function parseApprovalAnswer(answer: string): "allow_once" | "allow_session" | "deny" | undefined {
  const word = answer.trim().toLowerCase();
  if (word === "o" || word === "once") return "allow_once";
  if (word === "s" || word === "session") return "allow_session";
  if (word === "d" || word === "deny" || word === "n" || word === "no") return "deny";
  return undefined;
}
