import type { Context } from "hono";
import { AgentdError, errorBody } from "../../core/errors/index.ts";
import { chatToResponsesRequest, stopSequences } from "../translate/chatToResponsesRequest.ts";
import { type Committed, WIRES, type WirePayload } from "../upstream/dispatcher.ts";
import type { ProviderRuntime } from "../upstream/providerRuntime.ts";
import type { Route } from "../upstream/providerRouter.ts";
import type { ProxyCore } from "../state/proxyCore.ts";
import { invalidRequest } from "../upstream/proxyError.ts";
import { relayStream, type RelayShape } from "../upstream/relayStream.ts";
import { chatChunkNeedsParse } from "../upstream/chatChunkScan.ts";
import { agentdHeaders, readJsonObject } from "./requestBody.ts";
import { responseToChatCompletion } from "../translate/responseToChatCompletion.ts";
import { ResponsesStreamToChat } from "../translate/responsesStreamToChatChunks.ts";
import { ToolCallTextChunks, toolCallTextInCompletion } from "../translate/toolCallTextChunks.ts";
import { toolCallTextPlan, type ToolCallTextPlan } from "../translate/toolCallTextSetup.ts";
import { reportToolCallText } from "./toolCallTextReport.ts";
import { assertChatToolNames } from "../translate/toolNames.ts";
import { anthropicToChatCompletion } from "../translate/anthropicToChatAnswer.ts";
import { chatToAnthropic } from "../translate/chatToAnthropic.ts";
import { fromAnthropicShape } from "./fromAnthropicShape.ts";
import { UpstreamFailure } from "../upstream/upstreamFailure.ts";
import { passedResponseHeaders } from "../upstream/upstreamHeaders.ts";

type Json = Record<string, unknown>;
type StreamCommitted = Extract<Committed, { kind: "stream" }>;
type Usage = { prompt_tokens?: number; completion_tokens?: number } | undefined;

/**
 * POST /v1/chat/completions: passed through to chat upstreams, translated for Responses
 * upstreams. To a chat upstream the client's body is sent as it came unless the model is aliased
 * or a quirk must be dropped, and the answer is relayed without re-serialising (unless tool calls
 * written as text must be parsed).
 */
export async function handleChatCompletions(c: Context, core: ProxyCore): Promise<Response> {
  const t0 = performance.now();
  const { raw, body } = await readJsonObject(c.req.raw, core.config.max_body_bytes);
  const model = body.model;
  if (typeof model !== "string" || !model) throw invalidRequest("'model' is required", "model");
  if (!Array.isArray(body.messages)) throw invalidRequest("'messages' must be an array", "messages");
  assertChatToolNames(body.tools);
  const stream = body.stream === true;
  const { routes, payloads } = plan(core.routes(model, WIRES.any), body, raw);
  const committed = await core.dispatch(
    { routes, stream, payloads, clientHeaders: c.req.raw.headers, client: c.req.raw, route: "/v1/chat/completions" },
    model,
    t0,
  );
  const committedAt = performance.now();
  const headers: Record<string, string> = {};
  passedResponseHeaders(committed.response.headers, headers);
  core.reportDropped(committed, headers, model);
  const overhead = committedAt - t0 - (committedAt - committed.sentAt);
  const textPlan = committed.wire === "chat" ? toolCallTextPlan(committed.provider.config, committed.upstreamModel, body.tools) : undefined;
  // The Responses API has no `stop`: the proxy honours it on the way back.
  const stop = committed.wire === "responses" ? stopSequences(body) : [];
  if (committed.kind === "json") {
    let text: string;
    let usage: Usage;
    if (committed.wire !== "chat") {
      const completion =
        committed.wire === "responses"
          ? responseToChatCompletion(committed.body, model, stop)
          : anthropicToChatCompletion(committed.body, model);
      usage = completion.usage as Usage;
      text = JSON.stringify(completion);
    } else {
      usage = committed.body.usage as Usage;
      text = textPlan ? JSON.stringify(toolCallTextInCompletion(committed.body, textPlan)) : committed.text;
      reportToolCallText(core, committed, model, textPlan, headers);
    }
    record(core, committed, model, t0, "ok", undefined, usage);
    headers["content-type"] = "application/json";
    return new Response(text, {
      status: 200,
      headers: agentdHeaders(committed.provider.name, overhead + (performance.now() - committedAt), headers),
    });
  }
  const ttftMs = committedAt - t0;
  const shape =
    committed.wire === "responses"
      ? fromResponsesShape(core, committed, model, t0, ttftMs, includeUsage(body), stop)
      : committed.wire === "anthropic"
        ? fromAnthropicShape(model, includeUsage(body), frameChunks, errorFrames, (outcome, usage) =>
            record(core, committed, model, t0, outcome, ttftMs, usage as Usage),
          )
        : chatShape(core, committed, model, t0, ttftMs, textPlan);
  headers["content-type"] = "text/event-stream";
  headers["cache-control"] = "no-cache";
  const body$ = relayStream(committed, shape, (failure) =>
    core.noteFailure(committed.provider, failure, committed.upstreamModel, committed.attempts),
  );
  return new Response(body$, {
    status: 200,
    headers: agentdHeaders(committed.provider.name, overhead + (performance.now() - committedAt), headers),
  });
}

