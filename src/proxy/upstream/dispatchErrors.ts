import type { ProviderRuntime } from "./providerRuntime.ts";
import type { Route } from "./providerRouter.ts";
import { ProxyError } from "./proxyError.ts";
import { upstreamErrorMessage } from "./upstreamAttempt.ts";
import { missingResource } from "./missingResource.ts";
import { DEFAULT_RATE_LIMIT_WAIT_MS } from "./rateLimitWindow.ts";
import type { UpstreamFailure } from "./upstreamFailure.ts";

/** How each provider tried ended: its last failure. */
export interface ProviderOutcome {
  provider: ProviderRuntime;
  failure: UpstreamFailure;
}

/** When nothing else tells: a wait short enough to be harmless, long enough not to hammer. */
const DEFAULT_RETRY_AFTER_S = 1;

/** An upstream's 4xx that another provider would refuse alike: the client's request is at fault. */
export function clientError(failure: UpstreamFailure, provider: string): ProxyError {
  let param: string | undefined;
  try {
    const parsed = JSON.parse(failure.body ?? "") as { error?: { param?: unknown } };
    if (typeof parsed.error?.param === "string") param = parsed.error.param;
  } catch {
    // No param to report.
  }
  return new ProxyError("upstream_rejected", `The upstream refused the request: ${upstreamErrorMessage(failure.body ?? "")}`, {
    status: failure.status,
    param,
    provider,
  });
}

/**
 * The error for a dispatch no provider answered, in OpenAI's terms so SDKs react as they would to
 * OpenAI: every breaker open → 503 with Retry-After until the first half-open; every provider
 * rate-limited → 429 with the shortest Retry-After they asked for; every key rejected → 502 (the
 * client's own key is not at fault); 404 naming an item, file or response → that id is not found;
 * 404 everywhere else → the model is missing; else 502 or 504. Retry-After is written only for a
 * wait within `retryAfterCapMs`: clients honour it to the letter (Codex even past x-should-retry),
 * and a breaker held open for minutes would freeze them.
 */
export function exhaustedError(
  routes: readonly Route<ProviderRuntime>[],
  outcomes: readonly ProviderOutcome[],
  retryAfterCapMs: number,
): ProxyError {
  const capS = Math.max(1, Math.floor(retryAfterCapMs / 1000));
  // A longer wait is named in the message only: clients that honour Retry-After would sit silent through it.
  const wait = (seconds: number) => (seconds <= capS ? { retryAfterS: seconds } : { waitTooLong: true });
  const last = outcomes.at(-1);
  if (!last) {
    const seconds = secondsUntilHalfOpen(routes);
    return new ProxyError(
      "upstream_unavailable",
      `Every provider for this model has its circuit breaker open; the first lets a request through in ${seconds} s`,
      wait(seconds),
    );
  }
  const provider = last.provider.name;
  const tried = outcomes.map((o) => o.provider.name);
  const auth = outcomes.filter((o) => o.failure.kind === "auth").map((o) => o.provider.name);
  if (auth.length === outcomes.length) {
    return new ProxyError(
      "upstream_auth_failed",
      `The provider(s) ${auth.join(", ")} rejected the API key; check api_key in agentd.jsonc`,
      { details: { providers: auth }, provider },
    );
  }
  const notFound = outcomes.filter((o) => o.failure.kind === "http_4xx" && o.failure.status === 404).map((o) => o.provider.name);
  if (notFound.length > 0 && notFound.length + auth.length === outcomes.length) {
    const missing = outcomes.map((o) => (o.failure.status === 404 ? missingResource(o.failure.body) : undefined)).find(Boolean);
    if (missing) {
      return new ProxyError("not_found", `The upstream has no ${missing.kind} '${missing.id}': ${missing.message}`, {
        details: { id: missing.id, kind: missing.kind, providers: tried },
        provider,
      });
    }
    return new ProxyError(
      "model_not_found",
      `No provider has this model or endpoint (404 from ${notFound.join(", ")}): ${last.failure.message}`.trimEnd(),
      { param: "model", details: { providers: tried }, provider },
    );
  }
  const limited = outcomes.filter((o) => o.failure.kind === "http_429");
  if (limited.length > 0 && limited.length + auth.length + notFound.length === outcomes.length) {
    const seconds = retryAfterOf(limited);
    return new ProxyError(
      "rate_limit_exceeded",
      `Every provider for this model is rate-limited (tried ${tried.join(", ")}); the first asks to wait ${seconds} s`,
      { details: { providers: tried }, ...wait(seconds), provider },
    );
  }
  const timeout = last.failure.kind.endsWith("timeout");
  return new ProxyError(
    timeout ? "upstream_timeout" : "upstream_error",
    `No provider answered (tried ${tried.join(", ")}): ${last.failure.message}`,
    { details: { providers: tried, cause: last.failure.kind }, provider },
  );
}

/** The shortest wait a rate-limited provider asked for (a skipped one: what is left of it). */
function retryAfterOf(limited: readonly ProviderOutcome[]): number {
  const ms = Math.min(...limited.map(({ failure }) => failure.retryAfterMs ?? DEFAULT_RATE_LIMIT_WAIT_MS));
  return Math.max(1, Math.ceil(ms / 1000));
}

function secondsUntilHalfOpen(routes: readonly Route<ProviderRuntime>[]): number {
  const now = Date.now();
  let first = Number.POSITIVE_INFINITY;
  for (const route of routes) {
    const retryAt = route.provider.breaker.snapshot().retryAt;
    // Half-open with its probe in flight: the probe's answer is due at any moment.
    first = Math.min(first, retryAt === undefined ? now : retryAt);
  }
  return Number.isFinite(first) ? Math.max(1, Math.ceil((first - now) / 1000)) : DEFAULT_RETRY_AFTER_S;
}
