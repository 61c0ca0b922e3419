import { halves, type ScriptedAnswer } from "./scriptedAnswer.ts";

/** A scripted answer as an Anthropic Messages body or event stream. */

function stopReason(a: ScriptedAnswer): string {
  if (a.finishReason === "length") return "max_tokens";
  return a.calls.length ? "tool_use" : "end_turn";
}

function usage(a: ScriptedAnswer) {
  return { input_tokens: a.usage.prompt_tokens, output_tokens: a.usage.completion_tokens };
}

export function anthropicBody(a: ScriptedAnswer): unknown {
  const content: unknown[] = [];
  if (a.reasoning) content.push({ type: "thinking", thinking: a.reasoning, signature: "sig-scripted" });
  if (a.text) content.push({ type: "text", text: a.text });
  for (const c of a.calls) content.push({ type: "tool_use", id: c.id, name: c.name, input: JSON.parse(c.arguments || "{}") });
  return {
    id: `msg_${a.seq}`,
    type: "message",
    role: "assistant",
    model: a.model,
    content,
    stop_reason: stopReason(a),
    stop_sequence: null,
    usage: usage(a),
  };
}

function event(value: { type: string } & Record<string, unknown>): string {
  return `event: ${value.type}\ndata: ${JSON.stringify(value)}\n\n`;
}

/** The named SSE events, from message_start to message_stop, as Anthropic streams them. */
export function anthropicStreamEvents(a: ScriptedAnswer): string[] {
  const message = {
    id: `msg_${a.seq}`,
    type: "message",
    role: "assistant",
    model: a.model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
  };
  const events = [
    event({ type: "message_start", message: { ...message, usage: { input_tokens: a.usage.prompt_tokens, output_tokens: 1 } } }),
  ];
  events.push(event({ type: "ping" }));
  let index = 0;
  const block = (start: unknown, deltas: unknown[]) => {
    events.push(event({ type: "content_block_start", index, content_block: start }));
    for (const delta of deltas) events.push(event({ type: "content_block_delta", index, delta }));
    events.push(event({ type: "content_block_stop", index }));
    index++;
  };
  if (a.reasoning)
    block({ type: "thinking", thinking: "", signature: "" }, [
      ...halves(a.reasoning).map((thinking) => ({ type: "thinking_delta", thinking })),
      { type: "signature_delta", signature: "sig-scripted" },
    ]);
  if (a.pieces.length)
    block(
      { type: "text", text: "" },
      a.pieces.map((text) => ({ type: "text_delta", text })),
    );
  for (const c of a.calls)
    block(
      { type: "tool_use", id: c.id, name: c.name, input: {} },
      halves(c.arguments).map((partial_json) => ({ type: "input_json_delta", partial_json })),
    );
  events.push(
    event({
      type: "message_delta",
      delta: { stop_reason: stopReason(a), stop_sequence: null },
      usage: { output_tokens: a.usage.completion_tokens },
    }),
  );
  events.push(event({ type: "message_stop" }));
  return events;
}
