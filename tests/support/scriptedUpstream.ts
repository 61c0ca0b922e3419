/**
 * A scripted OpenAI-compatible upstream for tests: a real HTTP server (Bun.serve, 127.0.0.1, port 0)
 * that answers `POST …/chat/completions`, `POST …/responses` and `GET …/models` from a queue of
 * scripted replies, and records every request it got (and whether the client went away).
 *
 *   const up = startScriptedUpstream({ models: ["gpt-test"] });
 *   up.enqueue({ kind: "http_error", status: 429, headers: { "retry-after": "1" } }, { kind: "text", text: "hi" });
 *   // point a client at up.url ("http://127.0.0.1:PORT/v1")
 *   await up.waitForRequests(2);
 *   up.requests[1].body.messages …
 *   await up.close();
 *
 * Each request takes the next queued reply; when the queue is empty the default reply
 * (`{kind: "text", text: "ok"}` unless `setDefault` changed it) answers. A reply shapes itself to the
 * request: streamed (SSE) when the body says `stream: true`, one JSON object otherwise; Chat
 * Completions, Responses, legacy completions, embeddings, input token counts or compactions by path. `wires: ["chat"]` makes a
 * chat-only upstream (its /responses answers 404, as such providers do); `wires: ["anthropic"]` an
 * Anthropic Messages upstream (`POST …/messages`, `…/messages/count_tokens`, errors in Anthropic's shape).
 */

import type { ScriptedAnswer } from "./scriptedAnswer.ts";
import { anthropicBody, anthropicStreamEvents } from "./scriptedAnthropicReplies.ts";
import { chatBody, chatStreamEvents } from "./scriptedChatReplies.ts";
import { compactionBody, completionsBody, completionsStreamEvents, embeddingsBody } from "./scriptedOtherEndpoints.ts";
import { responsesBody, responsesStreamEvents } from "./scriptedResponsesReplies.ts";
import { strictOpenAiRefusal } from "./strictOpenAiRules.ts";

