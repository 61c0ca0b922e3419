import type OpenAI from "openai";
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import { ChatChunkAccumulator, type GatheredMessage } from "./chatChunkAccumulator.ts";

export interface ModelStepRequest {
  model: string;
  messages: ChatCompletionMessageParam[];
  tools: ChatCompletionTool[];
  temperature?: number;
}

/** One streamed model call: hands each text delta on as it arrives and returns the whole message. */
export async function streamModelStep(
  client: OpenAI,
  request: ModelStepRequest,
  { signal, headers }: { signal: AbortSignal; headers: Record<string, string> },
  onDelta: (text: string) => void,
): Promise<GatheredMessage> {
  const stream = await client.chat.completions.create(
    {
      model: request.model,
      messages: request.messages,
      stream: true,
      stream_options: { include_usage: true },
      ...(request.tools.length ? { tools: request.tools } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    },
    { signal, headers },
  );
  const accumulator = new ChatChunkAccumulator();
  for await (const chunk of stream) {
    const text = accumulator.add(chunk);
    if (text) onDelta(text);
  }
  // The SDK ends the iteration quietly when aborted; a cut-off answer must not pass as complete.
  if (signal.aborted) throw signal.reason ?? new Error("aborted");
  return accumulator.result();
}
