import { sseData, type ScriptedAnswer } from "./scriptedAnswer.ts";

/** A scripted answer as a legacy completions body or stream, an embeddings body, and a compaction. */

export function completionsBody(a: ScriptedAnswer): unknown {
  return {
    id: `cmpl-${a.seq}`,
    object: "text_completion",
    created: 1_700_000_000,
    model: a.model,
    choices: [{ index: 0, text: a.text, logprobs: null, finish_reason: a.finishReason ?? "stop" }],
    usage: { ...a.usage, total_tokens: a.usage.prompt_tokens + a.usage.completion_tokens },
  };
}

export function completionsStreamEvents(a: ScriptedAnswer): string[] {
  const base = { id: `cmpl-${a.seq}`, object: "text_completion", created: 1_700_000_000, model: a.model };
  const events = a.pieces.map((text) => sseData({ ...base, choices: [{ index: 0, text, logprobs: null, finish_reason: null }] }));
  events.push(sseData({ ...base, choices: [{ index: 0, text: "", logprobs: null, finish_reason: a.finishReason ?? "stop" }] }));
  events.push("data: [DONE]\n\n");
  return events;
}

/** One small vector per input, numbered so tests can tell them apart. */
export function embeddingsBody(a: ScriptedAnswer, input: unknown): unknown {
  const inputs = Array.isArray(input) ? input : [input];
  return {
    object: "list",
    data: inputs.map((_, index) => ({ object: "embedding", index, embedding: [index, 0.5, -0.5] })),
    model: a.model,
    usage: { prompt_tokens: a.usage.prompt_tokens, total_tokens: a.usage.prompt_tokens },
  };
}

/** A remote compaction's answer: one opaque compaction item, as OpenAI returns it. */
export function compactionBody(a: ScriptedAnswer): unknown {
  return {
    id: `resp_cmp_${a.seq}`,
    object: "response.compaction",
    created_at: 1_700_000_000,
    output: [{ type: "compaction", id: `cmp_${a.seq}`, encrypted_content: `opaque-${a.seq}` }],
    usage: { input_tokens: a.usage.prompt_tokens, output_tokens: a.usage.completion_tokens },
  };
}
