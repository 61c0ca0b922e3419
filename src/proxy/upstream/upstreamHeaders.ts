/**
 * Which client headers reach the upstream. An allow-list, so hop-by-hop headers (connection,
 * keep-alive, transfer-encoding, te, trailer, upgrade, proxy-*), the client's own Authorization
 * (agentd's token must never leak upstream) and host never do, while client identity passes.
 */
const PASSED_EXACT = new Set([
  "user-agent",
  "x-request-id",
  "x-client-request-id",
  "openai-beta",
  "originator",
  "session_id",
  "conversation_id",
  "accept-language",
]);

function isPassed(name: string): boolean {
  return PASSED_EXACT.has(name) || name.startsWith("x-stainless-");
}

export function upstreamRequestHeaders(client: Headers, apiKey: string | undefined, stream: boolean): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: stream ? "text/event-stream" : "application/json",
  };
  client.forEach((value, name) => {
    if (isPassed(name)) headers[name] = value;
  });
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  return headers;
}

/** Upstream response headers worth showing the client (request ids, rate-limit state). */
export function passedResponseHeaders(upstream: Headers, into: Record<string, string>): void {
  upstream.forEach((value, name) => {
    if (name === "x-request-id" || name.startsWith("x-ratelimit-") || name === "openai-processing-ms") into[name] = value;
  });
}
