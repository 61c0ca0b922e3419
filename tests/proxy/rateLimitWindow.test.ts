import { describe, expect, test } from "bun:test";
import { DEFAULT_RATE_LIMIT_WAIT_MS, quotaExhausted, RateLimitWindow } from "../../src/proxy/upstream/rateLimitWindow.ts";

function windowAt() {
  let now = 1_000_000;
  return { w: new RateLimitWindow(() => now), advance: (ms: number) => (now += ms) };
}

describe("rate-limit window", () => {
  test("a 429's wait is counted down per model; another model of the provider is not held", () => {
    const { w, advance } = windowAt();
    w.limited("gpt-a", 1500);
    expect(w.remainingMs("gpt-a")).toBe(1500);
    expect(w.remainingMs("gpt-b")).toBe(0);
    advance(1499);
    expect(w.remainingMs("gpt-a")).toBe(1);
    advance(1);
    expect(w.remainingMs("gpt-a")).toBe(0);
  });

  test("no named wait: the default; the latest 429's word counts; an answer clears it", () => {
    const { w } = windowAt();
    w.limited("m", undefined);
    expect(w.remainingMs("m")).toBe(DEFAULT_RATE_LIMIT_WAIT_MS);
    w.limited("m", 20_000);
    w.limited("m", 2_000);
    expect(w.remainingMs("m")).toBe(2_000);
    w.clear("m");
    expect(w.remainingMs("m")).toBe(0);
  });

  test("a spent quota is told apart from a rate limit", () => {
    expect(quotaExhausted('{"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}}')).toBe(true);
    expect(quotaExhausted('{"error":{"message":"Rate limit reached for gpt-4o on requests per min (RPM)"}}')).toBe(false);
    expect(quotaExhausted(undefined)).toBe(false);
  });
});
