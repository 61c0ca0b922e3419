import { newId } from "./responseObject.ts";
import { callItem, customInput, type ToolNames } from "./responsesTools.ts";

type Json = Record<string, unknown>;

export interface ChatToolCallDelta {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

/** Where a call's events go: the translator numbers them and keeps the output array. */
export interface CallSink {
  emit(type: string, fields: Json): void;
  /** Adds an item to the output; returns its output_index. */
  place(item: Json): number;
  replace(index: number, item: Json): void;
}

interface Call {
  callId: string;
  name: string;
  args: string;
  state: "waiting" | "open" | "closed";
  index: number;
}

function isCompleteJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Chat tool-call deltas as Responses output items, in OpenAI's order: each item is closed before
 * the next is opened. One call streams at a time; a call that starts while another is open waits
 * (its deltas gathered) until the open one's arguments are complete JSON, so an upstream that
 * interleaves calls still yields whole, ordered items. Custom tool calls carry their input whole
 * at close: it is wrapped in JSON in the chat arguments.
 */
export class StreamedToolCalls {
  readonly #calls = new Map<number, Call>();
  #open: Call | undefined;

  constructor(
    private readonly names: ToolNames,
    private readonly sink: CallSink,
  ) {}

  get size(): number {
    return this.#calls.size;
  }

  push(delta: ChatToolCallDelta): void {
    const key = delta.index ?? 0;
    let call = this.#calls.get(key);
    if (!call) {
      call = { callId: delta.id || newId("call"), name: delta.function?.name ?? "", args: "", state: "waiting", index: -1 };
      this.#calls.set(key, call);
    } else if (delta.function?.name && call.state === "waiting") call.name += delta.function.name;
    const piece = delta.function?.arguments ?? "";
    if (call.state === "closed") return;
    call.args += piece;
    if (call.state === "open" && piece && !this.#isCustom(call)) this.#argsDelta(call, piece);
    this.#advance();
  }

  /** Closes the open call, then opens and closes each waiting one in order. */
  closeAll(): void {
    if (this.#open) this.#close(this.#open);
    for (const call of this.#calls.values()) {
      if (call.state !== "waiting") continue;
      this.#start(call);
      this.#close(call);
    }
  }

  /** The open call as an incomplete item, for a failed response's output. */
  incomplete(output: Json[]): void {
    const open = this.#open;
    if (open) output[open.index] = callItem(this.names, open.callId, open.name, open.args, "incomplete");
  }

  #advance(): void {
    for (;;) {
      const open = this.#open;
      if (open) {
        const moved = [...this.#calls.values()].some((call) => call.state === "waiting");
        if (!moved || !isCompleteJson(open.args)) return;
        this.#close(open);
      }
      const next = [...this.#calls.values()].find((call) => call.state === "waiting");
      if (!next) return;
      this.#start(next);
    }
  }

  #isCustom(call: Call): boolean {
    return this.names.get(call.name)?.custom === true;
  }

  #start(call: Call): void {
    call.state = "open";
    this.#open = call;
    const item = callItem(this.names, call.callId, call.name, "", "in_progress");
    call.index = this.sink.place(item);
    this.sink.emit("response.output_item.added", { output_index: call.index, item });
    if (call.args && !this.#isCustom(call)) this.#argsDelta(call, call.args);
  }

  #argsDelta(call: Call, delta: string): void {
    this.sink.emit("response.function_call_arguments.delta", { item_id: `fc_${call.callId}`, output_index: call.index, delta });
  }

  #close(call: Call): void {
    call.state = "closed";
    if (this.#open === call) this.#open = undefined;
    const item = callItem(this.names, call.callId, call.name, call.args);
    this.sink.replace(call.index, item);
    const at = { item_id: item.id, output_index: call.index };
    if (item.type === "custom_tool_call") {
      const input = customInput(call.args);
      if (input) this.sink.emit("response.custom_tool_call_input.delta", { ...at, delta: input });
      this.sink.emit("response.custom_tool_call_input.done", { ...at, input });
    } else this.sink.emit("response.function_call_arguments.done", { ...at, name: item.name, arguments: call.args });
    this.sink.emit("response.output_item.done", { output_index: call.index, item });
  }
}
