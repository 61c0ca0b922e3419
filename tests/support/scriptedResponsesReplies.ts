import { halves, pieceLogprob, type ScriptedAnswer } from "./scriptedAnswer.ts";

/**
 * A scripted answer as a Responses API body or event stream: a reasoning item (reasoning_text, or
 * as OpenAI sends it, a summary only when asked for),
 * a message item, then one function_call item per call; finish reason "length" makes it incomplete.
 */

function status(a: ScriptedAnswer): string {
  return a.finishReason === "length" ? "incomplete" : "completed";
}

function messageItem(a: ScriptedAnswer) {
  return {
    type: "message",
    id: `msg_${a.seq}`,
    status: "completed",
    role: "assistant",
    content: [{ type: "output_text", text: a.text, annotations: [], ...(a.logprobs ? { logprobs: a.pieces.map(pieceLogprob) } : {}) }],
  };
}

function reasoningItem(a: ScriptedAnswer, text: string) {
  const id = `rs_${a.seq}`;
  if (a.reasoningAs === "summary") return { type: "reasoning", id, summary: [{ type: "summary_text", text }], status: "completed" };
  if (a.reasoningAs === "none") return { type: "reasoning", id, summary: [], status: "completed" };
  return { type: "reasoning", id, summary: [], content: [{ type: "reasoning_text", text }], status: "completed" };
}

/** A reasoning item's events between its output_item.added and .done, as its `reasoningAs` shows it. */
function reasoningEvents(a: ScriptedAnswer, text: string, at: { item_id: string; output_index: number }, named: Named): string[] {
  if (a.reasoningAs === "none") return [];
  if (a.reasoningAs === "summary") {
    const part = { ...at, summary_index: 0 };
    return [
      named("response.reasoning_summary_part.added", { ...part, part: { type: "summary_text", text: "" } }),
      ...halves(text).map((delta) => named("response.reasoning_summary_text.delta", { ...part, delta })),
      named("response.reasoning_summary_text.done", { ...part, text }),
      named("response.reasoning_summary_part.done", { ...part, part: { type: "summary_text", text } }),
    ];
  }
  const content = { ...at, content_index: 0 };
  return [
    named("response.content_part.added", { ...content, part: { type: "reasoning_text", text: "" } }),
    ...halves(text).map((delta) => named("response.reasoning_text.delta", { ...content, delta })),
    named("response.reasoning_text.done", { ...content, text }),
    named("response.content_part.done", { ...content, part: { type: "reasoning_text", text } }),
  ];
}

type Named = (type: string, value: object) => string;

function callItem(call: ScriptedAnswer["calls"][number]) {
  return {
    type: "function_call",
    id: `fc_${call.id}`,
    call_id: call.id,
    name: call.name,
    ...(call.namespace ? { namespace: call.namespace } : {}),
    arguments: call.arguments,
    status: "completed",
  };
}

export function responsesObject(a: Pick<ScriptedAnswer, "seq" | "model" | "usage">, output: unknown[], state = "completed") {
  return {
    id: `resp_up_${a.seq}`,
    object: "response",
    created_at: 1_700_000_000,
    status: state,
    ...(state === "incomplete" ? { incomplete_details: { reason: "max_output_tokens" } } : {}),
    model: a.model,
    output,
    usage: {
      input_tokens: a.usage.prompt_tokens,
      output_tokens: a.usage.completion_tokens,
      total_tokens: a.usage.prompt_tokens + a.usage.completion_tokens,
    },
  };
}

export function responsesBody(a: ScriptedAnswer): unknown {
  const output: unknown[] = [];
  if (a.reasoning) output.push(reasoningItem(a, a.reasoning));
  if (a.text) output.push(messageItem(a));
  for (const call of a.calls) output.push(callItem(call));
  return responsesObject(a, output, status(a));
}

/** The SSE events, each framed as `event: …` + `data: …`, as OpenAI sends them. */
export function responsesStreamEvents(a: ScriptedAnswer): string[] {
  const named = (type: string, value: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...value })}\n\n`;
  const events = [named("response.created", { response: responsesObject(a, [], "in_progress") })];
  const output: unknown[] = [];
  if (a.reasoning) {
    const item = reasoningItem(a, a.reasoning);
    const at = { item_id: item.id, output_index: output.length };
    events.push(
      named("response.output_item.added", {
        output_index: at.output_index,
        item: { ...item, status: "in_progress", summary: [], ...("content" in item ? { content: [] } : {}) },
      }),
    );
    events.push(...reasoningEvents(a, a.reasoning, at, named));
    events.push(named("response.output_item.done", { output_index: at.output_index, item }));
    output.push(item);
  }
  if (a.text) {
    const item = messageItem(a);
    const at = { item_id: item.id, output_index: output.length, content_index: 0 };
    events.push(
      named("response.output_item.added", { output_index: at.output_index, item: { ...item, status: "in_progress", content: [] } }),
    );
    events.push(named("response.content_part.added", { ...at, part: { type: "output_text", text: "", annotations: [] } }));
    for (const delta of a.pieces)
      events.push(named("response.output_text.delta", { ...at, delta, ...(a.logprobs ? { logprobs: [pieceLogprob(delta)] } : {}) }));
    events.push(named("response.output_text.done", { ...at, text: a.text }));
    events.push(named("response.content_part.done", { ...at, part: item.content[0] }));
    events.push(named("response.output_item.done", { output_index: at.output_index, item }));
    output.push(item);
  }
  for (const call of a.calls) {
    const item = callItem(call);
    const outputIndex = output.length;
    events.push(
      named("response.output_item.added", { output_index: outputIndex, item: { ...item, status: "in_progress", arguments: "" } }),
    );
    for (const delta of halves(call.arguments))
      events.push(named("response.function_call_arguments.delta", { item_id: item.id, output_index: outputIndex, delta }));
    events.push(
      named("response.function_call_arguments.done", {
        item_id: item.id,
        output_index: outputIndex,
        name: call.name,
        arguments: call.arguments,
      }),
    );
    events.push(named("response.output_item.done", { output_index: outputIndex, item }));
    output.push(item);
  }
  const state = status(a);
  events.push(
    named(state === "incomplete" ? "response.incomplete" : "response.completed", { response: responsesObject(a, output, state) }),
  );
  return events;
}
