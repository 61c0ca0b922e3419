import { chatIdFor, finishReasonFor, usageFromResponses, type ChatUsage } from "./responseToChatCompletion.ts";
import { StopCutter } from "./stopSequences.ts";

type Json = Record<string, unknown>;

interface Call {
  index: number;
  /** Whether any of its arguments reached the client (else the `.done` event carries them). */
  sentArgs: boolean;
}

/**
 * Turns the Responses SSE event sequence into chat.completion.chunk objects: text deltas become
 * `content`, each function_call item a tool call (numbered from 0 in order of appearance) whose
 * name comes first and arguments follow, reasoning becomes `reasoning_content`. The terminal
 * event gives the finish chunk and, when the client asked, the usage chunk. `response.failed`
 * and `error` events never get here: they are failures (see parseStreamData). With stop
 * sequences, the stream ends (finish `stop`, `cut`) before the first one.
 */
export class ResponsesStreamToChat {
  #id: string | undefined;
  #created = Math.floor(Date.now() / 1000);
  #model: string;
  readonly #calls = new Map<string, Call>();
  /** Output indexes whose text (or reasoning) already streamed as deltas. */
  readonly #streamedText = new Set<number>();
  readonly #streamedReasoning = new Set<number>();
  #usage: ChatUsage | undefined;
  #started = false;
  readonly #stop: StopCutter | undefined;

  constructor(
    model: string,
    private readonly includeUsage: boolean,
    stop: readonly string[] = [],
  ) {
    this.#model = model;
    this.#stop = stop.length > 0 ? new StopCutter(stop) : undefined;
  }

  /** Chunks for one event; `end` once the response finished, `cut` when a stop sequence ended it early. */
  push(event: Json): { chunks: Json[]; end: boolean; cut?: boolean } {
    const chunks: Json[] = [];
    const type = String(event.type ?? "");
    if (!this.#started) {
      this.#started = true;
      const response = event.response as Json | undefined;
      this.#id = chatIdFor(response?.id);
      if (typeof response?.created_at === "number") this.#created = response.created_at;
      if (typeof response?.model === "string") this.#model = response.model;
      chunks.push(this.#chunk({ role: "assistant", content: "" }));
    }
    const outputIndex = typeof event.output_index === "number" ? event.output_index : 0;
    switch (type) {
      case "response.output_text.delta": {
        this.#streamedText.add(outputIndex);
        if (typeof event.delta !== "string" || !event.delta) break;
        const logprobs = Array.isArray(event.logprobs) && event.logprobs.length > 0 ? event.logprobs : undefined;
        if (!this.#stop) {
          chunks.push(this.#chunk({ content: event.delta }, null, logprobs));
          break;
        }
        const kept = this.#stop.push(event.delta);
        if (kept.text) chunks.push(this.#chunk({ content: kept.text }, null, logprobs));
        if (kept.stopped) {
          chunks.push(this.#chunk({}, "stop"));
          return { chunks, end: true, cut: true };
        }
        break;
      }
      case "response.output_text.done":
        this.#flushHeld(chunks);
        break;
      case "response.refusal.delta":
        if (typeof event.delta === "string" && event.delta) chunks.push(this.#chunk({ refusal: event.delta }));
        break;
      case "response.reasoning_text.delta":
        this.#streamedReasoning.add(outputIndex);
        if (typeof event.delta === "string" && event.delta) chunks.push(this.#chunk({ reasoning_content: event.delta }));
        break;
      case "response.reasoning_summary_text.delta":
        // A summary is what OpenAI models show of their reasoning; skip it only when the full text streams too.
        if (!this.#streamedReasoning.has(outputIndex) && typeof event.delta === "string" && event.delta)
          chunks.push(this.#chunk({ reasoning_content: event.delta }));
        break;
      case "response.output_item.added":
        if ((event.item as Json | undefined)?.type === "function_call") this.#openCall(outputIndex, event.item as Json, chunks);
        break;
      case "response.function_call_arguments.delta": {
        const call = this.#calls.get(String(outputIndex));
        if (call && typeof event.delta === "string" && event.delta) {
          call.sentArgs = true;
          chunks.push(this.#chunk({ tool_calls: [{ index: call.index, function: { arguments: event.delta } }] }));
        }
        break;
      }
      case "response.output_item.done":
        this.#itemDone(outputIndex, (event.item ?? {}) as Json, chunks);
        break;
      case "response.completed":
      case "response.incomplete": {
        this.#flushHeld(chunks);
        const response = (event.response ?? {}) as Json;
        this.#usage = usageFromResponses(response.usage);
        chunks.push(this.#chunk({}, finishReasonFor(response, this.#calls.size > 0)));
        if (this.includeUsage && this.#usage) chunks.push({ ...this.#base(), choices: [], usage: this.#usage });
        return { chunks, end: true };
      }
    }
    return { chunks, end: false };
  }

  usage(): ChatUsage | undefined {
    return this.#usage;
  }

  /** Text held back as a possible start of a stop sequence, once its item ended without one. */
  #flushHeld(chunks: Json[]): void {
    const held = this.#stop?.flush();
    if (held) chunks.push(this.#chunk({ content: held }));
  }

  #openCall(outputIndex: number, item: Json, chunks: Json[]): Call {
    const call: Call = { index: this.#calls.size, sentArgs: false };
    this.#calls.set(String(outputIndex), call);
    const args = typeof item.arguments === "string" ? item.arguments : "";
    call.sentArgs = args !== "";
    chunks.push(
      this.#chunk({
        tool_calls: [
          {
            index: call.index,
            id: String(item.call_id ?? item.id ?? ""),
            type: "function",
            function: { name: String(item.name ?? ""), arguments: args },
          },
        ],
      }),
    );
    return call;
  }

  /** Sends what a finished item holds when the upstream skipped its deltas. */
  #itemDone(outputIndex: number, item: Json, chunks: Json[]): void {
    if (item.type === "function_call") {
      const call = this.#calls.get(String(outputIndex));
      if (!call) this.#openCall(outputIndex, item, chunks);
      else if (!call.sentArgs && typeof item.arguments === "string" && item.arguments) {
        call.sentArgs = true;
        chunks.push(this.#chunk({ tool_calls: [{ index: call.index, function: { arguments: item.arguments } }] }));
      }
    } else if (item.type === "message" && !this.#streamedText.has(outputIndex)) {
      let text = "";
      for (const part of (item.content ?? []) as Json[])
        if (part?.type === "output_text" && typeof part.text === "string") text += part.text;
      const kept = this.#stop ? this.#stop.push(text).text + this.#stop.flush() : text;
      if (kept) chunks.push(this.#chunk({ content: kept }));
    }
  }

  #base(): Json {
    return { id: this.#id, object: "chat.completion.chunk", created: this.#created, model: this.#model };
  }

  #chunk(delta: Json, finish: string | null = null, logprobs?: unknown[]): Json {
    return {
      ...this.#base(),
      choices: [{ index: 0, delta, logprobs: logprobs ? { content: logprobs, refusal: null } : null, finish_reason: finish }],
    };
  }
}
