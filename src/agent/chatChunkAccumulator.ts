/** A streamed tool call once its deltas are joined. */
export interface GatheredToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface GatheredMessage {
  content: string;
  toolCalls: GatheredToolCall[];
  finishReason: string | null;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens?: number };
  chunks: number;
}

interface ChunkLike {
  choices?: Array<{
    delta?: {
      content?: string | null;
      tool_calls?: Array<{ index: number; id?: string; function?: { name?: string; arguments?: string } }>;
    };
    finish_reason?: string | null;
  }>;
  usage?: GatheredMessage["usage"] | null;
}

/** Joins Chat Completions stream chunks into the final assistant message. Pure. */
export class ChatChunkAccumulator {
  #content = "";
  #calls: GatheredToolCall[] = [];
  #finish: string | null = null;
  #usage: GatheredMessage["usage"];
  #chunks = 0;

  /** Adds a chunk; returns the text delta it carried (possibly empty). */
  add(chunk: ChunkLike): string {
    this.#chunks++;
    if (chunk.usage) this.#usage = chunk.usage;
    let text = "";
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta;
      if (delta?.content) text += delta.content;
      for (const call of delta?.tool_calls ?? []) {
        let slot = this.#calls[call.index];
        if (slot == null) {
          slot = { id: "", name: "", arguments: "" };
          this.#calls[call.index] = slot;
        }
        if (call.id) slot.id = call.id;
        if (call.function?.name) slot.name += call.function.name;
        if (call.function?.arguments) slot.arguments += call.function.arguments;
      }
      if (choice.finish_reason) this.#finish = choice.finish_reason;
    }
    this.#content += text;
    return text;
  }

  result(): GatheredMessage {
    return {
      content: this.#content,
      toolCalls: this.#calls.filter(Boolean),
      finishReason: this.#finish,
      usage: this.#usage,
      chunks: this.#chunks,
    };
  }
}
