import { newId } from "./responseObject.ts";
import { parseToolCallText, ToolCallTextScanner, type ScanOutput, type TextToolCall } from "./toolCallText.ts";
import { repairCall, resolveToolName } from "./toolCallRepair.ts";
import type { ToolCallTextPlan } from "./toolCallTextSetup.ts";

type Json = Record<string, unknown>;

interface ToolCallDelta {
  index?: number;
  function?: { name?: unknown };
}

interface Choice {
  index?: number;
  delta?: { content?: string | null; tool_calls?: ToolCallDelta[] } & Json;
  finish_reason?: string | null;
}

/**
 * Rewrites a chat chunk stream: text that is a tool call becomes `delta.tool_calls`, the rest
 * stays content, and `finish_reason: "stop"` becomes "tool_calls" when calls were found.
 * Structured calls the upstream streams keep flowing as they come: only a name that arrives whole
 * in one delta is repaired (prefix, case); their argument deltas are never held back to be
 * repaired, so argument repairs apply to whole answers and to calls found in text only.
 */
export class ToolCallTextChunks {
  readonly #scanner: ToolCallTextScanner;
  readonly #plan: ToolCallTextPlan;
  /** Text-written calls are numbered after any structured ones, so the two never collide. */
  #nextIndex = 0;
  #found = false;
  #ended = false;
  #template: Json | undefined;

  constructor(plan: ToolCallTextPlan) {
    this.#plan = plan;
    this.#scanner = new ToolCallTextScanner(plan.formats, plan.tools, plan.report);
  }

  push(chunk: Json): Json[] {
    this.#template ??= { id: chunk.id, object: chunk.object, created: chunk.created, model: chunk.model };
    const choice = (chunk.choices as Choice[] | undefined)?.[0];
    if (!choice) return [chunk];
    const out: Json[] = [];
    for (const call of choice.delta?.tool_calls ?? []) {
      this.#nextIndex = Math.max(this.#nextIndex, (call.index ?? 0) + 1);
      if (typeof call.function?.name === "string") this.#repairName(call.function as { name: string });
    }
    const content = choice.delta?.content;
    if (typeof content === "string" && content !== "") {
      const scanned = this.#scanner.push(content);
      const delta = { ...choice.delta, content: scanned.text };
      if (scanned.calls.length > 0) delta.tool_calls = [...(choice.delta?.tool_calls ?? []), ...this.#deltas(scanned.calls)];
      // A chunk whose text is held back still carries whatever else it has (role, reasoning, logprobs).
      const other =
        Object.entries(choice.delta ?? {}).some(([key, value]) => key !== "content" && value != null) ||
        (choice as { logprobs?: unknown }).logprobs != null;
      if (scanned.text !== "" || scanned.calls.length > 0 || other)
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

  /** Releases held text and any call it ends with; called at the finish chunk or at the end of the stream. */
  end(): Json[] {
    if (this.#ended) return [];
    this.#ended = true;
    const rest = this.#scanner.end();
    if (!rest.text && rest.calls.length === 0) return [];
    const delta: Json = {};
    if (rest.text) delta.content = rest.text;
    if (rest.calls.length > 0) delta.tool_calls = this.#deltas(rest.calls);
    return [{ ...this.#template, choices: [{ index: 0, delta, finish_reason: null }] }];
  }

  /** In place: the chunk is this stream's own parse of the upstream's event. */
  #repairName(fn: { name: string }): void {
    if (this.#plan.tools.has(fn.name)) return;
    const resolved = resolveToolName(fn.name, this.#plan.tools);
    if (!resolved) return;
    fn.name = resolved.name;
    this.#plan.report.repairs.push(...resolved.repairs);
  }

  #deltas(calls: readonly TextToolCall[]): Json[] {
    this.#found = true;
    note(this.#plan, calls);
    return calls.map((call) => ({
      index: this.#nextIndex++,
      id: newId("call"),
      type: "function",
      function: { name: call.name, arguments: call.arguments },
    }));
  }
}

/**
 * The same rewrite for a whole (non-streamed) completion; structured calls the upstream parsed
 * itself are repaired against the declared tools too.
 */
export function toolCallTextInCompletion(completion: Json, plan: ToolCallTextPlan): Json {
  const choices = completion.choices as ({ message?: { content?: unknown; tool_calls?: unknown[] } } & Choice)[] | undefined;
  const choice = choices?.[0];
  if (!choice?.message) return completion;
  const structured = (choice.message.tool_calls ?? []).map((call) => repairStructured(call, plan));
  const content = choice.message.content;
  const scanned: ScanOutput =
    typeof content === "string" ? parseToolCallText(content, plan.formats, plan.tools, plan.report) : { text: "", calls: [] };
  if (scanned.calls.length === 0 && structured.every((call, i) => call === choice.message?.tool_calls?.[i])) return completion;
  note(plan, scanned.calls);
  const toolCalls = [
    ...structured,
    ...scanned.calls.map((call) => ({ id: newId("call"), type: "function", function: { name: call.name, arguments: call.arguments } })),
  ];
  const message =
    scanned.calls.length === 0
      ? { ...choice.message, tool_calls: toolCalls }
      : { ...choice.message, content: scanned.text.trim() === "" ? null : scanned.text, tool_calls: toolCalls };
  const finish = choice.finish_reason === "stop" && scanned.calls.length > 0 ? "tool_calls" : choice.finish_reason;
  return { ...completion, choices: [{ ...choice, message, finish_reason: finish }, ...(choices ?? []).slice(1)] };
}

/** A structured call with a repairable name or arguments, repaired; otherwise the very same object. */
function repairStructured(call: unknown, plan: ToolCallTextPlan): unknown {
  const fn = (call as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
  if (typeof fn?.name !== "string" || typeof fn.arguments !== "string") return call;
  const repaired = repairCall({ name: fn.name, arguments: fn.arguments }, plan.tools);
  if (!repaired || repaired.repairs.length === 0) return call;
  plan.report.repairs.push(...repaired.repairs);
  return { ...(call as Json), function: { ...fn, name: repaired.name, arguments: repaired.arguments } };
}

function note(plan: ToolCallTextPlan, calls: readonly TextToolCall[]): void {
  for (const call of calls) {
    plan.report.families.push(call.family);
    plan.report.repairs.push(...call.repairs);
  }
}
