import { type ClientSide, ClientGoneError, sleepUnlessAborted } from "./clientGone.ts";
import type { ProviderRuntime } from "./providerRuntime.ts";
import type { Route } from "./providerRouter.ts";
import { clientError, exhaustedError, type ProviderOutcome } from "./dispatchErrors.ts";
import { applyQuirks, detectRejectedParam } from "./quirkRules.ts";
import { quotaExhausted } from "./rateLimitWindow.ts";
import { decideRetry, type RetrySettings } from "./retryPolicy.ts";
import type { EventSourceMessage } from "./sseDecoder.ts";
import type { UpstreamAnswer } from "./upstreamAnswer.ts";
import { UpstreamAttempt, upstreamErrorMessage } from "./upstreamAttempt.ts";
import { UpstreamFailure } from "./upstreamFailure.ts";
import { upstreamRequestHeaders } from "./upstreamHeaders.ts";

export type Wire = "chat" | "responses" | "anthropic";

/** The lists of wires routes ask providers for: constants, so the candidates of each are made once (ProxyCore.routes). */
export const WIRES = {
  any: ["chat", "responses", "anthropic"],
  openAi: ["chat", "responses"],
} as const satisfies Record<string, readonly Wire[]>;

export interface WirePayload {
  /** The request to send, with the client's model name; never mutated. */
  object: Record<string, unknown>;
  /** The client's exact body text when `object` is it unchanged: sent as is when nothing must change. */
  raw?: string;
  /** Fields the translation for this wire dropped (reported to the client once this wire answers). */
  dropped?: readonly string[];
}

/** An endpoint passed through as it is (embeddings, legacy completions), whatever the provider's wire. */
export interface PassthroughEndpoint {
  /** Appended to the provider's base URL, e.g. "/embeddings". */
  path: string;
  /** The field an answer must have to count as one, e.g. "data" (an array unless `scalar`). */
  field: string;
  /** The field is a number or object rather than an array, e.g. `input_tokens`. */
  scalar?: boolean;
}

export interface DispatchPlan {
  /** Only providers whose wire has a payload. */
  routes: Route<ProviderRuntime>[];
  stream: boolean;
  payloads: Partial<Record<Wire, WirePayload>>;
  /** Set for a passthrough endpoint: sent to it instead of the wire's completion endpoint. */
  endpoint?: PassthroughEndpoint;
  clientHeaders: Headers;
  /** agentd's own span, sent upstream in place of the client's `traceparent` so the upstream joins the trace under it. */
  traceparent?: string;
  /** The client's request: its signal is asked for only once a call lasts (UpstreamAttempt). */
  client: ClientSide;
  /** The route template the request came in on, for /metrics and traces. */
  route?: string;
}

interface CommittedBase {
  provider: ProviderRuntime;
  wire: Wire;
  upstreamModel: string;
  attempt: UpstreamAttempt;
  response: UpstreamAnswer;
  /** When the winning attempt was sent (performance.now()). */
  sentAt: number;
  attempts: number;
  /** Fields left out: by the translation to this wire, or because this provider rejects them (learned quirks). */
  dropped: readonly string[];
}

/** The upstream that answered: a whole JSON body, or a stream whose first event already arrived. */
export type Committed =
  | (CommittedBase & { kind: "json"; text: string; body: Record<string, unknown> })
  | (CommittedBase & { kind: "stream"; first: EventSourceMessage; firstData: Record<string, unknown> | "[DONE]" });

export interface DispatchSettings extends RetrySettings {
  maxAttemptsPerProvider: number;
  maxTotalAttempts: number;
  /** The longest Retry-After agentd tells a client: a longer wait freezes clients that honour it. */
  clientRetryAfterCapMs: number;
  onQuirk: (provider: ProviderRuntime, param: string, detail: string) => void;
  /** Logs and counts a failed attempt, and tells the provider's breaker and health. */
  onFailure: (provider: ProviderRuntime, failure: UpstreamFailure, model: string, attempt: number) => void;
  /** Upstreams through agentd's own HTTP/1.1 client (proxy.upstream_client "auto"); unset means yes. */
  ownClient?: boolean;
}

/** How far a dispatch got: filled in as it goes, so a request that failed is counted under the provider that failed it. */
export interface DispatchTally {
  /** The last provider tried; none when every breaker was open. */
  provider?: ProviderRuntime;
  attempts: number;
}

/**
 * Tries the routes in order until one answers: retries a provider on transient failures with
 * backoff (honouring Retry-After up to a cap), moves on after auth failures, an open breaker or
 * spent attempts, and drops a rejected optional parameter once (a learned quirk). A 429 is retried
 * at the same provider once at most (never for a spent quota), and the provider is then skipped
 * for the wait it named, so clients' own retries meet a 429 at once rather than a breaker. A stream
 * counts as answered only once its first event arrived, so anything before that still fails over.
 */
