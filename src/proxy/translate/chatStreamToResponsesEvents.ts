import {
  buildResponse,
  functionCallItem,
  messageItem,
  newId,
  reasoningItem,
  statusForFinish,
  usageFromChat,
  type ResponseShell,
  type ResponseUsage,
} from "./responseObject.ts";

type Json = Record<string, unknown>;

export interface ResponsesEvent extends Json {
  type: string;
  sequence_number: number;
}

interface OpenText {
  index: number;
  id: string;
  text: string;
}

interface OpenCall {
  index: number;
  callId: string;
  name: string;
  args: string;
}

interface ChatDelta {
  content?: string | null;
  /** Reasoning as DeepSeek, vLLM and others stream it (`reasoning_content`) or OpenRouter (`reasoning`). */
  reasoning_content?: unknown;
  reasoning?: unknown;
  tool_calls?: { index?: number; id?: string; function?: { name?: string; arguments?: string } }[];
}

/**
 * Turns a Chat Completions chunk stream into the Responses event sequence, item by item:
 * reasoning becomes a reasoning item (reasoning_text deltas), text a message item (output_text
 * deltas), each tool call a function_call item (arguments deltas); `finish()` closes what is open
 * and completes the response.
 */
export class ChatStreamToResponses {
  #seq = 0;
  readonly #output: Json[] = [];
  #text: OpenText | undefined;
  #reasoning: OpenText | undefined;
  readonly #calls = new Map<number, OpenCall>();
  #usage: ResponseUsage | undefined;
  #finish: unknown;

  constructor(private readonly shell: ResponseShell) {}