export interface UsageScript {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface ToolCallScript {
  /** Defaults to `call_<n>`. */
  id?: string;
  name: string;
  /** The arguments JSON text, as the model would write it. */
  arguments: string;
  /** Responses only: the tool namespace the call names (Codex serves MCP tools as namespace "mcp__<server>"). */
  namespace?: string;
}

/** A normal answer: text (split into `chunks` when streamed) and/or tool calls. */
export interface AnswerReply {
  kind: "text";
  text?: string;
  /** Stream the text in these pieces instead of one; their concatenation is the text. */
  chunks?: string[];
  toolCalls?: ToolCallScript[];
  /**
   * Reasoning before the answer (streamed in two halves): `reasoning_content` (or `reasoningField`)
   * for chat, a reasoning item with `reasoning_text` for Responses.
   */
  reasoning?: string;
  /** The chat field the reasoning goes in; default "reasoning_content". */
  reasoningField?: "reasoning_content" | "reasoning";
  usage?: UsageScript;
  /** Chat finish_reason; for Responses, "length" makes the response incomplete (max_output_tokens). */
  finishReason?: string;
  /** Wait this long between streamed events (default 0). */
  chunkDelayMs?: number;
  /** SSE comment lines (`: keep-alive`) to interleave before every event. */
  keepAlives?: boolean;
  /** Use CRLF line ends in the SSE stream. */
  crlf?: boolean;
  /** Chat streams: interleave the calls' argument deltas (call 0, call 1, call 0, …) as some providers do. */
  interleaveCalls?: boolean;
  /** Give each text piece a logprob (chat `logprobs.content`, Responses `output_text` logprobs). */
  logprobs?: boolean;
  /** Extra response headers (rate-limit state, vendor headers, cookies). */
  headers?: Record<string, string>;
}

export type Reply =
  | AnswerReply
  /** An HTTP error with an OpenAI-shaped body (or `body` verbatim) and extra headers such as Retry-After. */
  | { kind: "http_error"; status: number; headers?: Record<string, string>; body?: string; message?: string }
  /** Send nothing at all (not even headers) for `ms` (default: until the client disconnects), then `then` (default: text "ok"). */
  | { kind: "stall_before_first_byte"; ms?: number; then?: AnswerReply }
  /** Stream the first `afterEvents` events of `reply`, then stall until the client disconnects. */
  | { kind: "stall_mid_stream"; afterEvents: number; reply: AnswerReply }
  /** Stream the first `afterEvents` events of `reply`, then drop the connection without ending the body. */
  | { kind: "reset_mid_stream"; afterEvents: number; reply: AnswerReply }
  /** Stream the first `afterEvents` events of `reply`, then a `data:` line that is not JSON, then the rest. */
  | { kind: "malformed_chunk"; afterEvents: number; reply: AnswerReply }
  /** Answer with this status and raw body (any content type). */
  | { kind: "raw"; status: number; body: string; headers?: Record<string, string> };

export interface RecordedRequest {
  method: string;
  /** Path without the query, e.g. "/v1/chat/completions". */
  path: string;
  headers: Record<string, string>;
  rawBody: string;
  /** The parsed JSON body, or undefined when it was not JSON. */
  body: any;
  /** Set once the client closed the connection before the reply ended. */
  disconnected: boolean;
  /** Set once the whole reply was sent. */
  finished: boolean;
}

export interface ScriptedUpstreamOptions {
  /** Returned by GET /models; default ["gpt-test"]. */
  models?: string[];
  /** The completion APIs served; default both. A chat-only upstream answers 404 on /responses. */
  wires?: ("chat" | "responses" | "anthropic")[];
  /** Path prefix the endpoints live under; default "/v1". */
  basePath?: string;
  /** Refuse what OpenAI's API refuses (strictOpenAiRules.ts) before the scripted reply, as OpenAI does. */
  strict?: boolean;
}

export interface ScriptedUpstream {
  /** Base URL including the prefix, e.g. "http://127.0.0.1:41234/v1". */
  readonly url: string;
  readonly port: number;
  /** Every request received, in arrival order (GET /models included). */
  readonly requests: RecordedRequest[];
  /** Requests to chat/completions or responses only. */
  completionRequests(): RecordedRequest[];
  /** Queues replies for the next requests, in order. */
  enqueue(...replies: Reply[]): void;
  /** The reply used when the queue is empty. */
  setDefault(reply: Reply): void;
  /** Replies still queued. */
  pending(): number;
  /** Resolves once at least `count` completion requests have arrived; rejects after `timeoutMs`. */
  waitForRequests(count: number, timeoutMs?: number): Promise<void>;
  /** Resolves once the completion request at `index` saw its client disconnect; rejects after `timeoutMs`. */
  waitForDisconnect(index: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const encoder = new TextEncoder();

export function startScriptedUpstream(options: ScriptedUpstreamOptions = {}): ScriptedUpstream {
  const models = options.models ?? ["gpt-test"];
  const wires = options.wires ?? ["chat", "responses"];
  const basePath = options.basePath ?? "/v1";
  const queue: Reply[] = [];
  let fallback: Reply = { kind: "text", text: "ok" };
  const requests: RecordedRequest[] = [];
  const waiters = new Set<() => void>();
  let counter = 0;
  const notify = () => {
    for (const waiter of [...waiters]) waiter();
  };

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    // Errors thrown into a stream on purpose (resets) are expected; keep them out of the test output.
    error: () => new Response("scripted upstream error", { status: 500 }),
    async fetch(req) {
      const url = new URL(req.url);
      const rawBody = await req.text();
      let body: any;
      try {
        body = rawBody ? JSON.parse(rawBody) : undefined;
      } catch {
        body = undefined;
      }
      const record: RecordedRequest = {
        method: req.method,
        path: url.pathname,
        headers: Object.fromEntries(req.headers),
        rawBody,
        body,
        disconnected: false,
        finished: false,
      };
      requests.push(record);
      req.signal.addEventListener("abort", () => {
        if (!record.finished) record.disconnected = true;
        notify();
      });
      notify();
      if (req.method === "GET" && url.pathname === `${basePath}/models`) {
        record.finished = true;
        return Response.json({ object: "list", data: models.map((id) => ({ id, object: "model", created: 0, owned_by: "scripted" })) });
      }
      const api = API_PATHS[url.pathname.slice(basePath.length)];
      if (req.method !== "POST" || !api || (api !== "completions" && api !== "embeddings" && !wires.includes(wireOf(api)))) {
        record.finished = true;
        return Response.json(
          { error: { message: `no route ${req.method} ${url.pathname}`, type: "invalid_request_error" } },
          { status: 404 },
        );
      }
      const refusal = options.strict ? strictOpenAiRefusal(api, body) : undefined;
      if (refusal) {
        record.finished = true;
        return refusal;
      }
      const reply = queue.shift() ?? fallback;
      const context: ReplyContext = {
        api,
        strict: options.strict === true,
        stream: body?.stream === true,
        model: String(body?.model ?? "gpt-test"),
        record,
        seq: ++counter,
        signal: req.signal,
      };
      return answer(reply, context);
    },
  });

