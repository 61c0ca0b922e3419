import type { Server, ServerWebSocket } from "bun";
import type { Context, Hono } from "hono";
import { errorBody } from "../../core/errors/index.ts";
import type { Logger } from "../../core/log/index.ts";
import { runInBackground } from "../../core/process/index.ts";
import { SseDecoder } from "../upstream/sseDecoder.ts";
import { invalidRequest, ProxyError } from "../upstream/proxyError.ts";
import type { ProxyCore } from "../state/proxyCore.ts";
import { SocketConversation, socketErrorEvent, type SocketStep } from "./socketConversation.ts";
import type { SocketSession } from "./socketSession.ts";

type Json = Record<string, unknown>;
type Socket = ServerWebSocket<SocketSession>;

const INTERNAL_ERROR = JSON.stringify({
  error: {
    type: "server_error",
    code: "internal_error",
    message: "agentd could not answer this frame (its log has the cause)",
    param: null,
  },
});
const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);
/** The upgrade's own headers, which mean nothing on the requests made for its frames. */
const NOT_PASSED = new Set(["upgrade", "connection", "content-length", "content-type", "host"]);

export interface ResponsesSocketOptions {
  /** Runs POST /v1/responses through the proxy's routes: the same routing, failover, translation and records as HTTP. */
  post: (request: Request) => Response | Promise<Response>;
  /** The upgrade request's headers (the client's key, its identity), sent with every frame's request. */
  headers: Headers;
  maxFrameBytes: number;
  logger: Logger;
}

/**
 * GET /v1/responses upgraded: the Responses API over a WebSocket, as Codex's built-in provider speaks
 * it. Each `response.create` frame is one POST /v1/responses, streamed; each of its SSE events goes
 * back as one text frame (its JSON), an HTTP error as an `error` event carrying the status. Frames
 * are answered in order, one at a time, as one connection's requests are.
 */
export class ResponsesSocket implements SocketSession {
  readonly #conversation = new SocketConversation();
  readonly #gone = new AbortController();
  readonly #headers: Headers;
  #queue: Promise<void> = Promise.resolve();

  constructor(private readonly options: ResponsesSocketOptions) {
    this.#headers = new Headers();
    for (const [name, value] of options.headers)
      if (!NOT_PASSED.has(name) && !name.startsWith("sec-websocket-")) this.#headers.set(name, value);
    this.#headers.set("content-type", "application/json");
  }

  message(ws: Socket, data: string | Buffer): void {
    const previous = this.#queue;
    this.#queue = runInBackground(
      "proxy.socket_frame",
      async () => {
        await previous;
        if (this.#gone.signal.aborted) return;
        try {
          await this.#answer(ws, typeof data === "string" ? data : data.toString("utf8"));
        } catch (error) {
          // The client left while its request ran: nothing is owed to it.
          if (this.#gone.signal.aborted) return;
          // Never a silent socket: the client gets an error it retries on; the log gets the cause.
          this.#send(ws, socketErrorEvent(500, INTERNAL_ERROR, new Headers()));
          throw error;
        }
      },
      {},
      this.options.logger,
    ).done;
  }

  close(): void {
    // A request still running is the client's that left: the handler sees its signal and stops.
    this.#gone.abort();
  }

  async #answer(ws: Socket, text: string): Promise<void> {
    let step: SocketStep;
    try {
      if (Buffer.byteLength(text) > this.options.maxFrameBytes)
        throw new ProxyError("body_too_large", `The request body exceeds ${this.options.maxFrameBytes} bytes`);
      step = this.#conversation.step(text);
    } catch (error) {
      if (!(error instanceof ProxyError)) throw error;
      this.#send(ws, socketErrorEvent(error.status, JSON.stringify(errorBody(error)), new Headers()));
      return;
    }
    if (step.kind === "prewarm") {
      for (const event of step.events) this.#send(ws, event);
      return;
    }
    await this.#run(ws, step.body);
  }

  async #run(ws: Socket, body: Json): Promise<void> {
    const request = new Request("http://agentd/responses", {
      method: "POST",
      headers: this.#headers,
      body: JSON.stringify(body),
      signal: this.#gone.signal,
    });
    const response = await this.options.post(request);
    const streamed = (response.headers.get("content-type") ?? "").includes("text/event-stream");
    if (!response.ok || !response.body) {
      this.#conversation.settled(body, undefined);
      this.#send(ws, socketErrorEvent(response.status, await response.text(), response.headers));
    } else if (!streamed) {
      // An upstream that answered whole: its response is the one event a stream would end with.
      const whole = (await response.json()) as Json;
      this.#conversation.settled(body, whole);
      this.#send(ws, { type: "response.completed", sequence_number: 0, response: whole });
    } else this.#conversation.settled(body, await this.#relay(ws, response.body));
  }

  /** Sends each SSE event's JSON as one frame; returns the response the stream ended with. */
  async #relay(ws: Socket, body: ReadableStream<Uint8Array>): Promise<Json | undefined> {
    const decoder = new SseDecoder();
    let last: Json | undefined;
    const forward = (events: { event?: string; data: string }[]) => {
      for (const event of events) {
        if (event.data === "[DONE]") continue;
        this.#sendText(ws, event.data);
        if (event.event && TERMINAL.has(event.event)) last = (JSON.parse(event.data) as Json).response as Json;
      }
    };
    for await (const chunk of body) forward(decoder.push(chunk));
    forward(decoder.end());
    return last;
  }

  #send(ws: Socket, event: Json): void {
    this.#sendText(ws, JSON.stringify(event));
  }

  #sendText(ws: Socket, text: string): void {
    // 0: dropped, the client has not read what Bun buffered for it (backpressureLimit). A stream
    // with a hole is worse than none: the socket closes and its request is cancelled.
    if (ws.send(text) === 0 && !this.#gone.signal.aborted) {
      ws.close(1013, "the client is not reading its frames");
      this.#gone.abort();
    }
  }
}

/**
 * GET /v1/responses: the WebSocket upgrade (the request passed agentd's checks like any other).
 * Without `Upgrade: websocket` there is nothing to get here.
 */
export function upgradeResponses(c: Context, core: ProxyCore, proxy: Hono, logger: Logger): Response {
  const server = c.env as Server<SocketSession> | undefined;
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket" || typeof server?.upgrade !== "function")
    throw new ProxyError(
      "not_found",
      "GET /v1/responses is the Responses API over a WebSocket (send Upgrade: websocket); POST /v1/responses creates a response",
    );
  const session = new ResponsesSocket({
    post: (request) => proxy.fetch(request),
    headers: c.req.raw.headers,
    maxFrameBytes: core.config.max_body_bytes,
    logger,
  });
  if (!server.upgrade(c.req.raw, { data: session }))
    throw invalidRequest("The WebSocket handshake is incomplete (Sec-WebSocket-Key, Sec-WebSocket-Version 13)");
  // Bun answers the upgrade itself; this response is never sent.
  return new Response(null);
}