  start(): ResponsesEvent[] {
    const response = buildResponse(this.shell, { status: "in_progress", output: [] });
    return [this.#event("response.created", { response }), this.#event("response.in_progress", { response })];
  }

  push(chunk: Json): ResponsesEvent[] {
    const events: ResponsesEvent[] = [];
    if (chunk.usage) this.#usage = usageFromChat(chunk.usage);
    const choice = (chunk.choices as Json[] | undefined)?.[0];
    if (!choice) return events;
    const delta = (choice.delta ?? {}) as ChatDelta;
    const reasoning = typeof delta.reasoning_content === "string" ? delta.reasoning_content : delta.reasoning;
    if (typeof reasoning === "string" && reasoning !== "") this.#appendReasoning(reasoning, events);
    if (typeof delta.content === "string" && delta.content !== "") this.#appendText(delta.content, events);
    for (const call of delta.tool_calls ?? []) this.#appendCall(call, events);
    if (choice.finish_reason) this.#finish = choice.finish_reason;
    return events;
  }

  /** Closes open items and completes the response (incomplete when the upstream stopped on length). */
  finish(): { events: ResponsesEvent[]; response: Json } {
    const events = this.#closeAll();
    const { status, incompleteReason } = statusForFinish(this.#finish);
    const response = buildResponse(this.shell, { status, output: this.#output, usage: this.#usage, incompleteReason });
    events.push(this.#event(status === "completed" ? "response.completed" : "response.incomplete", { response }));
    return { events, response };
  }

  /** Ends the stream as failed, keeping what was produced so far. */
  fail(code: string, message: string): ResponsesEvent[] {
    const output = [...this.#output];
    if (this.#text) output[this.#text.index] = { ...messageItem(this.#text.id, this.#text.text), status: "incomplete" };
    if (this.#reasoning) output[this.#reasoning.index] = reasoningItem(this.#reasoning.id, this.#reasoning.text, "incomplete");
    for (const call of this.#calls.values()) output[call.index] = functionCallItem(call.callId, call.name, call.args, "incomplete");
    const response = buildResponse(this.shell, { status: "failed", output, usage: this.#usage, error: { code, message } });
    return [this.#event("response.failed", { response })];
  }

  usage(): ResponseUsage | undefined {
    return this.#usage;
  }

  #appendReasoning(delta: string, events: ResponsesEvent[]): void {
    if (!this.#reasoning) {
      this.#closeText(events);
      const reasoning: OpenText = { index: this.#output.length, id: newId("rs"), text: "" };
      this.#reasoning = reasoning;
      const item = reasoningItem(reasoning.id, "", "in_progress");
      this.#output.push(item);
      events.push(this.#event("response.output_item.added", { output_index: reasoning.index, item }));
      events.push(
        this.#event("response.content_part.added", {
          item_id: reasoning.id,
          output_index: reasoning.index,
          content_index: 0,
          part: { type: "reasoning_text", text: "" },
        }),
      );
    }
    this.#reasoning.text += delta;
    events.push(
      this.#event("response.reasoning_text.delta", {
        item_id: this.#reasoning.id,
        output_index: this.#reasoning.index,
        content_index: 0,
        delta,
      }),
    );
  }

  #closeReasoning(events: ResponsesEvent[]): void {
    const reasoning = this.#reasoning;
    if (!reasoning) return;
    this.#reasoning = undefined;
    const item = reasoningItem(reasoning.id, reasoning.text);
    this.#output[reasoning.index] = item;
    const at = { item_id: reasoning.id, output_index: reasoning.index, content_index: 0 };
    events.push(this.#event("response.reasoning_text.done", { ...at, text: reasoning.text }));
    events.push(this.#event("response.content_part.done", { ...at, part: { type: "reasoning_text", text: reasoning.text } }));
    events.push(this.#event("response.output_item.done", { output_index: reasoning.index, item }));
  }

  #appendText(delta: string, events: ResponsesEvent[]): void {
    if (!this.#text) {
      this.#closeReasoning(events);
      const text: OpenText = { index: this.#output.length, id: newId("msg"), text: "" };
      this.#text = text;
      const item = messageItem(text.id, "", "in_progress");
      this.#output.push(item);
      events.push(this.#event("response.output_item.added", { output_index: text.index, item }));
      events.push(
        this.#event("response.content_part.added", {
          item_id: text.id,
          output_index: text.index,
          content_index: 0,
          part: { type: "output_text", text: "", annotations: [], logprobs: [] },
        }),
      );
    }
    this.#text.text += delta;
    events.push(
      this.#event("response.output_text.delta", {
        item_id: this.#text.id,
        output_index: this.#text.index,
        content_index: 0,
        delta,
        logprobs: [],
      }),
    );
  }

  #appendCall(delta: NonNullable<ChatDelta["tool_calls"]>[number], events: ResponsesEvent[]): void {
    const key = delta.index ?? 0;
    let call = this.#calls.get(key);
    if (!call) {
      this.#closeReasoning(events);
      this.#closeText(events);
      call = { index: this.#output.length, callId: delta.id || newId("call"), name: delta.function?.name ?? "", args: "" };
      this.#calls.set(key, call);
      const item = functionCallItem(call.callId, call.name, "", "in_progress");
      this.#output.push(item);
      events.push(this.#event("response.output_item.added", { output_index: call.index, item }));
    } else if (delta.function?.name) {
      call.name += delta.function.name;
    }
    const args = delta.function?.arguments;
    if (args) {
      call.args += args;
      events.push(
        this.#event("response.function_call_arguments.delta", { item_id: `fc_${call.callId}`, output_index: call.index, delta: args }),
      );
    }
  }

  #closeText(events: ResponsesEvent[]): void {
    const text = this.#text;
    if (!text) return;
    this.#text = undefined;
    const item = messageItem(text.id, text.text);
    this.#output[text.index] = item;
    const part = (item.content as Json[])[0];
    events.push(
      this.#event("response.output_text.done", {
        item_id: text.id,
        output_index: text.index,
        content_index: 0,
        text: text.text,
        logprobs: [],
      }),
    );
    events.push(this.#event("response.content_part.done", { item_id: text.id, output_index: text.index, content_index: 0, part }));
    events.push(this.#event("response.output_item.done", { output_index: text.index, item }));
  }

  #closeAll(): ResponsesEvent[] {
    const events: ResponsesEvent[] = [];
    this.#closeReasoning(events);
    this.#closeText(events);
    for (const call of this.#calls.values()) {
      const item = functionCallItem(call.callId, call.name, call.args);
      this.#output[call.index] = item;
      events.push(
        this.#event("response.function_call_arguments.done", {
          item_id: item.id,
          output_index: call.index,
          name: call.name,
          arguments: call.args,
        }),
      );
      events.push(this.#event("response.output_item.done", { output_index: call.index, item }));
    }
    this.#calls.clear();
    return events;
  }

  #event(type: string, fields: Json): ResponsesEvent {
    return { type, sequence_number: this.#seq++, ...fields };
  }
}

/** SSE framing of one Responses event (named, as OpenAI sends them). */
export function frameResponsesEvent(event: ResponsesEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}
