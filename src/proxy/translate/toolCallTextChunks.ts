import { newId } from "./responseObject.ts";
import { parseToolCallText, ToolCallTextScanner, type TextToolCall } from "./toolCallText.ts";

type Json = Record<string, unknown>;

interface Choice {
  index?: number;
  delta?: { content?: string | null; tool_calls?: { index?: number }[] } & Json;
  finish_reason?: string | null;
}

/**
 * Rewrites a chat chunk stream for a provider with `tool_call_text: "parse"`: text that is a
 * tool call becomes `delta.tool_calls`, the rest stays content, and `finish_reason: "stop"`
 * becomes "tool_calls" when calls were found.
 */
export class ToolCallTextChunks {
  readonly #scanner = new ToolCallTextScanner();
  /** Text-written calls are numbered after any structured ones, so the two never collide. */
  #nextIndex = 0;
  #found = false;
  #ended = false;
  #template: Json | undefined;

  push(chunk: Json): Json[] {
    this.#template ??= { id: chunk.id, object: chunk.object, created: chunk.created, model: chunk.model };
    const choice = (chunk.choices as Choice[] | undefined)?.[0];
    if (!choice) return [chunk];
    const out: Json[] = [];
    for (const call of choice.delta?.tool_calls ?? []) this.#nextIndex = Math.max(this.#nextIndex, (call.index ?? 0) + 1);
    const content = choice.delta?.content;
    if (typeof content === "string" && content !== "") {
      const scanned = this.#scanner.push(content);
      const delta = { ...choice.delta, content: scanned.text };
      if (scanned.calls.length > 0) delta.tool_calls = [...(choice.delta?.tool_calls ?? []), ...this.#deltas(scanned.calls)];
      if (scanned.text !== "" || scanned.calls.length > 0 || choice.delta?.tool_calls)
        out.push({ ...chunk, choices: [{ ...choice, delta, finish_reason: null }] });
    } else if (choice.delta && Object.keys(choice.delta).length > 0 && !choice.finish_reason) {
      out.push(chunk);
    }
    if (choice.finish_reason) {
      out.push(...this.end());
      const finish = choice.finish_reason === "stop" && this.#found ? "tool_calls" : choice.finish_reason;
      const rest = { ...choice.delta, content: undefined };
      out.push({
        ...chunk,
        choices: [{ ...choice, delta: Object.values(rest).some((v) => v !== undefined) ? rest : {}, finish_reason: finish }],
      });
    }
    return out;
  }

  /** Releases held text; called at the finish chunk or at the end of the stream. */
  end(): Json[] {
    if (this.#ended) return [];
    this.#ended = true;
    const rest = this.#scanner.end();
    if (!rest.text) return [];
    return [{ ...this.#template, choices: [{ index: 0, delta: { content: rest.text }, finish_reason: null }] }];
  }

  #deltas(calls: readonly TextToolCall[]): Json[] {
    this.#found = true;
    return calls.map((call) => ({
      index: this.#nextIndex++,
      id: newId("call"),
      type: "function",
      function: { name: call.name, arguments: call.arguments },
    }));
  }
}

/** The same rewrite for a whole (non-streamed) completion. */
export function toolCallTextInCompletion(completion: Json): Json {
  const choices = completion.choices as ({ message?: { content?: unknown; tool_calls?: unknown[] } } & Choice)[] | undefined;
  const choice = choices?.[0];
  const content = choice?.message?.content;
  if (!choice || typeof content !== "string") return completion;
  const { text, calls } = parseToolCallText(content);
  if (calls.length === 0) return completion;
  const toolCalls = [
    ...(choice.message?.tool_calls ?? []),
    ...calls.map((call) => ({ id: newId("call"), type: "function", function: { name: call.name, arguments: call.arguments } })),
  ];
  const message = { ...choice.message, content: text.trim() === "" ? null : text, tool_calls: toolCalls };
  const finish = choice.finish_reason === "stop" ? "tool_calls" : choice.finish_reason;
  return { ...completion, choices: [{ ...choice, message, finish_reason: finish }, ...(choices ?? []).slice(1)] };
}
