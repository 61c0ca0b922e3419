import type { Context } from "hono";
import { anthropicToChat } from "../translate/anthropicToChat.ts";
import { withoutAgentdThinking } from "../translate/anthropicThinking.ts";
import { chatToAnthropicMessage, type AnthropicUsage } from "../translate/chatToAnthropicMessage.ts";
import { chatToResponsesRequest, stopSequences } from "../translate/chatToResponsesRequest.ts";
import { countChatInputTokens } from "../translate/inputTokens.ts";
import { responseToChatCompletion } from "../translate/responseToChatCompletion.ts";
import { toolCallTextInCompletion } from "../translate/toolCallTextChunks.ts";
import { toolCallTextPlan, type ToolCallTextPlan } from "../translate/toolCallTextSetup.ts";
import { reportToolCallText } from "./toolCallTextReport.ts";
import { type Committed, type PassthroughEndpoint, WIRES, type WirePayload } from "../upstream/dispatcher.ts";
import type { ProviderRuntime } from "../upstream/providerRuntime.ts";
import type { Route } from "../upstream/providerRouter.ts";
import type { ProxyCore } from "../state/proxyCore.ts";
import { invalidRequest } from "../upstream/proxyError.ts";
import { relayStream } from "../upstream/relayStream.ts";
import { passedResponseHeaders } from "../upstream/upstreamHeaders.ts";
import { anthropicPassthroughShape, translatedShape } from "./messagesShapes.ts";
import { passThrough } from "./passthroughRoute.ts";
import { agentdHeaders, readJsonObject } from "./requestBody.ts";

type Json = Record<string, unknown>;
type Payloads = { chat?: WirePayload; responses?: WirePayload; anthropic?: WirePayload };

const COUNT_TOKENS: PassthroughEndpoint = { path: "/messages/count_tokens", field: "input_tokens", scalar: true };

function readModel(body: Json): string {
  const model = body.model;
  if (typeof model !== "string" || !model) throw invalidRequest("'model' is required", "model");
  if (!Array.isArray(body.messages)) throw invalidRequest("'messages' must be an array", "messages");
  return model;
}

/**
 * POST /v1/messages (Anthropic's Messages API, what Claude Code speaks): passed through to
 * Anthropic-wire upstreams, translated to Chat Completions for chat upstreams and on to the
 * Responses API for Responses upstreams, with the same dispatch (failover, retries, breakers)
 * as the OpenAI routes; the answer comes back as an Anthropic message or event stream.
 */
export async function handleMessages(c: Context, core: ProxyCore): Promise<Response> {
  const t0 = performance.now();
  const { raw, body } = await readJsonObject(c.req.raw, core.config.max_body_bytes);
  const model = readModel(body);
  const stream = body.stream === true;
  const { routes, payloads } = plan(core.routes(model, WIRES.any), body, raw);
  const committed = await core.dispatch(
    { routes, stream, payloads, clientHeaders: c.req.raw.headers, client: c.req.raw, route: "/v1/messages" },
    model,
    t0,
  );
  const committedAt = performance.now();
  const headers: Record<string, string> = {};
  passedResponseHeaders(committed.response.headers, headers);
  core.reportDropped(committed, headers, model);
  const overhead = () => committed.sentAt - t0 + (performance.now() - committedAt);
  const textPlan =
    committed.wire === "chat"
      ? toolCallTextPlan(committed.provider.config, committed.upstreamModel, payloads.chat?.object.tools)
      : undefined;
  if (committed.kind === "json") {
    const message = committed.wire === "anthropic" ? committed.body : answerAsMessage(committed, model, body, textPlan);
    reportToolCallText(core, committed, model, textPlan, headers);
    record(core, committed, model, t0, "ok", undefined, message.usage as AnthropicUsage | undefined);
    headers["content-type"] = "application/json";
    const text = committed.wire === "anthropic" ? committed.text : JSON.stringify(message);
    return new Response(text, { status: 200, headers: agentdHeaders(committed.provider.name, overhead(), headers) });
  }
  const ttftMs = committedAt - t0;
  const done = (outcome: "ok" | "error" | "client_gone", usage: AnthropicUsage | undefined) => {
    reportToolCallText(core, committed, model, textPlan);
    record(core, committed, model, t0, outcome, ttftMs, usage);
  };
  const shape =
    committed.wire === "anthropic"
      ? anthropicPassthroughShape(done)
      : translatedShape(committed, model, responsesStop(committed, body), done, textPlan);
  headers["content-type"] = "text/event-stream";
  headers["cache-control"] = "no-cache";
  const body$ = relayStream(committed, shape, (failure) =>
    core.noteFailure(committed.provider, failure, committed.upstreamModel, committed.attempts),
  );
  return new Response(body$, { status: 200, headers: agentdHeaders(committed.provider.name, overhead(), headers) });
}