export async function dispatch(plan: DispatchPlan, settings: DispatchSettings, tally: DispatchTally = { attempts: 0 }): Promise<Committed> {
  let total = 0;
  const outcomes: ProviderOutcome[] = [];
  for (const route of plan.routes) {
    const provider = route.provider;
    const waitMs = provider.rateLimit.remainingMs(route.upstreamModel);
    if (waitMs > 0) {
      // An open breaker (the watchdog's, say) outranks the rate limit: it says when to come back.
      if (provider.breaker.state() === "open") continue;
      tally.provider = provider;
      const failure = new UpstreamFailure("http_429", `rate-limited: asked to wait ${waitMs} ms more`, {
        status: 429,
        retryAfterMs: waitMs,
      });
      outcomes.push({ provider, failure });
      continue;
    }
    let pass = provider.breaker.tryAcquire();
    if (pass === undefined) continue;
    tally.provider = provider;
    let quirkRetried = false;
    let rateLimited = false;
    for (let attemptNo = 1; ; attemptNo++) {
      // An attempt asks after its client only from 25 ms in: a client that left meanwhile gets no
      // new call (a retry, the next provider), and the provider's slot goes back.
      if (total > 0 && plan.client.signal.aborted) {
        provider.breaker.release(pass);
        throw new ClientGoneError();
      }
      tally.attempts = ++total;
      provider.requests++;
      const sentAt = performance.now();
      const attempt = new UpstreamAttempt(plan.client, provider.timeouts, settings.ownClient ?? true);
      const payload = payloadFor(plan, provider, route.upstreamModel);
      try {
        const committed = await runAttempt(plan, provider, attempt, payload, route.upstreamModel, sentAt);
        committed.attempts = total;
        provider.health.record(true, performance.now() - sentAt);
        provider.breaker.onSuccess();
        provider.rateLimit.clear(route.upstreamModel);
        provider.authFailed = false;
        return committed;
      } catch (error) {
        attempt.abort();
        if (error instanceof ClientGoneError) {
          provider.breaker.release(pass);
          throw error;
        }
        if (!(error instanceof UpstreamFailure)) {
          // A half-open probe that ends this way must free its slot, or the provider stays skipped.
          provider.breaker.release(pass);
          throw error;
        }
        const param =
          !quirkRetried && learnsQuirks(provider, plan) && error.body
            ? detectRejectedParam(error.status, error.body, payload.object)
            : undefined;
        if (param) {
          // Not the provider's ill health: drop the parameter, remember it, try again at once.
          quirkRetried = true;
          settings.onQuirk(provider, param, upstreamErrorMessage(error.body ?? ""));
          continue;
        }
        settings.onFailure(provider, error, route.upstreamModel, attemptNo);
        if (error.kind === "auth") {
          provider.authFailed = true;
          outcomes.push({ provider, failure: error });
          break;
        }
        // Asking the same address again gets the same redirect; another provider may answer.
        if (error.kind === "redirect") {
          outcomes.push({ provider, failure: error });
          break;
        }
        if (error.kind === "http_4xx") {
          // 404: this provider lacks the model or the endpoint (models default to "*"); another may have it.
          if (error.status === 404) {
            outcomes.push({ provider, failure: error });
            break;
          }
          throw clientError(error, provider.name);
        }
        let limitedAgain = false;
        if (error.kind === "http_429") {
          provider.rateLimit.limited(route.upstreamModel, error.retryAfterMs);
          limitedAgain = rateLimited || quotaExhausted(error.body);
          rateLimited = true;
        }
        const decision = decideRetry(error.kind, attemptNo, error.retryAfterMs, settings);
        const stop =
          !decision.retry ||
          limitedAgain ||
          attemptNo >= settings.maxAttemptsPerProvider ||
          total >= settings.maxTotalAttempts ||
          provider.breaker.state() !== "closed";
        if (!stop) await sleepUnlessAborted(decision.delayMs, plan.client.signal);
        const next = stop ? undefined : provider.breaker.tryAcquire();
        if (next === undefined) {
          outcomes.push({ provider, failure: error });
          break;
        }
        pass = next;
      }
    }
    if (total >= settings.maxTotalAttempts) break;
  }
  throw exhaustedError(plan.routes, outcomes, settings.clientRetryAfterCapMs);
}

interface SentPayload {
  text: string;
  object: Record<string, unknown>;
  quirkDropped: readonly string[];
}

function payloadFor(plan: DispatchPlan, provider: ProviderRuntime, upstreamModel: string): SentPayload {
  const payload = plan.payloads[provider.config.wire];
  if (!payload) throw new Error(`no ${provider.config.wire} payload planned for provider ${provider.name}`);
  const quirks = learnsQuirks(provider, plan) ? provider.quirks : EMPTY_QUIRKS;
  const unchanged = upstreamModel === payload.object.model && quirks.size === 0;
  if (unchanged && payload.raw !== undefined) return { text: payload.raw, object: payload.object, quirkDropped: NONE };
  if (unchanged) return { text: JSON.stringify(payload.object), object: payload.object, quirkDropped: NONE };
  const object = quirks.size > 0 ? structuredClone(payload.object) : { ...payload.object };
  object.model = upstreamModel;
  const quirkDropped = applyQuirks(object, quirks);
  return { text: JSON.stringify(object), object, quirkDropped };
}

