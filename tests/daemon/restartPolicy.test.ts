import { describe, expect, test } from "bun:test";
import { RestartPolicy, type RestartPolicyOptions } from "../../src/watchdog/index.ts";

const MINUTE = 60_000;
// random 0.5 puts the jitter factor at exactly 1, so delays are the bare backoff.
const policy = (overrides: Partial<RestartPolicyOptions> = {}) =>
  new RestartPolicy({
    maxRestarts: 5,
    windowMs: 10 * MINUTE,
    initialBackoffMs: 500,
    maxBackoffMs: 4_000,
    healthyResetMs: 10 * MINUTE,
    random: () => 0.5,
    ...overrides,
  });

describe("RestartPolicy", () => {
  test("the first restart is immediate, then the backoff doubles up to the cap", () => {
    const p = policy({ maxRestarts: 100 });
    const delays: number[] = [];
    let now = 1_000_000;
    for (let i = 0; i < 8; i++) {
      const decision = p.onExit(now, now - 1_000);
      if (decision.action !== "restart") throw new Error(`gave up at exit ${i + 1}`);
      expect(decision.attempt).toBe(i + 1);
      delays.push(decision.delayMs);
      now += 2_000;
    }
    expect(delays).toEqual([0, 500, 1_000, 2_000, 4_000, 4_000, 4_000, 4_000]);
  });

  test("gives up on the sixth exit within the window (5 restarts in 10 minutes)", () => {
    const p = policy();
    let now = 5_000_000;
    for (let i = 0; i < 5; i++) {
      expect(p.onExit(now, now - 100).action).toBe("restart");
      now += MINUTE;
    }
    expect(p.restartsInWindow).toBe(5);
    expect(p.onExit(now, now - 100)).toEqual({ action: "give_up", restartsInWindow: 5 });
  });

  test("restarts older than the window no longer count", () => {
    const p = policy();
    let now = 5_000_000;
    for (let i = 0; i < 5; i++) {
      expect(p.onExit(now, now - 100).action).toBe("restart");
      now += 3 * MINUTE;
    }
    // One exit every 3 minutes: never more than 4 restarts fall within 10 minutes.
    expect(p.onExit(now, now - 100).action).toBe("restart");
    for (let i = 0; i < 20; i++) {
      now += 2.5 * MINUTE;
      expect(p.onExit(now, now - 100).action).toBe("restart");
    }
  });

  test("a worker that stayed healthy long enough resets the backoff to immediate", () => {
    const p = policy({ healthyResetMs: 5 * MINUTE });
    let now = 9_000_000;
    expect(p.onExit(now, now - 100)).toMatchObject({ delayMs: 0, attempt: 1 });
    now += 1_000;
    expect(p.onExit(now, now - 100)).toMatchObject({ delayMs: 500, attempt: 2 });
    now += 1_000;
    expect(p.onExit(now, now - 100)).toMatchObject({ delayMs: 1_000, attempt: 3 });
    now += 6 * MINUTE;
    expect(p.onExit(now, now - 6 * MINUTE)).toMatchObject({ action: "restart", delayMs: 0, attempt: 1 });
    now += 1_000;
    expect(p.onExit(now, now - 100)).toMatchObject({ delayMs: 500, attempt: 2 });
  });

  test("jitter spreads the delay within ±jitter of the backoff", () => {
    const low = policy({ random: () => 0, jitter: 0.2 });
    const high = policy({ random: () => 1, jitter: 0.2 });
    for (const p of [low, high]) p.onExit(0, -100);
    expect(low.onExit(1_000, 900)).toMatchObject({ delayMs: 400 });
    expect(high.onExit(1_000, 900)).toMatchObject({ delayMs: 600 });
  });
});
