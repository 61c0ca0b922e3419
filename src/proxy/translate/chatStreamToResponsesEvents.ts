import {
  buildResponse,
  messageItem,
  newId,
  reasoningItem,
  statusForFinish,
  usageFromChat,
  type ResponseShell,
  type ResponseUsage,
} from "./responseObject.ts";
import { StreamedToolCalls, type ChatToolCallDelta } from "./streamedToolCalls.ts";

type Json = Record<string, unknown>;

export interface ResponsesEvent extends Json {
  type: string;
  sequence_number: number;
}

interface OpenText {
  index: number;
  id: string;
  text: string;
  logprobs: unknown[];
}

interface ChatDelta {
  content?: string | null;
  /** Reasoning as DeepSeek, vLLM and others stream it (`reasoning_content`) or OpenRouter (`reasoning`). */
  reasoning_content?: unknown;
  reasoning?: unknown;
  tool_calls?: ChatToolCallDelta[];
}

/**
 * Turns a Chat Completions chunk stream into the Responses event sequence, item by item:
 * reasoning becomes a reasoning item (reasoning_text deltas, or summary deltas when the client
 * asked for a summary), text a message item (output_text deltas, with logprobs when the upstream
 * sent them), each tool call a function_call or custom_tool_call item (see StreamedToolCalls);
 * `finish()` closes what is open and completes the response.
 */
export class ChatStreamToResponses {
  #seq = 0;
  readonly #output: Json[] = [];
  #text: OpenText | undefined;
  #reasoning: OpenText | undefined;
  readonly #calls: StreamedToolCalls;
  #usage: ResponseUsage | undefined;
  #finish: unknown;
  #events: ResponsesEvent[] = [];

