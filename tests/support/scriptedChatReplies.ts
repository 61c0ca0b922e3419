import { halves, pieceLogprob, sseData, type ScriptedAnswer } from "./scriptedAnswer.ts";

/** A scripted answer as a Chat Completions body or chunk stream. */

function finishReason(a: ScriptedAnswer): string {
  return a.finishReason ?? (a.calls.length ? "tool_calls" : "stop");
}

function usage(a: ScriptedAnswer) {
  return { ...a.usage, total_tokens: a.usage.prompt_tokens + a.usage.completion_tokens };
}

export function chatBody(a: ScriptedAnswer): unknown {
  return {
    id: `chatcmpl-${a.seq}`,
    object: "chat.completion",
    created: 1_700_000_000,
    model: a.model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: a.text || null,
          ...(a.reasoning ? { [a.reasoningField]: a.reasoning } : {}),
          ...(a.calls.length
            ? { tool_calls: a.calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })) }
            : {}),
        },
        logprobs: a.logprobs ? { content: a.pieces.map(pieceLogprob), refusal: null } : null,
        finish_reason: finishReason(a),
      },
    ],
    usage: usage(a),
  };
}

/** The SSE events, each framed as `data: …`, ending with `[DONE]`. */
export function chatStreamEvents(a: ScriptedAnswer): string[] {
  const base = { id: `chatcmpl-${a.seq}`, object: "chat.completion.chunk", created: 1_700_000_000, model: a.model };
  const chunk = (delta: object, finish: string | null = null, logprobs: object | null = null) =>
    sseData({ ...base, choices: [{ index: 0, delta, logprobs, finish_reason: finish }] });
  const events = [chunk({ role: "assistant", content: "" })];
  if (a.reasoning) for (const part of halves(a.reasoning)) events.push(chunk({ [a.reasoningField]: part }));
  for (const piece of a.pieces)
    events.push(chunk({ content: piece }, null, a.logprobs ? { content: [pieceLogprob(piece)], refusal: null } : null));
  const opening = (index: number) => {
    const call = a.calls[index]!;
    return chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] });
  };
  const argument = (index: number, part: string) => chunk({ tool_calls: [{ index, function: { arguments: part } }] });
  if (a.interleaveCalls) {
    for (let index = 0; index < a.calls.length; index++) events.push(opening(index));
    const parts = a.calls.map((call) => halves(call.arguments));
    for (let round = 0; round < 2; round++)
      parts.forEach((halvesOf, index) => {
        const part = halvesOf[round];
        if (part) events.push(argument(index, part));
      });
  } else
    a.calls.forEach((call, index) => {
      events.push(opening(index));
      for (const part of halves(call.arguments)) events.push(argument(index, part));
    });
  events.push(chunk({}, finishReason(a)));
  events.push(sseData({ ...base, choices: [], usage: usage(a) }));
  events.push("data: [DONE]\n\n");
  return events;
}
