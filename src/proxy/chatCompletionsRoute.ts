import type { Context } from "hono";
import type { Committed } from "./dispatcher.ts";
import type { ProxyCore } from "./proxyCore.ts";
import { invalidRequest } from "./proxyError.ts";
import { relayStream, type RelayShape } from "./relayStream.ts";
import { agentdHeaders, readJsonObject } from "./requestBody.ts";
import { ToolCallTextChunks, toolCallTextInCompletion } from "./toolCallTextChunks.ts";
import { UpstreamFailure } from "./upstreamFailure.ts";
import { passedResponseHeaders } from "./upstreamHeaders.ts";

type Json = Record<string, unknown>;

/**
 * POST /v1/chat/completions: passed through to chat upstreams. The client's body is sent as it
 * came unless the model is aliased or a quirk must be dropped, and the answer is relayed without
 * re-serialising (unless tool calls written as text must be parsed).
 */
export async function handleChatCompletions(c: Context, core: ProxyCore): Promise<Response> {
  const t0 = performance.now();
  const { raw, body } = await readJsonObject(c.req.raw, core.config.max_body_bytes);
  const model = body.model;
  if (typeof model !== "string" || !model) throw invalidRequest("'model' is required", "model");
  if (!Array.isArray(body.messages)) throw invalidRequest("'messages' must be an array", "messages");
  const stream = body.stream === true;
  const routes = core.routes(model, ["chat"]);
  const committed = await core.dispatch({ routes, stream, payloads: { chat: { object: body, raw } }, clientHeaders: c.req.raw.headers, signal: c.req.raw.signal }, model, t0);
  const committedAt = performance.now();
  const headers: Record<string, string> = {};
  passedResponseHeaders(committed.response.headers, headers);
  const overhead = committedAt - t0 - (committedAt - committed.sentAt);
  const parseText = committed.provider.config.tool_call_text === "parse";
  if (committed.kind === "json") {
    const usage = committed.body.usage as { prompt_tokens?: number; completion_tokens?: number } | undefined;
    const text = parseText ? JSON.stringify(toolCallTextInCompletion(committed.body)) : committed.text;
    core.recorder.record({ provider: committed.provider, model, outcome: "ok", status: 200, totalMs: performance.now() - t0, tokensIn: usage?.prompt_tokens ?? 0, tokensOut: usage?.completion_tokens ?? 0, attempts: committed.attempts });
    headers["content-type"] = "application/json";
    return new Response(text, { status: 200, headers: agentdHeaders(committed.provider.name, overhead + (performance.now() - committedAt), headers) });
  }
  const shape = chatShape(core, committed, model, t0, committedAt - t0, parseText);
  headers["content-type"] = "text/event-stream";
  headers["cache-control"] = "no-cache";
  const body$ = relayStream(committed, shape, (failure) => core.noteFailure(committed.provider, failure, committed.upstreamModel, committed.attempts));
  return new Response(body$, { status: 200, headers: agentdHeaders(committed.provider.name, overhead + (performance.now() - committedAt), headers) });
}

function chatShape(core: ProxyCore, committed: Extract<Committed, { kind: "stream" }>, model: string, t0: number, ttftMs: number, parseText: boolean): RelayShape {
  let usage: { prompt_tokens?: number; completion_tokens?: number } | undefined;
  let finished = false;
  const rewriter = parseText ? new ToolCallTextChunks() : undefined;
  return {
    opening: () => "",
    event(event, data) {
      if (data === "[DONE]") return { frames: (rewriter ? frameChunks(rewriter.end()) : "") + "data: [DONE]\n\n", end: true };
      if (data.usage) usage = data.usage as typeof usage;
      if ((data.choices as Json[] | undefined)?.[0]?.finish_reason) finished = true;
      if (rewriter) return { frames: frameChunks(rewriter.push(data)), end: false };
      return { frames: `data: ${event.data}\n\n`, end: false };
    },
    endedEarly() {
      if (!finished) throw upstreamCutShort();
      return (rewriter ? frameChunks(rewriter.end()) : "") + "data: [DONE]\n\n";
    },
    failed(failure: UpstreamFailure) {
      const code = failure.kind.endsWith("timeout") ? "upstream_timeout" : "upstream_error";
      const error = { error: { code, message: `The upstream stream failed after it began (${failure.kind}): ${failure.message}`, type: "server_error", param: null } };
      return `data: ${JSON.stringify(error)}\n\ndata: [DONE]\n\n`;
    },
    done(outcome) {
      core.recorder.record({
        provider: committed.provider,
        model,
        outcome,
        status: 200,
        ttftMs,
        totalMs: performance.now() - t0,
        tokensIn: usage?.prompt_tokens ?? 0,
        tokensOut: usage?.completion_tokens ?? 0,
        attempts: committed.attempts,
      });
    },
  };
}

function frameChunks(chunks: readonly Json[]): string {
  let frames = "";
  for (const chunk of chunks) frames += `data: ${JSON.stringify(chunk)}\n\n`;
  return frames;
}

function upstreamCutShort(): UpstreamFailure {
  return new UpstreamFailure("reset", "the upstream stream ended before the answer was complete", { status: 200 });
}
