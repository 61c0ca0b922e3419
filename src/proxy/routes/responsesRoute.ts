import type { Context } from "hono";
import { chatCompletionToResponse } from "../translate/chatToResponse.ts";
import {
  ChatStreamToResponses,
  frameResponsesEvent,
  type ResponsesEvent,
  streamErrorFields,
} from "../translate/chatStreamToResponsesEvents.ts";
import { type Committed, WIRES, type WirePayload } from "../upstream/dispatcher.ts";
import type { ProxyCore } from "../state/proxyCore.ts";
import { relayStream, type RelayShape } from "../upstream/relayStream.ts";
import { agentdHeaders, readJsonObject } from "./requestBody.ts";
import { buildResponse, newShell, type ResponseShell } from "../translate/responseObject.ts";
import { fullyResolved, inlineConversation, readResponsesInput } from "./responsesInput.ts";
import { responsesToChat } from "../translate/responsesToChat.ts";
import { ToolCallTextChunks, toolCallTextInCompletion } from "../translate/toolCallTextChunks.ts";
import { toolCallTextPlan, type ToolCallTextPlan } from "../translate/toolCallTextSetup.ts";
import { reportToolCallText } from "./toolCallTextReport.ts";
import { assertResponsesToolNames } from "../translate/toolNames.ts";
import { UpstreamFailure } from "../upstream/upstreamFailure.ts";
import { anthropicToChatCompletion, AnthropicStreamToChat } from "../translate/anthropicToChatAnswer.ts";
import { chatToAnthropic } from "../translate/chatToAnthropic.ts";
import { passedResponseHeaders } from "../upstream/upstreamHeaders.ts";
import { asksForCompaction } from "../translate/compaction.ts";
import { compactThroughChat } from "./compactionTurn.ts";
import { finishTurn, type Turn } from "./responsesTurn.ts";

type Json = Record<string, unknown>;
type StreamCommitted = Extract<Committed, { kind: "stream" }>;

const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);

/**
 * POST /v1/responses: translated to Chat Completions for chat upstreams, passed through to
 * Responses upstreams. previous_response_id is resolved here, from the proxy's own store, for both.
 */
export async function handleResponses(c: Context, core: ProxyCore): Promise<Response> {
  const t0 = performance.now();
  const { raw, body } = await readJsonObject(c.req.raw, core.config.max_body_bytes);
  const read = readResponsesInput(core, body);
  assertResponsesToolNames(body.tools);
  const { model, earlier, resolved } = read;
  let routes = core.routes(model, WIRES.any);
  if (asksForCompaction(resolved)) {
    // A Responses provider compacts natively; without one, the chat model writes the summary.
    const native = routes.filter((r) => r.provider.config.wire === "responses");
    if (native.length === 0) return compactThroughChat(c.req.raw, core, body, read, routes, t0);
    routes = native;
  }
  const payloads: { chat?: WirePayload; responses?: WirePayload; anthropic?: WirePayload } = {};
  if (routes.some((r) => r.provider.config.wire !== "responses")) {
    try {
      const dropped: string[] = [];
      const request = { ...body, input: fullyResolved(core, read) };
      const chat = responsesToChat(request, earlier, dropped);
      if (routes.some((r) => r.provider.config.wire === "chat")) payloads.chat = { object: chat, dropped };
      // Anthropic upstreams get the chat translation translated once more.
      if (routes.some((r) => r.provider.config.wire === "anthropic")) {
        const viaChat = [...dropped];
        payloads.anthropic = { object: chatToAnthropic(chat, viaChat), dropped: viaChat };
      }
    } catch (error) {
      // A Responses upstream may still take what Chat Completions cannot express.
      if (!routes.some((r) => r.provider.config.wire === "responses")) throw error;
      routes = routes.filter((r) => r.provider.config.wire === "responses");
    }
  }
  if (routes.some((r) => r.provider.config.wire === "responses")) {
    const inline = inlineConversation(body, read);
    payloads.responses = inline ? { object: inline } : { object: body, raw };
  }
  const stream = body.stream === true;
  const committed = await core.dispatch(
    { routes, stream, payloads, clientHeaders: c.req.raw.headers, client: c.req.raw, route: "/v1/responses" },
    model,
    t0,
  );
  const committedAt = performance.now();
  const turn: Turn = { core, model, t0, history: [...earlier, ...resolved], store: body.store !== false };
  const headers: Record<string, string> = {};
  passedResponseHeaders(committed.response.headers, headers);
  core.reportDropped(committed, headers, model);
  const overhead = () => committed.sentAt - t0 + (performance.now() - committedAt);
  const textPlan =
    committed.wire === "chat"
      ? toolCallTextPlan(committed.provider.config, committed.upstreamModel, payloads.chat?.object.tools)
      : undefined;
  if (committed.kind === "json") {
    const translated = committed.wire !== "responses";
    const completion = committed.wire === "anthropic" ? anthropicToChatCompletion(committed.body, model) : committed.body;
    const response = translated ? translateWhole(completion, newShell(body), textPlan) : committed.body;
    reportToolCallText(core, committed, model, textPlan, headers);
    finishTurn(turn, committed, response, undefined);
    headers["content-type"] = "application/json";
    return new Response(translated ? JSON.stringify(response) : committed.text, {
      status: 200,
      headers: agentdHeaders(committed.provider.name, overhead(), headers),
    });
  }
  const ttftMs = committedAt - t0;
  const shape =
    committed.wire === "responses"
      ? passthroughShape(turn, committed, ttftMs)
      : translatedShape(turn, committed, newShell(body), ttftMs, textPlan);
  headers["content-type"] = "text/event-stream";
  headers["cache-control"] = "no-cache";
  const stream$ = relayStream(committed, shape, (failure) =>
    core.noteFailure(committed.provider, failure, committed.upstreamModel, committed.attempts),
  );
  return new Response(stream$, { status: 200, headers: agentdHeaders(committed.provider.name, overhead(), headers) });
}

