type Json = Record<string, unknown>;

/** Anthropic stop reasons in chat's terms. */
export function finishReasonFor(stopReason: unknown): string {
  if (stopReason === "max_tokens" || stopReason === "model_context_window_exceeded") return "length";
  if (stopReason === "tool_use") return "tool_calls";
  if (stopReason === "refusal") return "content_filter";
  return "stop";
}

export function chatUsage(usage: unknown): Json | undefined {
  if (typeof usage !== "object" || usage === null) return undefined;
  const u = usage as {
    input_tokens?: number;
    output_tokens?: number;
    cache_read_input_tokens?: number;
    cache_creation_input_tokens?: number;
  };
  const cached = u.cache_read_input_tokens ?? 0;
  const prompt = (u.input_tokens ?? 0) + cached + (u.cache_creation_input_tokens ?? 0);
  const completion = u.output_tokens ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cached },
  };
}

/** A whole Anthropic message as a chat completion: text joined, tool_use blocks as tool_calls, thinking as reasoning_content. */
export function anthropicToChatCompletion(message: Json, model: string): Json {
  let text = "";
  let reasoning = "";
  const calls: Json[] = [];
  for (const block of (message.content as Json[] | undefined) ?? []) {
    if (block.type === "text") text += String(block.text ?? "");
    else if (block.type === "thinking") reasoning += String(block.thinking ?? "");
    else if (block.type === "tool_use")
      calls.push({ id: block.id, type: "function", function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
  }
  const out: Json = { role: "assistant", content: text || null };
  if (reasoning) out.reasoning_content = reasoning;
  if (calls.length > 0) out.tool_calls = calls;
  return {
    id: `chatcmpl-${String(message.id ?? crypto.randomUUID())}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: out, logprobs: null, finish_reason: finishReasonFor(message.stop_reason) }],
    usage: chatUsage(message.usage),
  };
}

/**
 * Anthropic's stream events as chat.completion.chunk objects: text_delta → content,
 * thinking_delta → reasoning_content, each tool_use block a tool call numbered in order,
 * input_json_delta its arguments; message_delta gives the finish chunk, message_stop the usage
 * chunk (when the client asked) and the end.
 */
export class AnthropicStreamToChat {
  readonly #id = `chatcmpl-${crypto.randomUUID()}`;
  readonly #created = Math.floor(Date.now() / 1000);
  /** Content block index → tool call index. */
  readonly #calls = new Map<number, number>();
  #usage: Json = {};
  #finish: string | undefined;

  constructor(
    private readonly model: string,
    private readonly withUsage: boolean,
  ) {}

  push(event: Json): { chunks: Json[]; end: boolean } {
    switch (event.type) {
      case "message_start": {
        this.#usage = { ...(((event.message as Json | undefined)?.usage as Json | undefined) ?? {}) };
        return { chunks: [this.#chunk({ role: "assistant", content: "" })], end: false };
      }
      case "content_block_start": {
        const block = (event.content_block ?? {}) as Json;
        if (block.type !== "tool_use") return { chunks: [], end: false };
        const index = this.#calls.size;
        this.#calls.set(Number(event.index), index);
        const call = { index, id: block.id, type: "function", function: { name: block.name, arguments: "" } };
        return { chunks: [this.#chunk({ tool_calls: [call] })], end: false };
      }
      case "content_block_delta":
        return { chunks: this.#delta(Number(event.index), (event.delta ?? {}) as Json), end: false };
      case "message_delta": {
        Object.assign(this.#usage, (event.usage as Json | undefined) ?? {});
        this.#finish = finishReasonFor((event.delta as Json | undefined)?.stop_reason);
        return { chunks: [this.#chunk({}, this.#finish)], end: false };
      }
      case "message_stop": {
        const chunks = this.#finish === undefined ? [this.#chunk({}, "stop")] : [];
        if (this.withUsage) chunks.push({ ...this.#base(), choices: [], usage: this.usage() });
        return { chunks, end: true };
      }
      default:
        return { chunks: [], end: false };
    }
  }

  usage(): Json | undefined {
    return chatUsage(this.#usage);
  }

  #delta(blockIndex: number, delta: Json): Json[] {
    if (delta.type === "text_delta" && delta.text) return [this.#chunk({ content: delta.text })];
    if (delta.type === "thinking_delta" && delta.thinking) return [this.#chunk({ reasoning_content: delta.thinking })];
    const call = this.#calls.get(blockIndex);
    if (delta.type === "input_json_delta" && call !== undefined && delta.partial_json)
      return [this.#chunk({ tool_calls: [{ index: call, function: { arguments: delta.partial_json } }] })];
    return [];
  }

  #base(): Json {
    return { id: this.#id, object: "chat.completion.chunk", created: this.#created, model: this.model };
  }

  #chunk(delta: Json, finish: string | null = null): Json {
    return { ...this.#base(), choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] };
  }
}
