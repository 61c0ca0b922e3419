import type { Context } from "hono";

/** Anthropic's error types by HTTP status; 529 is Anthropic's own "overloaded". */
function anthropicErrorType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 413) return "request_too_large";
  if (status === 429) return "rate_limit_error";
  if (status === 529) return "overloaded_error";
  if (status >= 400 && status < 500) return "invalid_request_error";
  return "api_error";
}

/** What the client is told to wait for in Anthropic's terms: every breaker open is Anthropic's 529. */
function anthropicStatus(code: unknown, status: number): number {
  return code === "upstream_unavailable" ? 529 : status;
}

/**
 * The proxy's error answer (its status and headers: retry-after, x-should-retry, x-request-id,
 * x-agentd-provider) with Anthropic's body, `{"type":"error","error":{"type","message"}}`, so the
 * Anthropic SDK and Claude Code type and retry it as they would Anthropic's own.
 */
export function messagesErrorHandler(openai: (error: Error, c: Context) => Response) {
  return async (error: Error, c: Context): Promise<Response> => {
    const response = openai(error, c);
    if (!response.body) return response;
    const body = (await response.json()) as { error?: { message?: unknown; code?: unknown } };
    const status = anthropicStatus(body.error?.code, response.status);
    const headers = new Headers(response.headers);
    headers.set("content-type", "application/json");
    headers.delete("content-length");
    const message = typeof body.error?.message === "string" ? body.error.message : "Request failed";
    const type = anthropicErrorType(status);
    return new Response(JSON.stringify({ type: "error", error: { type, message }, request_id: headers.get("x-request-id") }), {
      status,
      headers,
    });
  };
}
