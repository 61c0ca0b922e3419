import { describe, expect, test } from "bun:test";
import { UpstreamAttempt } from "../../src/proxy/upstream/upstreamAttempt.ts";

const timeouts = { connect_ms: 10_000, first_byte_ms: 10_000, idle_ms: 10_000, total_ms: 10_000 };

describe("an upstream attempt and its client", () => {
  test("an attempt that ends at once never asks its client for a signal", () => {
    let asked = 0;
    const client = {
      get signal() {
        asked++;
        return new AbortController().signal;
      },
    };
    const attempt = new UpstreamAttempt(client, timeouts);
    attempt.finish();
    expect(asked).toBe(0);
  });

  test("a client that left before the watch starts aborts the call when it does", async () => {
    const client = new AbortController();
    client.abort();
    const upstream = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Promise<Response>(() => {}) });
    try {
      const attempt = new UpstreamAttempt(client, timeouts);
      const started = performance.now();
      const failure = await attempt.send(`http://127.0.0.1:${upstream.port}/v1/chat/completions`, {}, "{}", false).then(
        () => undefined,
        (error: unknown) => attempt.sendFailed(error),
      );
      expect(failure?.name).toBe("ClientGoneError");
      // The watch starts 25 ms into the call; the bound leaves room for a slow machine.
      expect(performance.now() - started).toBeLessThan(2_000);
    } finally {
      await upstream.stop(true);
    }
  });

  test("a call that lasts follows its client: the client leaving then aborts it at once", async () => {
    const client = new AbortController();
    const upstream = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Promise<Response>(() => {}) });
    try {
      const attempt = new UpstreamAttempt(client, timeouts);
      const sent = attempt.send(`http://127.0.0.1:${upstream.port}/v1/chat/completions`, {}, "{}", false).then(
        () => undefined,
        (error: unknown) => attempt.sendFailed(error),
      );
      await Bun.sleep(100);
      const left = performance.now();
      client.abort();
      expect((await sent)?.name).toBe("ClientGoneError");
      expect(performance.now() - left).toBeLessThan(1_000);
    } finally {
      await upstream.stop(true);
    }
  });
});
