import { toolNamesOf, type ToolNames } from "./responsesTools.ts";

/** The Responses API `response` object the proxy builds when it translates from Chat Completions. */

type Json = Record<string, unknown>;

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export type ResponseStatus = "in_progress" | "completed" | "incomplete" | "failed";

export interface ResponseShell {
  id: string;
  created_at: number;
  /** The model name the client asked for. */
  model: string;
  /** Echoed request settings. */
  request: Json;
  /** The chat function names of the request's tools, to turn calls back into what the client declared. */
  toolNames: ToolNames;
  /** The client asked for a reasoning summary: reasoning is given as summary parts (what Codex shows). */
  summary: boolean;
}

export function newId(prefix: string): string {
  return `${prefix}_${crypto.randomUUID().replaceAll("-", "")}`;
}

export function newShell(request: Json): ResponseShell {
  const summary = (request.reasoning as Json | undefined)?.summary;
  return {
    id: newId("resp"),
    created_at: Math.floor(Date.now() / 1000),
    model: String(request.model),
    request,
    toolNames: toolNamesOf(request.tools),
    summary: typeof summary === "string" && summary !== "none",
  };
}

export function usageFromChat(usage: unknown): ResponseUsage | undefined {
  if (typeof usage !== "object" || usage === null) return undefined;
  const u = usage as {
    prompt_tokens?: number;
    completion_tokens?: number;
    total_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number };
    completion_tokens_details?: { reasoning_tokens?: number };
  };
  const input = u.prompt_tokens ?? 0;
  const output = u.completion_tokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: u.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: u.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: u.total_tokens ?? input + output,
  };
}

export interface ResponseEnd {
  status: ResponseStatus;
  output: unknown[];
  usage?: ResponseUsage;
  incompleteReason?: string;
  error?: { code: string; message: string };
}

export function buildResponse(shell: ResponseShell, end: ResponseEnd): Json {
  const r = shell.request;
  return {
    id: shell.id,
    object: "response",
    created_at: shell.created_at,
    status: end.status,
    error: end.error ?? null,
    incomplete_details: end.incompleteReason ? { reason: end.incompleteReason } : null,
    instructions: r.instructions ?? null,
    max_output_tokens: r.max_output_tokens ?? null,
    model: shell.model,
    output: end.output,
    parallel_tool_calls: r.parallel_tool_calls ?? true,
    previous_response_id: r.previous_response_id ?? null,
    reasoning: r.reasoning ?? { effort: null, summary: null },
    store: r.store ?? true,
    temperature: r.temperature ?? null,
    text: r.text ?? { format: { type: "text" } },
    tool_choice: r.tool_choice ?? "auto",
    tools: r.tools ?? [],
    top_p: r.top_p ?? null,
    truncation: r.truncation ?? "disabled",
    usage: end.usage ?? null,
    user: r.user ?? null,
    metadata: r.metadata ?? {},
  };
}

/** Maps a chat finish_reason onto a Responses status and incomplete reason. */
export function statusForFinish(finish: unknown): { status: ResponseStatus; incompleteReason?: string } {
  if (finish === "length") return { status: "incomplete", incompleteReason: "max_output_tokens" };
  if (finish === "content_filter") return { status: "incomplete", incompleteReason: "content_filter" };
  return { status: "completed" };
}

export function messageItem(id: string, text: string, status: "in_progress" | "completed" = "completed", logprobs: unknown[] = []): Json {
  return {
    type: "message",
    id,
    status,
    role: "assistant",
    content: status === "completed" ? [{ type: "output_text", text, annotations: [], logprobs }] : [],
  };
}

export function functionCallItem(
  callId: string,
  name: string,
  args: string,
  status: "in_progress" | "completed" | "incomplete" = "completed",
): Json {
  return { type: "function_call", id: `fc_${callId}`, call_id: callId, name, arguments: args, status };
}

/**
 * A reasoning item carrying the model's reasoning: as `reasoning_text` content, or as one summary
 * part when the client asked for a summary (Codex shows summaries).
 */
export function reasoningItem(
  id: string,
  text: string,
  status: "in_progress" | "completed" | "incomplete" = "completed",
  summary = false,
): Json {
  const parts = status === "in_progress" ? [] : [{ type: summary ? "summary_text" : "reasoning_text", text }];
  return summary
    ? { type: "reasoning", id, summary: parts, content: [], status }
    : { type: "reasoning", id, summary: [], content: parts, status };
}
