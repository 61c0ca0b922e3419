import { anthropicStreamError, ChatStreamToAnthropic } from "../translate/chatStreamToAnthropic.ts";
import type { AnthropicUsage } from "../translate/chatToAnthropicMessage.ts";
import { ResponsesStreamToChat } from "../translate/responsesStreamToChatChunks.ts";
import { ToolCallTextChunks } from "../translate/toolCallTextChunks.ts";
import type { ToolCallTextPlan } from "../translate/toolCallTextSetup.ts";
import type { Committed } from "../upstream/dispatcher.ts";
import type { RelayShape } from "../upstream/relayStream.ts";
import { UpstreamFailure } from "../upstream/upstreamFailure.ts";

type Json = Record<string, unknown>;
type StreamCommitted = Extract<Committed, { kind: "stream" }>;

/** Called once a streamed answer ends, with what it cost. */
export type MessagesDone = (outcome: "ok" | "error" | "client_gone", usage: AnthropicUsage | undefined) => void;

function cutShort(): UpstreamFailure {
  return new UpstreamFailure("reset", "the upstream stream ended before the answer was complete", { status: 200 });
}

/** After bytes reached the client a failure is Anthropic's `error` event: never a silent stop. */
function failedFrames(failure: UpstreamFailure): string {
  const type = failure.kind === "http_429" ? "rate_limit_error" : failure.kind.endsWith("timeout") ? "api_error" : "overloaded_error";
  return anthropicStreamError(type, `The upstream stream failed after it began (${failure.kind}): ${failure.message}`);
}

/** An Anthropic upstream's events, relayed as they came (named by their type); message_stop ends the answer. */
export function anthropicPassthroughShape(done: MessagesDone): RelayShape {
  const usage: AnthropicUsage = { input_tokens: 0, output_tokens: 0 };
  return {
    opening: () => "",
    event(event, data) {
      if (data === "[DONE]") return { frames: "", end: true };
      const type = String(data.type ?? event.event ?? "");
      const found = (type === "message_start" ? (data.message as Json | undefined)?.usage : data.usage) as
        | Partial<AnthropicUsage>
        | undefined;
      if (found?.input_tokens) usage.input_tokens = found.input_tokens;
      if (found?.output_tokens) usage.output_tokens = found.output_tokens;
      return { frames: `event: ${type}\ndata: ${event.data}\n\n`, end: type === "message_stop" };
    },
    endedEarly() {
      throw cutShort();
    },
    failed: failedFrames,
    done: (outcome) => done(outcome, usage),
  };
}

/**
 * Chat chunks (from a chat upstream, or a Responses upstream's events turned into chat chunks) as
 * Anthropic's events. A chat stream ends at [DONE]; one cut before its finish_reason failed.
 */
export function translatedShape(
  committed: StreamCommitted,
  model: string,
  stop: readonly string[],
  done: MessagesDone,
  textPlan: ToolCallTextPlan | undefined,
): RelayShape {
  const translator = new ChatStreamToAnthropic(model);
  const rewriter = textPlan ? new ToolCallTextChunks(textPlan) : undefined;
  const fromResponses = committed.wire === "responses" ? new ResponsesStreamToChat(model, true, stop) : undefined;
  const push = (chunks: readonly Json[]) => {
    let frames = "";
    for (const chunk of rewriter ? chunks.flatMap((c) => rewriter.push(c)) : chunks) frames += translator.push(chunk);
    return frames;
  };
  const complete = () => (rewriter ? push(rewriter.end()) : "") + translator.finish();
  return {
    opening: () => translator.start(),
    event(event, data) {
      if (fromResponses) {
        if (data === "[DONE]") throw cutShort();
        const out = fromResponses.push(data.type === undefined && event.event ? { ...data, type: event.event } : data);
        const frames = push(out.chunks);
        return out.end ? { frames: frames + complete(), end: true, cut: out.cut } : { frames, end: false };
      }
      if (data === "[DONE]") return { frames: complete(), end: true };
      return { frames: push([data]), end: false };
    },
    endedEarly() {
      if (fromResponses || !translator.finished) throw cutShort();
      return complete();
    },
    failed: failedFrames,
    done: (outcome) => done(outcome, translator.usage()),
  };
}
