import { AGENTD_SIGNATURE } from "./anthropicThinking.ts";
import { anthropicUsage, messageId, stopReasonFor, type AnthropicUsage } from "./chatToAnthropicMessage.ts";
import type { ChatToolCallDelta } from "./streamedToolCalls.ts";

type Json = Record<string, unknown>;

interface Call {
  id: string;
  name: string;
  args: string;
  state: "waiting" | "open" | "closed";
}

function isCompleteJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** SSE framing of one Anthropic event: named, as Anthropic sends them. */
export function frameAnthropicEvent(event: Json): string {
  return `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** The `error` event that ends a stream which failed after it began. */
export function anthropicStreamError(type: string, message: string): string {
  return frameAnthropicEvent({ type: "error", error: { type, message } });
}

/**
 * Chat chunks as Anthropic's event sequence: message_start and a ping, then one content block at
 * a time (thinking, text, each tool_use), each started, filled by deltas and stopped before the
 * next opens; `finish()` gives message_delta (stop_reason, usage) and message_stop. A tool call
 * that starts while another is open waits until the open one's arguments are complete JSON, so an
 * upstream that interleaves calls still yields whole blocks in order.
 */
export class ChatStreamToAnthropic {
  #index = -1;
  #open: "thinking" | "text" | Call | undefined;
  readonly #calls = new Map<number, Call>();
  #usage: AnthropicUsage | undefined;
  #finish: unknown;
  #out = "";

  constructor(private readonly model: string) {}

  start(): string {
    const message = {
      id: messageId(),
      type: "message",
      role: "assistant",
      model: this.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 0, output_tokens: 0 },
    };
    return frameAnthropicEvent({ type: "message_start", message }) + frameAnthropicEvent({ type: "ping" });
  }

  push(chunk: Json): string {
    if (chunk.usage) this.#usage = anthropicUsage(chunk.usage);
    const choice = (chunk.choices as Json[] | undefined)?.[0];
    if (!choice) return this.#take();
    const delta = (choice.delta ?? {}) as Json;
    const reasoning = typeof delta.reasoning_content === "string" ? delta.reasoning_content : delta.reasoning;
    if (typeof reasoning === "string" && reasoning) {
      this.#openBlock("thinking", { type: "thinking", thinking: "", signature: "" });
      this.#delta({ type: "thinking_delta", thinking: reasoning });
    }
    if (typeof delta.content === "string" && delta.content) {
      this.#openBlock("text", { type: "text", text: "" });
      this.#delta({ type: "text_delta", text: delta.content });
    }
    for (const call of (delta.tool_calls as ChatToolCallDelta[] | undefined) ?? []) this.#pushCall(call);
    if (choice.finish_reason) this.#finish = choice.finish_reason;
    return this.#take();
  }

  /** Whether the upstream said why it stopped (a stream cut before that is a failure). */
  get finished(): boolean {
    return this.#finish !== undefined;
  }

  usage(): AnthropicUsage | undefined {
    return this.#usage;
  }

  finish(): string {
    this.#closeAll();
    const usage = this.#usage ?? { input_tokens: 0, output_tokens: 0 };
    this.#emit({ type: "message_delta", delta: { stop_reason: stopReasonFor(this.#finish), stop_sequence: null }, usage });
    this.#emit({ type: "message_stop" });
    return this.#take();
  }

  #pushCall(delta: ChatToolCallDelta): void {
    const key = delta.index ?? 0;
    let call = this.#calls.get(key);
    if (!call) {
      call = { id: delta.id || `toolu_${crypto.randomUUID().replaceAll("-", "")}`, name: "", args: "", state: "waiting" };
      this.#calls.set(key, call);
    }
    if (delta.function?.name && call.state === "waiting") call.name += delta.function.name;
    const piece = delta.function?.arguments ?? "";
    call.args += piece;
    if (call.state === "open" && piece) this.#delta({ type: "input_json_delta", partial_json: piece });
    this.#advance();
  }

  #advance(): void {
    for (;;) {
      const waiting = [...this.#calls.values()].find((call) => call.state === "waiting");
      if (!waiting) return;
      const open = this.#open;
      if (typeof open === "object" && !isCompleteJson(open.args)) return;
      this.#startCall(waiting);
    }
  }

  #startCall(call: Call): void {
    this.#close();
    call.state = "open";
    this.#start(call, { type: "tool_use", id: call.id, name: call.name, input: {} });
    if (call.args) this.#delta({ type: "input_json_delta", partial_json: call.args });
  }

  #openBlock(kind: "thinking" | "text", block: Json): void {
    if (this.#open === kind) return;
    this.#close();
    this.#start(kind, block);
  }

  #start(open: "thinking" | "text" | Call, block: Json): void {
    this.#index++;
    this.#open = open;
    this.#emit({ type: "content_block_start", index: this.#index, content_block: block });
  }

  #delta(delta: Json): void {
    this.#emit({ type: "content_block_delta", index: this.#index, delta });
  }

  #close(): void {
    const open = this.#open;
    if (open === undefined) return;
    if (open === "thinking") this.#delta({ type: "signature_delta", signature: AGENTD_SIGNATURE });
    if (typeof open === "object") open.state = "closed";
    this.#open = undefined;
    this.#emit({ type: "content_block_stop", index: this.#index });
  }

  #closeAll(): void {
    this.#close();
    for (const call of this.#calls.values()) {
      if (call.state !== "waiting") continue;
      this.#startCall(call);
      this.#close();
    }
  }

  #emit(event: Json): void {
    this.#out += frameAnthropicEvent(event);
  }

  #take(): string {
    const out = this.#out;
    this.#out = "";
    return out;
  }
}