  const port = server.port as number;
  const completionRequests = () => requests.filter((r) => r.method === "POST");

  const waitFor = (predicate: () => boolean, timeoutMs: number, what: string) =>
    new Promise<void>((resolve, reject) => {
      if (predicate()) return resolve();
      const check = () => {
        if (!predicate()) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`scripted upstream: timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      waiters.add(check);
    });

  return {
    url: `http://127.0.0.1:${port}${basePath}`,
    port,
    requests,
    completionRequests,
    enqueue: (...replies) => void queue.push(...replies),
    setDefault: (reply) => {
      fallback = reply;
    },
    pending: () => queue.length,
    waitForRequests: (count, timeoutMs = 5000) => waitFor(() => completionRequests().length >= count, timeoutMs, `${count} requests`),
    waitForDisconnect: (index, timeoutMs = 5000) =>
      waitFor(() => completionRequests()[index]?.disconnected === true, timeoutMs, `a disconnect on request #${index}`),
    close: async () => {
      await server.stop(true);
    },
  };
}

const API_PATHS: Record<string, Api | undefined> = {
  "/chat/completions": "chat",
  "/responses": "responses",
  "/completions": "completions",
  "/embeddings": "embeddings",
  "/responses/input_tokens": "input_tokens",
  "/responses/compact": "compact",
  "/messages": "anthropic",
  "/messages/count_tokens": "count_tokens",
};

type Api = "chat" | "responses" | "completions" | "embeddings" | "input_tokens" | "compact" | "anthropic" | "count_tokens";

function wireOf(api: Api): "chat" | "responses" | "anthropic" {
  if (api === "chat") return "chat";
  return api === "anthropic" || api === "count_tokens" ? "anthropic" : "responses";
}

interface ReplyContext {
  api: Api;
  strict: boolean;
  stream: boolean;
  model: string;
  record: RecordedRequest;
  seq: number;
  signal: AbortSignal;
}

function answer(reply: Reply, ctx: ReplyContext): Response | Promise<Response> {
  switch (reply.kind) {
    case "text":
      return ctx.stream
        ? streamed(reply, ctx, {})
        : finished(ctx, Response.json(completeBody(reply, ctx), { headers: reply.headers ?? {} }));
    case "http_error": {
      const message = reply.message ?? `scripted ${reply.status}`;
      const body =
        reply.body ??
        JSON.stringify(
          wireOf(ctx.api) === "anthropic"
            ? { type: "error", error: { type: reply.status === 429 ? "rate_limit_error" : "api_error", message } }
            : { error: { message, type: "server_error", code: null } },
        );
      return finished(ctx, new Response(body, { status: reply.status, headers: { "content-type": "application/json", ...reply.headers } }));
    }
    case "raw":
      return finished(ctx, new Response(reply.body, { status: reply.status, headers: reply.headers }));
    case "stall_before_first_byte":
      return stallThen(reply.ms, reply.then ?? { kind: "text", text: "ok" }, ctx);
    case "stall_mid_stream":
      return streamed(reply.reply, ctx, { after: reply.afterEvents, afterwards: "stall" });
    case "reset_mid_stream":
      return streamed(reply.reply, ctx, { after: reply.afterEvents, afterwards: "reset" });
    case "malformed_chunk":
      return streamed(reply.reply, ctx, { after: reply.afterEvents, afterwards: "malformed" });
  }
}

function finished(ctx: ReplyContext, response: Response): Response {
  ctx.record.finished = true;
  return response;
}

async function stallThen(ms: number | undefined, then: AnswerReply, ctx: ReplyContext): Promise<Response> {
  await new Promise<void>((resolve) => {
    if (ctx.signal.aborted) return resolve();
    const timer = ms === undefined ? undefined : setTimeout(resolve, ms);
    ctx.signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
  if (ctx.signal.aborted) return new Response(null, { status: 499 });
  return answer(then, ctx);
}

/** The reply resolved for this request: what both wire shapes build from. */
function resolve(reply: AnswerReply, ctx: ReplyContext): ScriptedAnswer {
  return {
    seq: ctx.seq,
    model: ctx.model,
    text: reply.text ?? reply.chunks?.join("") ?? "",
    pieces: reply.chunks ?? (reply.text ? [reply.text] : []),
    calls: (reply.toolCalls ?? []).map((call, i) => ({
      id: call.id ?? `call_${i + 1}`,
      name: call.name,
      arguments: call.arguments,
      ...(call.namespace ? { namespace: call.namespace } : {}),
    })),
    reasoning: reply.reasoning,
    reasoningField: reply.reasoningField ?? "reasoning_content",
    ...(ctx.strict ? { reasoningAs: ctx.record.body?.reasoning?.summary ? ("summary" as const) : ("none" as const) } : {}),
    usage: reply.usage ?? { prompt_tokens: 5, completion_tokens: 3 },
    finishReason: reply.finishReason,
    interleaveCalls: reply.interleaveCalls === true,
    logprobs: reply.logprobs === true,
  };
}

function completeBody(reply: AnswerReply, ctx: ReplyContext): unknown {
  const answer = resolve(reply, ctx);
  if (ctx.api === "embeddings") return embeddingsBody(answer, ctx.record.body?.input);
  if (ctx.api === "completions") return completionsBody(answer);
  if (ctx.api === "input_tokens") return { object: "response.input_tokens", input_tokens: answer.usage.prompt_tokens };
  if (ctx.api === "compact") return compactionBody(answer);
  if (ctx.api === "count_tokens") return { input_tokens: answer.usage.prompt_tokens };
  if (ctx.api === "anthropic") return anthropicBody(answer);
  return ctx.api === "responses" ? responsesBody(answer) : chatBody(answer);
}

/** The SSE events of an answer, each already framed as `data: …` (and `event: …` for Responses). */
function streamEvents(reply: AnswerReply, ctx: ReplyContext): string[] {
  const answer = resolve(reply, ctx);
  if (ctx.api === "completions") return completionsStreamEvents(answer);
  if (ctx.api === "anthropic") return anthropicStreamEvents(answer);
  return ctx.api === "responses" ? responsesStreamEvents(answer) : chatStreamEvents(answer);
}

interface Fault {
  after?: number;
  afterwards?: "stall" | "reset" | "malformed";
}

function streamed(reply: AnswerReply, ctx: ReplyContext, fault: Fault): Response {
  let events = streamEvents(reply, ctx);
  if (reply.keepAlives) events = events.map((event) => `: keep-alive\n\n${event}`);
  if (reply.crlf) events = events.map((event) => event.replace(/\n/g, "\r\n"));
  let index = 0;
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (reply.chunkDelayMs && index > 0) await Bun.sleep(reply.chunkDelayMs);
      if (fault.after !== undefined && index === fault.after) {
        if (fault.afterwards === "stall") {
          await new Promise<void>((resolve) => (ctx.signal.aborted ? resolve() : ctx.signal.addEventListener("abort", () => resolve())));
          controller.close();
          return;
        }
        if (fault.afterwards === "reset") {
          controller.error(new Error("scripted connection reset"));
          return;
        }
        if (fault.afterwards === "malformed") {
          fault.after = undefined;
          controller.enqueue(encoder.encode('data: {"id": "chatcmpl-broken", "choices": [\n\n'));
          return;
        }
      }
      const event = events[index++];
      if (event === undefined) {
        ctx.record.finished = true;
        controller.close();
        return;
      }
      controller.enqueue(encoder.encode(event));
    },
  });
  return new Response(stream, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache", ...reply.headers } });
}
