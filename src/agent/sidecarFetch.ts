import { createParser } from "eventsource-parser";
import type { SidecarLevel } from "../core/config/sections/agentConfig.ts";
import { ChatChunkAccumulator } from "./chatChunkAccumulator.ts";
import type { DebugSidecar } from "./debugSidecar.ts";
import { redactHeaders } from "../core/redaction/index.ts";
import { SESSION_HEADER, takeNote, type ModelChannel } from "./sessionChannels.ts";

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

const INFO_TAIL_MESSAGES = 2;
const INFO_TEXT_CHARS = 2000;

function clip(text: string, level: SidecarLevel): string {
  return level === "full" || text.length <= INFO_TEXT_CHARS ? text : `${text.slice(0, INFO_TEXT_CHARS)}… (${text.length} chars)`;
}

/** A request's shape and newest messages, for the info level. */
export function requestSummary(
  body: { model: string; tools?: unknown[]; messages: Array<Record<string, unknown>> },
  level: SidecarLevel,
): Record<string, unknown> {
  return {
    model: body.model,
    stream: true,
    tools: body.tools?.map((t) => (t as { function?: { name?: unknown } } | null | undefined)?.function?.name),
    message_count: body.messages.length,
    last_messages: body.messages
      .slice(-INFO_TAIL_MESSAGES)
      .map((m) => ({ ...m, content: typeof m.content === "string" ? clip(m.content, level) : m.content })),
  };
}

/** At info level a request shows its shape and its newest messages; at full level the whole body. */
function describeBody(raw: string | undefined, level: SidecarLevel): unknown {
  if (raw === undefined) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return clip(raw, level);
  }
  if (level === "full" || !Array.isArray((body as { messages?: unknown } | null | undefined)?.messages)) return body;
  return requestSummary(body as Parameters<typeof requestSummary>[0], level);
}

/**
 * Wraps the fetch of the agent's one model client: every request and its response go to the
 * sidecar of the session named by its SESSION_HEADER (stripped before sending), a streamed
 * response gathered into the final message. The response reaches the SDK unchanged; the
 * gathering reads the same bytes as they pass.
 */
export function sidecarFetch(base: Fetch, level: SidecarLevel, channelOf: (sessionId: string) => ModelChannel | undefined): Fetch {
  let sequence = 0;
  return async (input, rawInit) => {
    const headers = new Headers(rawInit?.headers);
    const sessionId = headers.get(SESSION_HEADER);
    if (sessionId === null) return base(input, rawInit);
    headers.delete(SESSION_HEADER);
    const init: RequestInit = { ...rawInit, headers };
    const channel = channelOf(sessionId);
    const sidecar = channel?.sidecar;
    if (!channel || !sidecar) return base(input, init);
    const request = ++sequence;
    const started = performance.now();
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const rawBody = typeof init.body === "string" ? init.body : undefined;
    sidecar.write("model.request", {
      request,
      method: init.method ?? "GET",
      url,
      headers: redactHeaders(headers),
      body: (level === "info" ? takeNote(channel) : undefined) ?? describeBody(rawBody, level),
    });
    let response: Response;
    try {
      response = await base(input, init);
    } catch (error) {
      sidecar.write("model.error", { request, duration_ms: elapsed(started), error: (error as Error).message ?? String(error) });
      throw error;
    }
    const head = { request, status: response.status, headers: redactHeaders(response.headers) };
    const contentType = response.headers.get("content-type") ?? "";
    if (!response.body || !contentType.includes("text/event-stream")) {
      response
        .clone()
        .text()
        .then(
          (text) => sidecar.write("model.response", { ...head, duration_ms: elapsed(started), body: describeBody(text, "full") }),
          (error) => sidecar.write("model.error", { request, duration_ms: elapsed(started), error: (error as Error).message }),
        );
      return response;
    }
    return new Response(response.body.pipeThrough(gatherStream(sidecar, head, started, level, init.signal ?? undefined)), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 100) / 100;
}

function gatherStream(
  sidecar: DebugSidecar,
  head: Record<string, unknown>,
  started: number,
  level: SidecarLevel,
  signal: AbortSignal | undefined,
): TransformStream<Uint8Array, Uint8Array> {
  const accumulator = new ChatChunkAccumulator();
  const raw: string[] = [];
  const decoder = new TextDecoder();
  let done = false;
  const finish = (extra: Record<string, unknown>) => {
    if (done) return;
    done = true;
    const message = accumulator.result();
    sidecar.write("model.response", {
      ...head,
      duration_ms: elapsed(started),
      stream: true,
      message,
      ...(level === "full" ? { events: raw } : {}),
      ...extra,
    });
  };
  const parser = createParser({
    onEvent(event) {
      // The record is rendered later, in the sidecar's drain: what it holds must not change after finish.
      if (done) return;
      if (level === "full") raw.push(event.data);
      if (event.data === "[DONE]") return;
      try {
        accumulator.add(JSON.parse(event.data));
      } catch {
        raw.push(`unparsable: ${event.data.slice(0, 200)}`);
      }
    },
  });
  signal?.addEventListener("abort", () => finish({ aborted: true }), { once: true });
  return new TransformStream({
    transform(chunk, controller) {
      controller.enqueue(chunk);
      parser.feed(decoder.decode(chunk, { stream: true }));
    },
    flush() {
      finish({});
    },
  });
}
