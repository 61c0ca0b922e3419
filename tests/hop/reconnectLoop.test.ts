import { describe, expect, test } from "bun:test";
import { retryUntilConnected, type ReconnectLoopOptions } from "../../src/hop/reconnectLoop.ts";

function options(overrides: Partial<ReconnectLoopOptions>): ReconnectLoopOptions {
  return {
    signal: new AbortController().signal,
    giveUpAt: Date.now() + 60_000,
    initialMs: 1,
    maxMs: 8,
    attempt: async () => {},
    onFailure: () => {},
    isFinal: () => false,
    ...overrides,
  };
}

describe("reconnect loop", () => {
  test("retries with doubling delays up to the cap until an attempt connects", async () => {
    const delays: number[] = [];
    let tries = 0;
    const outcome = await retryUntilConnected(
      options({
        attempt: async () => {
          if (++tries < 6) throw new Error("refused");
        },
        onFailure: (_error, _attempt, next) => delays.push(next),
      }),
    );
    expect(outcome).toEqual({ kind: "connected", attempt: 6 });
    expect(delays).toEqual([1, 2, 4, 8, 8]);
  });

  test("a final error (a changed host key) ends it at once", async () => {
    let tries = 0;
    const refused = await retryUntilConnected(
      options({
        attempt: () => Promise.reject(new Error(`host key changed (try ${++tries})`)),
        isFinal: () => true,
      }),
    );
    expect(refused).toEqual({ kind: "gave_up" });
    expect(tries).toBe(1);
  });

  test("past the give-up time it stops trying", async () => {
    let tries = 0;
    const outcome = await retryUntilConnected(
      options({ giveUpAt: Date.now() - 1, attempt: () => Promise.reject(new Error(`try ${++tries}`)) }),
    );
    expect(outcome).toEqual({ kind: "gave_up" });
    expect(tries).toBe(1);
  });

  test("a close during the wait stops the loop without another attempt", async () => {
    const controller = new AbortController();
    let tries = 0;
    const outcome = retryUntilConnected(
      options({
        signal: controller.signal,
        initialMs: 60_000,
        maxMs: 60_000,
        attempt: () => Promise.reject(new Error(`try ${++tries}`)),
        onFailure: () => controller.abort(),
      }),
    );
    expect(await outcome).toEqual({ kind: "stopped" });
    expect(tries).toBe(1);
  });
});