  constructor(private readonly shell: ResponseShell) {
    this.#calls = new StreamedToolCalls(shell.toolNames, {
      emit: (type, fields) => this.#events.push(this.#event(type, fields)),
      place: (item) => this.#output.push(item) - 1,
      replace: (index, item) => {
        this.#output[index] = item;
      },
    });
  }

  start(): ResponsesEvent[] {
    const response = buildResponse(this.shell, { status: "in_progress", output: [] });
    return [this.#event("response.created", { response }), this.#event("response.in_progress", { response })];
  }

  push(chunk: Json): ResponsesEvent[] {
    if (chunk.usage) this.#usage = usageFromChat(chunk.usage);
    const choice = (chunk.choices as Json[] | undefined)?.[0];
    if (!choice) return [];
    const delta = (choice.delta ?? {}) as ChatDelta;
    const reasoning = typeof delta.reasoning_content === "string" ? delta.reasoning_content : delta.reasoning;
    if (typeof reasoning === "string" && reasoning !== "") this.#appendReasoning(reasoning);
    const logprobs = (choice.logprobs as { content?: unknown } | null | undefined)?.content;
    if (typeof delta.content === "string" && delta.content !== "") this.#appendText(delta.content, Array.isArray(logprobs) ? logprobs : []);
    if (delta.tool_calls?.length) {
      this.#closeReasoning();
      this.#closeText();
      for (const call of delta.tool_calls) this.#calls.push(call);
    }
    if (choice.finish_reason) this.#finish = choice.finish_reason;
    return this.#take();
  }

  /** Closes open items and completes the response (incomplete when the upstream stopped on length). */
  finish(): { events: ResponsesEvent[]; response: Json } {
    this.#closeAll();
    const { status, incompleteReason } = statusForFinish(this.#finish);
    const response = buildResponse(this.shell, { status, output: this.#output, usage: this.#usage, incompleteReason });
    this.#events.push(this.#event(status === "completed" ? "response.completed" : "response.incomplete", { response }));
    return { events: this.#take(), response };
  }

  /** Ends the stream as failed, keeping what was produced so far. */
  fail(code: string, message: string): ResponsesEvent[] {
    const output = [...this.#output];
    const text = this.#text;
    if (text) output[text.index] = { ...messageItem(text.id, text.text, "completed", text.logprobs), status: "incomplete" };
    const thought = this.#reasoning;
    if (thought) output[thought.index] = reasoningItem(thought.id, thought.text, "incomplete", this.shell.summary);
    this.#calls.incomplete(output);
    const response = buildResponse(this.shell, { status: "failed", output, usage: this.#usage, error: { code, message } });
    return [this.#event("response.failed", { response }), this.#event("error", streamErrorFields(code, message))];
  }

  usage(): ResponseUsage | undefined {
    return this.#usage;
  }

  #take(): ResponsesEvent[] {
    const events = this.#events;
    this.#events = [];
    return events;
  }

  #appendReasoning(delta: string): void {
    const summary = this.shell.summary;
    if (!this.#reasoning) {
      this.#closeText();
      this.#calls.closeAll();
      const reasoning: OpenText = { index: this.#output.length, id: newId("rs"), text: "", logprobs: [] };
      this.#reasoning = reasoning;
      const item = reasoningItem(reasoning.id, "", "in_progress", summary);
      this.#output.push(item);
      this.#emit("response.output_item.added", { output_index: reasoning.index, item });
      const at = { item_id: reasoning.id, output_index: reasoning.index };
      if (summary)
        this.#emit("response.reasoning_summary_part.added", { ...at, summary_index: 0, part: { type: "summary_text", text: "" } });
      else this.#emit("response.content_part.added", { ...at, content_index: 0, part: { type: "reasoning_text", text: "" } });
    }
    const reasoning = this.#reasoning;
    reasoning.text += delta;
    const at = { item_id: reasoning.id, output_index: reasoning.index };
    if (summary) this.#emit("response.reasoning_summary_text.delta", { ...at, summary_index: 0, delta });
    else this.#emit("response.reasoning_text.delta", { ...at, content_index: 0, delta });
  }

  #closeReasoning(): void {
    const reasoning = this.#reasoning;
    if (!reasoning) return;
    this.#reasoning = undefined;
    const item = reasoningItem(reasoning.id, reasoning.text, "completed", this.shell.summary);
    this.#output[reasoning.index] = item;
    const at = { item_id: reasoning.id, output_index: reasoning.index };
    if (this.shell.summary) {
      const part = { type: "summary_text", text: reasoning.text };
      this.#emit("response.reasoning_summary_text.done", { ...at, summary_index: 0, text: reasoning.text });
      this.#emit("response.reasoning_summary_part.done", { ...at, summary_index: 0, part });
    } else {
      this.#emit("response.reasoning_text.done", { ...at, content_index: 0, text: reasoning.text });
      this.#emit("response.content_part.done", { ...at, content_index: 0, part: { type: "reasoning_text", text: reasoning.text } });
    }
    this.#emit("response.output_item.done", { output_index: reasoning.index, item });
  }

  #appendText(delta: string, logprobs: unknown[]): void {
    if (!this.#text) {
      this.#closeReasoning();
      this.#calls.closeAll();
      const text: OpenText = { index: this.#output.length, id: newId("msg"), text: "", logprobs: [] };
      this.#text = text;
      const item = messageItem(text.id, "", "in_progress");
      this.#output.push(item);
      this.#emit("response.output_item.added", { output_index: text.index, item });
      this.#emit("response.content_part.added", {
        item_id: text.id,
        output_index: text.index,
        content_index: 0,
        part: { type: "output_text", text: "", annotations: [], logprobs: [] },
      });
    }
    const text = this.#text;
    text.text += delta;
    if (logprobs.length > 0) text.logprobs.push(...logprobs);
    this.#emit("response.output_text.delta", { item_id: text.id, output_index: text.index, content_index: 0, delta, logprobs });
  }

  #closeText(): void {
    const text = this.#text;
    if (!text) return;
    this.#text = undefined;
    const item = messageItem(text.id, text.text, "completed", text.logprobs);
    this.#output[text.index] = item;
    const part = (item.content as Json[])[0];
    const at = { item_id: text.id, output_index: text.index, content_index: 0 };
    this.#emit("response.output_text.done", { ...at, text: text.text, logprobs: text.logprobs });
    this.#emit("response.content_part.done", { ...at, part });
    this.#emit("response.output_item.done", { output_index: text.index, item });
  }

  #closeAll(): void {
    this.#closeReasoning();
    this.#closeText();
    this.#calls.closeAll();
  }

  #emit(type: string, fields: Json): void {
    this.#events.push(this.#event(type, fields));
  }

  #event(type: string, fields: Json): ResponsesEvent {
    return { type, sequence_number: this.#seq++, ...fields };
  }
}

/**
 * The fields of the `error` event that ends a stream which failed after it began, after its
 * `response.failed`: OpenAI's (code, message, param) plus the same as a nested `error` object, which
 * is what makes the openai SDK's stream (and so LangChain's) throw instead of ending quietly.
 */
export function streamErrorFields(code: string, message: string): Json {
  return { code, message, param: null, error: { type: "server_error", code, message, param: null } };
}

/** SSE framing of one Responses event (named, as OpenAI sends them). */
export function frameResponsesEvent(event: ResponsesEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}