/** The chat body as it came for chat upstreams; a translation for Responses upstreams, only when one may be tried. */
function plan(
  candidates: Route<ProviderRuntime>[],
  body: Json,
  raw: string,
): { routes: Route<ProviderRuntime>[]; payloads: { chat?: WirePayload; responses?: WirePayload; anthropic?: WirePayload } } {
  let routes = candidates;
  // One pass over the routes, not a search per wire: most requests have one provider and one wire.
  let hasChat = false;
  let hasAnthropic = false;
  let hasResponses = false;
  for (const route of routes) {
    const wire = route.provider.config.wire;
    if (wire === "chat") hasChat = true;
    else if (wire === "anthropic") hasAnthropic = true;
    else hasResponses = true;
  }
  const payloads: { chat?: WirePayload; responses?: WirePayload; anthropic?: WirePayload } = {};
  if (hasChat) payloads.chat = { object: body, raw };
  if (hasAnthropic) {
    try {
      const dropped: string[] = [];
      payloads.anthropic = { object: chatToAnthropic(body, dropped), dropped };
    } catch (error) {
      if (routes.every((r) => r.provider.config.wire === "anthropic")) throw error;
      routes = routes.filter((r) => r.provider.config.wire !== "anthropic");
    }
  }
  if (!hasResponses) return { routes, payloads };
  try {
    const dropped: string[] = [];
    payloads.responses = { object: chatToResponsesRequest(body, dropped), dropped };
    return { routes, payloads };
  } catch (error) {
    // Another wire may still take what the Responses API cannot express.
    if (routes.every((r) => r.provider.config.wire === "responses")) throw error;
    return { routes: routes.filter((r) => r.provider.config.wire !== "responses"), payloads };
  }
}

function includeUsage(body: Json): boolean {
  return (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
}

export function record(
  core: ProxyCore,
  committed: Committed,
  model: string,
  t0: number,
  outcome: "ok" | "error" | "client_gone",
  ttftMs: number | undefined,
  usage: Usage,
): void {
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
    trace: core.traceOf(committed),
  });
}

export function chatShape(
  core: ProxyCore,
  committed: StreamCommitted,
  model: string,
  t0: number,
  ttftMs: number,
  textPlan: ToolCallTextPlan | undefined,
): RelayShape {
  let usage: Usage;
  let finished = false;
  const rewriter = textPlan ? new ToolCallTextChunks(textPlan) : undefined;
  return {
    opening: () => "",
    event(event, data) {
      if (data === "[DONE]") return { frames: `${rewriter ? frameChunks(rewriter.end()) : ""}data: [DONE]\n\n`, end: true };
      if (data.usage) usage = data.usage as Usage;
      if ((data.choices as Json[] | undefined)?.[0]?.finish_reason) finished = true;
      if (rewriter) return { frames: frameChunks(rewriter.push(data)), end: false };
      return { frames: `data: ${event.data}\n\n`, end: false };
    },
    // The tool-call text rewriter reads every content delta; without it only some chunks are parsed.
    passthrough: rewriter ? undefined : (event) => (chatChunkNeedsParse(event.data) ? undefined : `data: ${event.data}\n\n`),
    endedEarly() {
      if (!finished) throw upstreamCutShort();
      return `${rewriter ? frameChunks(rewriter.end()) : ""}data: [DONE]\n\n`;
    },
    failed: errorFrames,
    done: (outcome) => {
      reportToolCallText(core, committed, model, textPlan);
      record(core, committed, model, t0, outcome, ttftMs, usage);
    },
  };
}

/** A Responses upstream's events as chat chunks; the stream ends with [DONE] after the terminal event. */
function fromResponsesShape(
  core: ProxyCore,
  committed: StreamCommitted,
  model: string,
  t0: number,
  ttftMs: number,
  withUsage: boolean,
  stop: readonly string[],
): RelayShape {
  const translator = new ResponsesStreamToChat(model, withUsage, stop);
  return {
    opening: () => "",
    event(event, data) {
      if (data === "[DONE]") throw upstreamCutShort();
      const out = translator.push(data.type === undefined && event.event ? { ...data, type: event.event } : data);
      return { frames: frameChunks(out.chunks) + (out.end ? "data: [DONE]\n\n" : ""), end: out.end, cut: out.cut };
    },
    endedEarly() {
      throw upstreamCutShort();
    },
    failed: errorFrames,
    done: (outcome) => record(core, committed, model, t0, outcome, ttftMs, translator.usage()),
  };
}

/** After bytes reached the client a failure is an error chunk then [DONE]: never a silent 200. */
function errorFrames(failure: UpstreamFailure): string {
  const code = failure.kind.endsWith("timeout") ? "upstream_timeout" : "upstream_error";
  const error = new AgentdError(code, `The upstream stream failed after it began (${failure.kind}): ${failure.message}`);
  return `data: ${JSON.stringify(errorBody(error))}\n\ndata: [DONE]\n\n`;
}

function frameChunks(chunks: readonly Json[]): string {
  let frames = "";
  for (const chunk of chunks) frames += `data: ${JSON.stringify(chunk)}\n\n`;
  return frames;
}

function upstreamCutShort(): UpstreamFailure {
  return new UpstreamFailure("reset", "the upstream stream ended before the answer was complete", { status: 200 });
}
