import type { AnswerHeaders } from "./upstreamAnswer.ts";

/**
 * Which client headers reach the upstream. An allow-list by pattern, so hop-by-hop headers
 * (connection, keep-alive, transfer-encoding, te, trailer, upgrade, proxy-*), the client's own
 * Authorization (agentd's token must never leak upstream), cookies and host never do, while client
 * identity, session and tracing headers pass (Codex keys its prompt cache and traces on them).
 */
const PASSED_EXACT = new Set([
  "user-agent",
  "x-request-id",
  "x-client-request-id",
  "openai-beta",
  "openai-organization",
  "openai-project",
  "originator",
  "session_id",
  "session-id",
  "thread_id",
  "thread-id",
  "conversation_id",
  "conversation-id",
  "traceparent",
  "tracestate",
  "baggage",
  "accept-language",
]);
const PASSED_PREFIXES = ["x-stainless-", "x-codex-"];

function isPassed(name: string): boolean {
  if (PASSED_EXACT.has(name)) return true;
  for (const prefix of PASSED_PREFIXES) if (name.startsWith(prefix)) return true;
  return false;
}

/** The Messages API version agentd's translations are written against. */
const ANTHROPIC_VERSION = "2023-06-01";

export function upstreamRequestHeaders(
  client: Headers,
  apiKey: string | undefined,
  stream: boolean,
  wire: "chat" | "responses" | "anthropic" = "chat",
): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: stream ? "text/event-stream" : "application/json",
  };
  client.forEach((value, name) => {
    if (isPassed(name)) headers[name] = value;
  });
  if (wire === "anthropic") {
    // Anthropic's own headers only matter to an Anthropic upstream; its key goes in x-api-key.
    headers["anthropic-version"] = client.get("anthropic-version") ?? ANTHROPIC_VERSION;
    const beta = client.get("anthropic-beta");
    if (beta) headers["anthropic-beta"] = beta;
    if (apiKey) headers["x-api-key"] = apiKey;
    return headers;
  }
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  return headers;
}

/**
 * Upstream response headers that never reach the client: hop-by-hop ones, cookies (the upstream's
 * session is not the client's), and those that describe the upstream's own body or connection,
 * which agentd re-frames (length, encoding, type) or which Bun sets itself (date).
 */
const HELD_BACK = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "trailers",
  "transfer-encoding",
  "upgrade",
  "set-cookie",
  "set-cookie2",
  "cookie",
  "content-length",
  "content-encoding",
  "content-type",
  "date",
  "alt-svc",
  "strict-transport-security",
]);

/** Relays the upstream's response headers (request ids, rate-limit state, processing time, vendor headers). */
export function passedResponseHeaders(upstream: AnswerHeaders, into: Record<string, string>): void {
  upstream.forEach((value, name) => {
    if (!HELD_BACK.has(name) && !name.startsWith("x-agentd-")) into[name] = value;
  });
}