function translateWhole(completion: Json, shell: ResponseShell, textPlan: ToolCallTextPlan | undefined): Json {
  return chatCompletionToResponse(textPlan ? toolCallTextInCompletion(completion, textPlan) : completion, shell);
}

function frames(events: readonly ResponsesEvent[]): string {
  let out = "";
  for (const event of events) out += frameResponsesEvent(event);
  return out;
}

function failureCode(failure: UpstreamFailure): string {
  return failure.kind.endsWith("timeout") ? "upstream_timeout" : "upstream_error";
}

function translatedShape(
  turn: Turn,
  committed: StreamCommitted,
  shell: ResponseShell,
  ttftMs: number,
  textPlan: ToolCallTextPlan | undefined,
): RelayShape {
  const translator = new ChatStreamToResponses(shell);
  const rewriter = textPlan ? new ToolCallTextChunks(textPlan) : undefined;
  // An Anthropic upstream's events become chat chunks first; its answer ends at message_stop.
  const fromAnthropic = committed.wire === "anthropic" ? new AnthropicStreamToChat(turn.model, true) : undefined;
  let finished = false;
  let response: Json | undefined;
  const complete = () => {
    const extra = rewriter ? rewriter.end().flatMap((chunk) => translator.push(chunk)) : [];
    const end = translator.finish();
    response = end.response;
    return frames([...extra, ...end.events]);
  };
  return {
    opening: () => frames(translator.start()),
    event(event, data) {
      if (fromAnthropic) {
        if (data === "[DONE]")
          throw new UpstreamFailure("reset", "the upstream stream ended before the answer was complete", { status: 200 });
        const out = fromAnthropic.push(data.type === undefined && event.event ? { ...data, type: event.event } : data);
        const body = frames(out.chunks.flatMap((chunk) => translator.push(chunk)));
        return out.end ? { frames: body + complete(), end: true } : { frames: body, end: false };
      }
      if (data === "[DONE]") return { frames: complete(), end: true };
      if ((data.choices as Json[] | undefined)?.[0]?.finish_reason) finished = true;
      const chunks = rewriter ? rewriter.push(data) : [data];
      return { frames: frames(chunks.flatMap((chunk) => translator.push(chunk))), end: false };
    },
    endedEarly() {
      if (!finished || fromAnthropic)
        throw new UpstreamFailure("reset", "the upstream stream ended before the answer was complete", { status: 200 });
      return complete();
    },
    failed: (failure) =>
      frames(translator.fail(failureCode(failure), `The upstream stream failed after it began (${failure.kind}): ${failure.message}`)),
    done: (outcome) => {
      reportToolCallText(turn.core, committed, turn.model, textPlan);
      finishTurn(turn, committed, response, ttftMs, outcome);
    },
  };
}

function passthroughShape(turn: Turn, committed: StreamCommitted, ttftMs: number): RelayShape {
  let created: Json | undefined;
  let response: Json | undefined;
  let lastSequence = 0;
  return {
    opening: () => "",
    event(event, data) {
      if (data === "[DONE]") return { frames: "", end: true };
      const type = String(data.type ?? event.event ?? "");
      if (typeof data.sequence_number === "number") lastSequence = data.sequence_number;
      if (type === "response.created") created = data.response as Json;
      const terminal = TERMINAL.has(type);
      if (terminal) response = data.response as Json;
      return { frames: `event: ${type}\ndata: ${event.data}\n\n`, end: terminal };
    },
    endedEarly() {
      throw new UpstreamFailure("reset", "the upstream stream ended before the response completed", { status: 200 });
    },
    failed(failure) {
      const shell = newShell({ model: turn.model });
      const failed = {
        ...(created ?? buildResponse(shell, { status: "failed", output: [] })),
        status: "failed",
        error: { code: failureCode(failure), message: `The upstream stream failed after it began (${failure.kind}): ${failure.message}` },
      };
      return (
        frameResponsesEvent({ type: "response.failed", sequence_number: lastSequence + 1, response: failed }) +
        frameResponsesEvent({
          type: "error",
          sequence_number: lastSequence + 2,
          ...streamErrorFields(failed.error.code, failed.error.message),
        })
      );
    },
    done: (outcome) => finishTurn(turn, committed, response, ttftMs, outcome),
  };
}
