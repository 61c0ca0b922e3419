/** One scripted answer resolved for a request, in the terms both wire shapes (chat, Responses) build from. */
export interface ScriptedAnswer {
  /** Request number, for ids. */
  seq: number;
  model: string;
  text: string;
  /** The text as streamed, piece by piece. */
  pieces: string[];
  calls: { id: string; name: string; arguments: string; namespace?: string }[];
  reasoning?: string;
  reasoningField: "reasoning_content" | "reasoning";
  /**
   * How a Responses reasoning item shows the reasoning: its text (default, as open models do), or
   * as OpenAI's models do, only a summary and only when the request asked for one ("none" else).
   */
  reasoningAs?: "summary" | "none";
  usage: { prompt_tokens: number; completion_tokens: number };
  finishReason?: string;
  interleaveCalls: boolean;
  logprobs: boolean;
}

/** The logprob entry scripted for one text piece. */
export function pieceLogprob(piece: string) {
  const bytes = [...new TextEncoder().encode(piece)];
  return { token: piece, logprob: -0.25, bytes, top_logprobs: [{ token: piece, logprob: -0.25, bytes }] };
}

/** Two pieces, so clients must join deltas. */
export function halves(text: string): string[] {
  const half = Math.ceil(text.length / 2);
  return [text.slice(0, half), text.slice(half)].filter((part) => part !== "");
}

export function sseData(value: unknown): string {
  return `data: ${JSON.stringify(value)}\n\n`;
}
