import { cutAtStop } from "./stopSequences.ts";

/** A Responses API `response` object turned into what a Chat Completions client expects. */

type Json = Record<string, unknown>;

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  completion_tokens_details: { reasoning_tokens: number };
}

export function usageFromResponses(usage: unknown): ChatUsage | undefined {
  if (typeof usage !== "object" || usage === null) return undefined;
  const u = usage as {
    input_tokens?: number;
    output_tokens?: number;
    total_tokens?: number;
    input_tokens_details?: { cached_tokens?: number };
    output_tokens_details?: { reasoning_tokens?: number };
  };
  const input = u.input_tokens ?? 0;
  const output = u.output_tokens ?? 0;
  return {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: u.total_tokens ?? input + output,
    prompt_tokens_details: { cached_tokens: u.input_tokens_details?.cached_tokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: u.output_tokens_details?.reasoning_tokens ?? 0 },
  };
}

/** The chat finish_reason for a finished response: tool calls win, an incomplete one says why. */
export function finishReasonFor(response: Json, sawToolCall: boolean): string {
  if (response.status === "incomplete") {
    const reason = (response.incomplete_details as { reason?: unknown } | null | undefined)?.reason;
    return reason === "content_filter" ? "content_filter" : "length";
  }
  return sawToolCall ? "tool_calls" : "stop";
}

/** The text of a reasoning item: its reasoning text, or else its summary. */
function reasoningText(item: Json): string {
  const parts = (Array.isArray(item.content) && item.content.length > 0 ? item.content : item.summary) as { text?: unknown }[] | undefined;
  return (parts ?? []).map((part) => (typeof part?.text === "string" ? part.text : "")).join("");
}

export function chatIdFor(responseId: unknown): string {
  return `chatcmpl-${typeof responseId === "string" && responseId ? responseId : crypto.randomUUID()}`;
}

/**
 * Message text joins into `content`, function_call items become `tool_calls`, reasoning becomes
 * `reasoning_content` (the field chat upstreams such as DeepSeek and vLLM use for it), output_text
 * logprobs become the choice's `logprobs`. With `stop`, the text ends before the first stop
 * sequence and what came after it (tool calls included) is not part of the answer.
 */
export function responseToChatCompletion(response: Json, fallbackModel: string, stop: readonly string[] = []): Json {
  let text = "";
  let refusal = "";
  let reasoning = "";
  let toolCalls: Json[] = [];
  const logprobs: unknown[] = [];
  // The dispatcher only commits to a response with an output array.
  for (const raw of response.output as unknown[]) {
    const item = raw as Json;
    if (item?.type === "message") {
      for (const part of (item.content ?? []) as Json[]) {
        if (part?.type === "output_text" && typeof part.text === "string") {
          text += part.text;
          if (Array.isArray(part.logprobs)) logprobs.push(...part.logprobs);
        } else if (part?.type === "refusal" && typeof part.refusal === "string") refusal += part.refusal;
      }
    } else if (item?.type === "function_call") {
      toolCalls.push({
        id: String(item.call_id ?? item.id ?? ""),
        type: "function",
        function: { name: String(item.name ?? ""), arguments: typeof item.arguments === "string" ? item.arguments : "" },
      });
    } else if (item?.type === "reasoning") {
      reasoning += reasoningText(item);
    }
  }
  const stopped = stop.length > 0 ? cutAtStop(text, stop) : { text, cut: false };
  if (stopped.cut) {
    text = stopped.text;
    toolCalls = [];
  }
  const message: Json = { role: "assistant", content: text || null, refusal: refusal || null };
  if (reasoning) message.reasoning_content = reasoning;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const completion: Json = {
    id: chatIdFor(response.id),
    object: "chat.completion",
    created: typeof response.created_at === "number" ? response.created_at : Math.floor(Date.now() / 1000),
    model: typeof response.model === "string" ? response.model : fallbackModel,
    choices: [
      {
        index: 0,
        message,
        logprobs: logprobs.length > 0 ? { content: logprobs, refusal: null } : null,
        finish_reason: stopped.cut ? "stop" : finishReasonFor(response, toolCalls.length > 0),
      },
    ],
  };
  const usage = usageFromResponses(response.usage);
  if (usage) completion.usage = usage;
  return completion;
}
