import { describe, expect, test } from "bun:test";
import { backoffDelay, decideRetry, parseRetryAfter } from "../../src/proxy/upstream/retryPolicy.ts";

const settings = { baseMs: 500, maxMs: 8000, retryAfterCapMs: 30_000 };

describe("retry policy", () => {
  test("backoff doubles from the base up to the cap, jittered within the upper half", () => {
    expect(backoffDelay(1, settings, () => 0)).toBe(250);
    expect(backoffDelay(1, settings, () => 1)).toBe(500);
    expect(backoffDelay(3, settings, () => 1)).toBe(2000);
    expect(backoffDelay(10, settings, () => 1)).toBe(8000);
    expect(backoffDelay(10, settings, () => 0)).toBe(4000);
  });

  test("retries transient causes, not auth or client errors", () => {
    for (const cause of ["connect", "http_408", "http_409", "http_429", "http_5xx", "reset", "first_byte_timeout"] as const) {
      expect(decideRetry(cause, 1, undefined, settings).retry).toBe(true);
    }
    expect(decideRetry("auth", 1, undefined, settings)).toEqual({ retry: false, reason: "not_retryable" });
    expect(decideRetry("http_4xx", 1, undefined, settings)).toEqual({ retry: false, reason: "not_retryable" });
    expect(decideRetry("idle_timeout", 1, undefined, settings).retry).toBe(false);
  });

  test("Retry-After wins over backoff, up to the cap", () => {
    expect(decideRetry("http_429", 1, 1000, settings)).toEqual({ retry: true, delayMs: 1000 });
    expect(decideRetry("http_429", 1, 60_000, settings)).toEqual({ retry: false, reason: "retry_after_too_long" });
  });

  test("Retry-After as seconds, HTTP-date, and retry-after-ms", () => {
    const now = Date.parse("2025-01-01T00:00:00Z");
    expect(parseRetryAfter(new Headers({ "retry-after": "2" }), now)).toBe(2000);
    expect(parseRetryAfter(new Headers({ "retry-after": "1.5" }), now)).toBe(1500);
    expect(parseRetryAfter(new Headers({ "retry-after": "Wed, 01 Jan 2025 00:00:05 GMT" }), now)).toBe(5000);
    expect(parseRetryAfter(new Headers({ "retry-after": "Tue, 31 Dec 2024 00:00:00 GMT" }), now)).toBe(0);
    expect(parseRetryAfter(new Headers({ "retry-after-ms": "250", "retry-after": "9" }), now)).toBe(250);
    expect(parseRetryAfter(new Headers({ "retry-after": "soon" }), now)).toBeUndefined();
    expect(parseRetryAfter(new Headers(), now)).toBeUndefined();
  });
});
