// The sidecar's record type alone: the agent's index.ts would load the whole agent into a client command.
import type { SidecarRecord } from "../agent/sidecarRecord.ts";
import { humanDuration } from "./humanDuration.ts";

const CONTENT_MAX = 2000;

type Fields = Record<string, unknown>;

function clip(text: string, max = CONTENT_MAX): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text;
}

function indent(text: string, by = "    "): string {
  return text
    .split("\n")
    .map((line) => by + line)
    .join("\n");
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((part) => (typeof (part as Fields)?.text === "string" ? String((part as Fields).text) : JSON.stringify(part)))
      .join("");
  return content === undefined || content === null ? "" : JSON.stringify(content);
}

/** The newest message a request sent (what the model was answering), from the full body or the info-level summary. */
function lastMessage(body: unknown): Fields | undefined {
  const b = body as { messages?: Fields[]; last_messages?: Fields[] } | undefined;
  return (b?.messages ?? b?.last_messages)?.at(-1);
}

function modelRequest(r: SidecarRecord): string[] {
  const body = r.body as { model?: unknown; messages?: unknown[]; message_count?: unknown; tools?: unknown[] } | undefined;
  const count = body?.message_count ?? body?.messages?.length;
  const lines = [`model request #${r.request}${body?.model ? ` to ${body.model}` : ""}${count !== undefined ? `, ${count} messages` : ""}`];
  const last = lastMessage(body);
  if (last) lines.push(indent(`${last.role}: ${clip(contentText(last.content))}`));
  return lines;
}

function modelResponse(r: SidecarRecord): string[] {
  const message = r.message as
    | { content?: string; toolCalls?: Array<{ name: string; arguments: string }>; finishReason?: string | null; usage?: Fields }
    | undefined;
  const usage = message?.usage ?? ((r.body as Fields | undefined)?.usage as Fields | undefined);
  const tokens = usage ? `, tokens ${usage.prompt_tokens ?? "?"} in / ${usage.completion_tokens ?? "?"} out` : "";
  const lines = [
    `model response #${r.request}: HTTP ${r.status}, ${humanDuration(Number(r.duration_ms ?? 0))}${tokens}${message?.finishReason ? `, ${message.finishReason}` : ""}`,
  ];
  const choice = ((r.body as Fields | undefined)?.choices as Fields[] | undefined)?.[0]?.message as Fields | undefined;
  const content = message?.content ?? (choice ? contentText(choice.content) : "");
  if (content) lines.push(indent(`assistant: ${clip(content)}`));
  for (const call of message?.toolCalls ?? []) lines.push(indent(`calls ${call.name} ${clip(call.arguments, 400)}`));
  return lines;
}

function toolEnd(r: SidecarRecord): string[] {
  const error = r.error as { message?: unknown; code?: unknown } | undefined;
  const lines = [
    `tool ${r.tool} ${r.outcome} in ${humanDuration(Number(r.duration_ms ?? 0))}${error ? `: ${error.message ?? error.code}` : ""}`,
  ];
  if (typeof r.result === "string" && r.result) lines.push(indent(clip(r.result)));
  return lines;
}

function recordLines(r: SidecarRecord): string[] {
  switch (r.kind) {
    case "model.request":
      return modelRequest(r);
    case "model.response":
      return modelResponse(r);
    case "model.error":
      return [`model request #${r.request} failed after ${humanDuration(Number(r.duration_ms ?? 0))}: ${r.error}`];
    case "tool.start":
      return [`tool ${r.tool} ${clip(JSON.stringify(r.arguments ?? {}), 400)}${r.target ? ` on ${r.target}` : ""}`];
    case "tool.end":
      return toolEnd(r);
    case "approval.required":
      return ((r.approvals as Fields[] | undefined) ?? []).map((a) => `approval asked: ${a.summary}`);
    case "approval.decided":
      return [`approval ${r.decision} by ${r.decided_by}: ${r.summary}`];
    case "turn.end":
      return [`turn ended: ${r.reason}${r.steps !== undefined ? ` after ${r.steps} step(s)` : ""}`];
    case "error":
      return [`error: ${r.error}${r.status !== undefined ? ` (HTTP ${r.status})` : ""}`];
    default: {
      const { ts: _ts, session: _session, kind, ...rest } = r;
      return [`${kind} ${clip(JSON.stringify(rest), 400)}`];
    }
  }
}

/** A session's sidecar as a person reads it: who said what, which tools ran and how, tokens and timings; no headers. */
export function readableTranscript(records: SidecarRecord[]): string {
  if (records.length === 0) return "No records for this session.\n";
  const out = [`session ${records[0]!.session}`];
  for (const r of records) {
    const [first = "", ...rest] = recordLines(r);
    out.push(`${String(r.ts).slice(11, 23)}  ${first}`, ...rest.map((line) => `              ${line}`));
  }
  return `${out.join("\n")}\n`;
}
