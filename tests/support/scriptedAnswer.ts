/** One scripted answer resolved for a request, in the terms both wire shapes (chat, Responses) build from. */
export interface ScriptedAnswer {
  /** Request number, for ids. */
  seq: number;
  model: string;
  text: string;
  /** The text as streamed, piece by piece. */
  pieces: string[];
  calls: { id: string; name: string; arguments: string }[];
  reasoning?: string;
  reasoningField: "reasoning_content" | "reasoning";
  usage: { prompt_tokens: number; completion_tokens: number };
  finishReason?: string;
}

/** Two pieces, so clients must join deltas. */
export function halves(text: string): string[] {
  const half = Math.ceil(text.length / 2);
  return [text.slice(0, half), text.slice(half)].filter((part) => part !== "");
}

export function sseData(value: unknown): string {
  return `data: ${JSON.stringify(value)}\n\n`;
}
