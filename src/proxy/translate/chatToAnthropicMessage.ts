import { AGENTD_SIGNATURE } from "./anthropicThinking.ts";

type Json = Record<string, unknown>;

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
}

/** Chat finish reasons in Anthropic's terms. */
export function stopReasonFor(finish: unknown): string {
  if (finish === "length") return "max_tokens";
  if (finish === "tool_calls" || finish === "function_call") return "tool_use";
  if (finish === "content_filter") return "refusal";
  return "end_turn";
}

export function anthropicUsage(usage: unknown): AnthropicUsage {
  const u = (usage ?? {}) as { prompt_tokens?: number; completion_tokens?: number };
  return { input_tokens: u.prompt_tokens ?? 0, output_tokens: u.completion_tokens ?? 0 };
}

export function messageId(): string {
  return `msg_${crypto.randomUUID().replaceAll("-", "")}`;
}

/** The arguments a model wrote as the tool_use input object; text that is not a JSON object is kept under `_raw`. */
export function toolInput(args: string): Json {
  if (!args.trim()) return {};
  try {
    const parsed = JSON.parse(args) as unknown;
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return parsed as Json;
  } catch {
    // Not JSON: kept whole below.
  }
  return { _raw: args };
}

/**
 * A whole chat completion as an Anthropic message: reasoning first (a thinking block with
 * agentd's placeholder signature), then text, then one tool_use block per call.
 */
export function chatToAnthropicMessage(completion: Json, model: string): Json {
  const choice = ((completion.choices as Json[] | undefined) ?? [])[0] ?? {};
  const message = (choice.message ?? {}) as Json;
  const content: Json[] = [];
  const reasoning = typeof message.reasoning_content === "string" ? message.reasoning_content : message.reasoning;
  if (typeof reasoning === "string" && reasoning) content.push({ type: "thinking", thinking: reasoning, signature: AGENTD_SIGNATURE });
  if (typeof message.content === "string" && message.content) content.push({ type: "text", text: message.content });
  for (const call of (message.tool_calls as Json[] | undefined) ?? []) {
    const fn = (call.function ?? {}) as Json;
    content.push({
      type: "tool_use",
      id: String(call.id ?? ""),
      name: String(fn.name ?? ""),
      input: toolInput(String(fn.arguments ?? "")),
    });
  }
  return {
    id: messageId(),
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: stopReasonFor(choice.finish_reason),
    stop_sequence: null,
    usage: anthropicUsage(completion.usage),
  };
}