/**
 * POST /v1/messages/count_tokens: when the model's first provider speaks Anthropic's wire it counts
 * (with failover among such providers); otherwise agentd counts the chat request it would send,
 * with the o200k_base tokenizer, as /v1/responses/input_tokens does.
 */
export async function handleCountTokens(c: Context, core: ProxyCore): Promise<Response> {
  const t0 = performance.now();
  const { body } = await readJsonObject(c.req.raw, core.config.max_body_bytes);
  const model = readModel(body);
  const routes = core.routes(model, WIRES.any);
  if (routes[0]!.provider.config.wire === "anthropic") {
    const onAnthropic = routes.filter((r) => r.provider.config.wire === "anthropic");
    return passThrough(c, core, COUNT_TOKENS, { object: withoutAgentdThinking(body) }, onAnthropic, t0);
  }
  const { stream: _stream, ...request } = body;
  return c.json({ input_tokens: await countChatInputTokens(anthropicToChat(request, [])) });
}

/** The body as it came for Anthropic upstreams; a chat translation, and from it a Responses one, only when one may be tried. */
function plan(routes: Route<ProviderRuntime>[], body: Json, raw: string): { routes: Route<ProviderRuntime>[]; payloads: Payloads } {
  const wires = new Set(routes.map((r) => r.provider.config.wire));
  const payloads: Payloads = {};
  if (wires.has("anthropic")) {
    const sent = withoutAgentdThinking(body);
    payloads.anthropic = sent === body ? { object: body, raw } : { object: sent };
  }
  if (!wires.has("chat") && !wires.has("responses")) return { routes, payloads };
  const dropped: string[] = [];
  const chat = anthropicToChat(body, dropped);
  if (wires.has("chat")) payloads.chat = { object: chat, dropped };
  if (!wires.has("responses")) return { routes, payloads };
  try {
    const responsesDropped = [...dropped];
    // Thinking the client asked for comes back from a Responses upstream only as a summary.
    const responses = chatToResponsesRequest(chat, responsesDropped, { reasoningSummary: true });
    payloads.responses = { object: responses, dropped: responsesDropped };
    return { routes, payloads };
  } catch (error) {
    // Another wire may still take what the Responses API cannot express.
    if (wires.size === 1) throw error;
    return { routes: routes.filter((r) => r.provider.config.wire !== "responses"), payloads };
  }
}

/** The Responses API has no stop sequences: agentd cuts the answer at the first one, as on the chat route. */
function responsesStop(committed: Committed, body: Json): string[] {
  return committed.wire === "responses" && Array.isArray(body.stop_sequences) ? stopSequences({ stop: body.stop_sequences }) : [];
}

function answerAsMessage(
  committed: Extract<Committed, { kind: "json" }>,
  model: string,
  body: Json,
  textPlan: ToolCallTextPlan | undefined,
): Json {
  if (committed.wire === "responses")
    return chatToAnthropicMessage(responseToChatCompletion(committed.body, model, responsesStop(committed, body)), model);
  return chatToAnthropicMessage(textPlan ? toolCallTextInCompletion(committed.body, textPlan) : committed.body, model);
}

function record(
  core: ProxyCore,
  committed: Committed,
  model: string,
  t0: number,
  outcome: "ok" | "error" | "client_gone",
  ttftMs: number | undefined,
  usage: AnthropicUsage | undefined,
): void {
  core.recorder.record({
    provider: committed.provider,
    model,
    outcome,
    status: 200,
    ttftMs,
    totalMs: performance.now() - t0,
    tokensIn: usage?.input_tokens ?? 0,
    tokensOut: usage?.output_tokens ?? 0,
    attempts: committed.attempts,
    trace: core.traceOf(committed),
  });
}
