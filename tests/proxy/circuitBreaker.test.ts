import { describe, expect, test } from "bun:test";
import { CircuitBreaker, type BreakerTransition } from "../../src/proxy/upstream/circuitBreaker.ts";

const settings = {
  failures: 3,
  window_ms: 10_000,
  cooldown_5xx_ms: 2000,
  cooldown_auth_ms: 5000,
  cooldown_max_ms: 6000,
};

function breaker() {
  let now = 0;
  const transitions: BreakerTransition[] = [];
  const b = new CircuitBreaker(
    settings,
    (t) => transitions.push(t),
    () => now,
  );
  return { b, transitions, advance: (ms: number) => (now += ms) };
}

describe("circuit breaker", () => {
  test("opens after N failures inside the window, not when they are spread out", () => {
    const { b, advance } = breaker();
    b.onFailure("http_5xx");
    advance(6000);
    b.onFailure("http_5xx");
    advance(6000);
    b.onFailure("http_5xx");
    expect(b.state()).toBe("closed");
    b.onFailure("http_5xx");
    expect(b.state()).toBe("open");
    expect(b.tryAcquire()).toBeUndefined();
  });

  test("half-opens after the cooldown for its cause, lets one probe through, closes on success", () => {
    const { b, transitions, advance } = breaker();
    for (let i = 0; i < 3; i++) b.onFailure("http_5xx");
    advance(1999);
    expect(b.state()).toBe("open");
    advance(1);
    expect(b.state()).toBe("half_open");
    expect(b.tryAcquire()).toBeDefined();
    expect(b.tryAcquire()).toBeUndefined();
    b.onSuccess();
    expect(b.state()).toBe("closed");
    expect(transitions.map((t) => t.to)).toEqual(["open", "half_open", "closed"]);
    expect(transitions[0]).toEqual({ to: "open", cause: "http_5xx", cooldownMs: 2000 });
  });

  test("a failed probe reopens with a doubled cooldown, capped", () => {
    const { b, transitions, advance } = breaker();
    for (let i = 0; i < 3; i++) b.onFailure("http_5xx");
    for (let round = 0; round < 3; round++) {
      advance(10_000);
      expect(b.tryAcquire()).toBeDefined();
      b.onFailure("http_5xx");
    }
    expect(transitions.filter((t) => t.to === "open").map((t) => t.cooldownMs)).toEqual([2000, 4000, 6000, 6000]);
  });

  test("an auth failure opens at once; a client 4xx or a rate limit never counts", () => {
    const { b } = breaker();
    for (let i = 0; i < 10; i++) b.onFailure("http_4xx");
    for (let i = 0; i < 10; i++) b.onFailure("http_429");
    expect(b.state()).toBe("closed");
    b.onFailure("auth");
    expect(b.snapshot()).toMatchObject({ state: "open", cause: "auth", retryAt: 5000 });
  });

  test("a 429 from a half-open probe closes it: the provider answers", () => {
    const { b, advance } = breaker();
    for (let i = 0; i < 3; i++) b.onFailure("http_5xx");
    advance(2000);
    expect(b.tryAcquire()).toBeDefined();
    b.onFailure("http_429");
    expect(b.state()).toBe("closed");
  });

  test("a released probe slot can be taken again", () => {
    const { b, advance } = breaker();
    for (let i = 0; i < 3; i++) b.onFailure("reset");
    advance(2000);
    const probe = b.tryAcquire();
    expect(typeof probe).toBe("number");
    b.release(probe!);
    expect(b.tryAcquire()).toBeDefined();
  });

  test("only the probe frees the probe's slot: not a request let through while closed, nor an earlier probe", () => {
    const { b, advance } = breaker();
    const early = b.tryAcquire();
    expect(early).toBe("closed");
    for (let i = 0; i < 3; i++) b.onFailure("reset");
    advance(2000);
    const first = b.tryAcquire();
    expect(typeof first).toBe("number");
    // The request sent while closed gives up (its client left): the probe still holds the one slot.
    b.release(early!);
    expect(b.tryAcquire()).toBeUndefined();
    // Forced open and half-open again while the first probe still runs: a second probe goes out.
    b.forceOpen(1000);
    advance(1000);
    const second = b.tryAcquire();
    expect(typeof second).toBe("number");
    expect(second).not.toBe(first);
    // The first probe ending without a verdict leaves the second one's slot taken.
    b.release(first!);
    expect(b.tryAcquire()).toBeUndefined();
    b.release(second!);
    expect(b.tryAcquire()).toBeDefined();
  });

  test("forced open is capped; forced close closes", () => {
    const { b } = breaker();
    expect(b.forceOpen(60_000)).toBe(6000);
    expect(b.snapshot()).toMatchObject({ state: "open", cause: "manual" });
    b.forceClose();
    expect(b.state()).toBe("closed");
  });
});
