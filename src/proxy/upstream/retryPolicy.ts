import type { AnswerHeaders } from "./upstreamAnswer.ts";
import type { FailureCause } from "./upstreamFailure.ts";

export interface RetrySettings {
  baseMs: number;
  maxMs: number;
  /** Longest Retry-After the proxy waits for; a longer one moves on to the next provider. */
  retryAfterCapMs: number;
}

/** Causes worth another attempt at the same provider: transient by nature. */
const RETRYABLE: ReadonlySet<FailureCause> = new Set<FailureCause>([
  "connect",
  "connect_timeout",
  "first_byte_timeout",
  "reset",
  "http_408",
  "http_409",
  "http_429",
  "http_5xx",
  "malformed",
]);

function isRetryable(cause: FailureCause): boolean {
  return RETRYABLE.has(cause);
}

/**
 * Delay before retry number `attempt` (1 = first retry): exponential from baseMs, capped at maxMs,
 * with "full jitter" on the upper half so a herd of clients spreads out without ever retrying at once.
 */
export function backoffDelay(attempt: number, settings: RetrySettings, random: () => number = Math.random): number {
  const exp = Math.min(settings.maxMs, settings.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exp / 2 + random() * (exp / 2));
}

export type RetryDecision = { retry: true; delayMs: number } | { retry: false; reason: "not_retryable" | "retry_after_too_long" };

/** Decides whether to retry the same provider after a failure, and after how long. */
export function decideRetry(
  cause: FailureCause,
  attempt: number,
  retryAfterMs: number | undefined,
  settings: RetrySettings,
  random?: () => number,
): RetryDecision {
  if (!isRetryable(cause)) return { retry: false, reason: "not_retryable" };
  if (retryAfterMs !== undefined) {
    if (retryAfterMs > settings.retryAfterCapMs) return { retry: false, reason: "retry_after_too_long" };
    return { retry: true, delayMs: retryAfterMs };
  }
  return { retry: true, delayMs: backoffDelay(attempt, settings, random) };
}

/**
 * Reads the delay an upstream asked for: `retry-after-ms` (OpenAI's, milliseconds) first, then
 * `Retry-After` as seconds or an HTTP-date. Returns undefined when absent or unreadable.
 */
export function parseRetryAfter(headers: AnswerHeaders, now: number = Date.now()): number | undefined {
  const ms = headers.get("retry-after-ms");
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.round(Number(ms));
  const value = headers.get("retry-after");
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
