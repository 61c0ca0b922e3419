import { buildResponse, newShell } from "../translate/responseObject.ts";
import { invalidRequest } from "../upstream/proxyError.ts";

type Json = Record<string, unknown>;

/** What one frame of the Responses WebSocket asks for. */
export type SocketStep =
  /** `generate: false` only warms the connection: answered here, with no model call. */
  | { kind: "prewarm"; events: Json[] }
  /** A request to run as POST /v1/responses, streamed. */
  | { kind: "create"; body: Json };

/** Fields of the socket's envelope, none of them a Responses request's. */
const ENVELOPE = ["type", "generate", "client_metadata"];

/**
 * The state of one Responses WebSocket connection. Over a socket, Codex (and OpenAI's server) chain
 * requests with `previous_response_id` even when `store` is false: the server keeps the connection's
 * last response, and the next request sends only the items added since. This keeps that one
 * response (its input and output) and expands such a request back to the whole conversation; an id
 * from elsewhere is left for the response store to resolve, as over HTTP.
 */
export class SocketConversation {
  #last: { id: string; items: unknown[] } | undefined;

  /** Reads one text frame; bad frames throw a ProxyError, which the socket sends as an error event. */
  step(text: string): SocketStep {
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      throw invalidRequest("A Responses WebSocket frame must be a JSON object");
    }
    if (typeof frame !== "object" || frame === null || Array.isArray(frame))
      throw invalidRequest("A Responses WebSocket frame must be a JSON object");
    const fields = frame as Json;
    if (fields.type !== "response.create")
      throw invalidRequest(`Unsupported Responses WebSocket frame type '${String(fields.type)}'; send 'response.create'`, "type");
    const body: Json = {};
    for (const [key, value] of Object.entries(fields)) if (!ENVELOPE.includes(key)) body[key] = value;
    const given = typeof body.input === "string" ? [{ role: "user", content: body.input }] : body.input;
    if (given !== undefined && !Array.isArray(given)) throw invalidRequest("'input' must be a string or an array of items", "input");
    let input = (given ?? []) as unknown[];
    if (this.#last && body.previous_response_id === this.#last.id) {
      input = [...this.#last.items, ...input];
      delete body.previous_response_id;
    }
    body.input = input;
    body.stream = true;
    if (fields.generate === false) return { kind: "prewarm", events: this.#prewarm(body) };
    return { kind: "create", body };
  }

  /**
   * A request's response ended: a completed one is what the next frame may continue from, unless
   * the request continued a stored response (its earlier items are the store's, not known here).
   */
  settled(body: Json, response: Json | undefined): void {
    const whole = body.previous_response_id === undefined && Array.isArray(body.input);
    if (whole && response?.status === "completed" && typeof response.id === "string")
      this.#last = { id: response.id, items: [...(body.input as unknown[]), ...((response.output as unknown[] | undefined) ?? [])] };
    else this.#last = undefined;
  }

  #prewarm(body: Json): Json[] {
    if (typeof body.model !== "string" || !body.model) throw invalidRequest("'model' is required", "model");
    const shell = newShell(body);
    const usage = {
      input_tokens: 0,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 0,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 0,
    };
    const completed = buildResponse(shell, { status: "completed", output: [], usage });
    this.settled(body, completed);
    return [
      { type: "response.created", sequence_number: 0, response: buildResponse(shell, { status: "in_progress", output: [] }) },
      { type: "response.completed", sequence_number: 1, response: completed },
    ];
  }
}

/**
 * An HTTP error as the socket's error event: the status and the OpenAI error body, with the
 * headers a client acts on (Retry-After, x-request-id), the shape Codex reads as that HTTP error.
 */
export function socketErrorEvent(status: number, bodyText: string, headers: Headers): Json {
  let error: unknown;
  try {
    error = (JSON.parse(bodyText) as Json).error;
  } catch {
    error = undefined;
  }
  const passed: Record<string, string> = {};
  for (const name of ["retry-after", "x-request-id", "x-should-retry", "x-agentd-provider"]) {
    const value = headers.get(name);
    if (value !== null) passed[name] = value;
  }
  return {
    type: "error",
    status,
    error:
      typeof error === "object" && error !== null ? error : { type: "server_error", code: null, message: bodyText || `HTTP ${status}` },
    headers: passed,
  };
}