/** OpenAI's two wires take the same optional parameters; Anthropic's and passthrough endpoints have their own. */
function learnsQuirks(provider: ProviderRuntime, plan: DispatchPlan): boolean {
  return provider.config.wire !== "anthropic" && !plan.endpoint;
}

/** The field every answer of a wire has: without it a 200 is broken. */
const ANSWER_FIELD: Record<Wire, string> = { chat: "choices", responses: "output", anthropic: "content" };

const EMPTY_QUIRKS: ReadonlySet<string> = new Set();
const NONE: readonly string[] = [];

async function runAttempt(
  plan: DispatchPlan,
  provider: ProviderRuntime,
  attempt: UpstreamAttempt,
  payload: SentPayload,
  upstreamModel: string,
  sentAt: number,
): Promise<Committed> {
  const wire = provider.config.wire;
  const url = plan.endpoint ? provider.baseUrl + plan.endpoint.path : provider.completionUrl;
  const headers = upstreamRequestHeaders(plan.clientHeaders, provider.config.api_key, plan.stream, wire);
  if (plan.traceparent) headers.traceparent = plan.traceparent;
  let response: UpstreamAnswer;
  try {
    response = await attempt.send(url, headers, payload.text, plan.stream);
  } catch (error) {
    throw attempt.sendFailed(error);
  }
  const failed = attempt.answered(response, plan.stream);
  if (failed !== undefined) throw await failed;
  const translated = plan.payloads[wire]?.dropped ?? NONE;
  const dropped = payload.quirkDropped.length === 0 ? translated : [...new Set([...translated, ...payload.quirkDropped])];
  // Each answer's object made whole at once, not a base spread into it.
  if (!plan.stream) {
    const read = attempt.readBody(response);
    const text = typeof read === "string" ? read : await read;
    const body = parseUpstreamJson(text, response.status, plan.endpoint?.field ?? ANSWER_FIELD[wire], plan.endpoint?.scalar === true);
    return { provider, wire, upstreamModel, attempt, response, sentAt, attempts: 0, dropped, kind: "json", text, body };
  }
  const first = await attempt.nextEvent(response);
  if (first === undefined)
    throw new UpstreamFailure("malformed", "the upstream stream ended before its first event", { status: response.status });
  const firstData = parseStreamData(first, response.status);
  return { provider, wire, upstreamModel, attempt, response, sentAt, attempts: 0, dropped, kind: "stream", first, firstData };
}

/** The answer's JSON object; one without the wire's answer field is broken, and fails over like any other failure. */
function parseUpstreamJson(text: string, status: number, field: string, scalar: boolean): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new UpstreamFailure("malformed", "the upstream answered with a body that is not JSON", { status });
  }
  if (typeof body !== "object" || body === null)
    throw new UpstreamFailure("malformed", "the upstream answered with JSON that is not an object", { status });
  if ("error" in body && (body as { error: unknown }).error)
    throw new UpstreamFailure("http_5xx", `upstream error in a ${status} body: ${upstreamErrorMessage(text)}`, { status });
  const value = (body as Record<string, unknown>)[field];
  if (scalar ? value === undefined || value === null : !Array.isArray(value))
    throw new UpstreamFailure("malformed", `the upstream answer has no '${field}' ${scalar ? "field" : "array"}`, { status });
  return body as Record<string, unknown>;
}

/** Parses one streamed event's data; an error event in a 200 stream is a failure, not an answer. */
export function parseStreamData(event: EventSourceMessage, status: number): Record<string, unknown> | "[DONE]" {
  if (event.data === "[DONE]") return "[DONE]";
  let data: unknown;
  try {
    data = JSON.parse(event.data);
  } catch {
    throw new UpstreamFailure("malformed", `the upstream sent an event that is not JSON: ${event.data.slice(0, 120)}`, { status });
  }
  if (typeof data !== "object" || data === null)
    throw new UpstreamFailure("malformed", "the upstream sent an event that is not a JSON object", { status });
  const record = data as Record<string, unknown>;
  if (record.error || record.type === "error" || record.type === "response.failed") {
    // A failed Responses stream keeps its error inside the response.
    const failed = (record.response as { error?: { message?: unknown } } | undefined)?.error?.message;
    throw new UpstreamFailure(
      "http_5xx",
      `the upstream stream reported an error: ${typeof failed === "string" ? failed : upstreamErrorMessage(event.data)}`,
      { status },
    );
  }
  return record;
}
