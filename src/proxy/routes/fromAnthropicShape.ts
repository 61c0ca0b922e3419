import { AnthropicStreamToChat } from "../translate/anthropicToChatAnswer.ts";
import type { RelayShape } from "../upstream/relayStream.ts";
import { UpstreamFailure } from "../upstream/upstreamFailure.ts";

type Json = Record<string, unknown>;

/**
 * An Anthropic upstream's events as chat chunks, framed by `frame`: the chat route frames them as
 * chat SSE (ending with [DONE]); the Responses route feeds them to its chat → Responses translator.
 * The answer ends at message_stop; a stream cut before it failed.
 */

export function fromAnthropicShape(
  model: string,
  withUsage: boolean,
  frame: (chunks: readonly Json[]) => string,
  failed: (failure: UpstreamFailure) => string,
  done: (outcome: "ok" | "error" | "client_gone", usage: Json | undefined) => void,
  closing: () => string = () => "data: [DONE]\n\n",
  opening: () => string = () => "",
): RelayShape {
  const translator = new AnthropicStreamToChat(model, withUsage);
  return {
    opening,
    event(event, data) {
      if (data === "[DONE]") throw cutShort();
      const out = translator.push(data.type === undefined && event.event ? { ...data, type: event.event } : data);
      return { frames: frame(out.chunks) + (out.end ? closing() : ""), end: out.end };
    },
    endedEarly() {
      throw cutShort();
    },
    failed,
    done: (outcome) => done(outcome, translator.usage()),
  };
}

function cutShort(): UpstreamFailure {
  return new UpstreamFailure("reset", "the upstream stream ended before the answer was complete", { status: 200 });
}
