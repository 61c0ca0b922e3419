import { afterEach, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { ClientGoneError } from "../../src/proxy/upstream/clientGone.ts";
import { type DispatchPlan, type DispatchSettings, dispatch } from "../../src/proxy/upstream/dispatcher.ts";
import type { ProviderRuntime } from "../../src/proxy/upstream/providerRuntime.ts";

// An attempt asks after its client only from 25 ms in; the dispatcher asks before every further
// attempt, so a client that left gets no retry and no failover call.

const servers: Server<undefined>[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop(true);
});

function upstream(answer: () => Response | Promise<Response>): { port: number; hits: () => number } {
  let hits = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (request) => {
      hits++;
      await request.text();
      return answer();
    },
  });
  servers.push(server);
  return { port: server.port!, hits: () => hits };
}

const timeouts = { connect_ms: 10_000, first_byte_ms: 10_000, idle_ms: 10_000, total_ms: 10_000 };

/** Just what the dispatcher reads of a provider; its breaker counts the slots taken and given back (a half-open probe's). */
function provider(name: string, port: number) {
  const breaker = {
    held: 0,
    state: () => "closed",
    tryAcquire: () => ++breaker.held > 0,
    release: () => {
      breaker.held--;
    },
    onSuccess() {},
  };
  const runtime = {
    name,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    completionUrl: `http://127.0.0.1:${port}/v1/chat/completions`,
    config: { wire: "chat", api_key: "k" },
    timeouts,
    quirks: new Set<string>(),
    requests: 0,
    authFailed: false,
    rateLimit: { remainingMs: () => 0, clear() {}, limited() {} },
    breaker,
    health: { record() {} },
  };
  return { runtime: runtime as unknown as ProviderRuntime, breaker };
}

function settings(failures: string[]): DispatchSettings {
  return {
    baseMs: 1,
    maxMs: 5,
    retryAfterCapMs: 1_000,
    maxAttemptsPerProvider: 3,
    maxTotalAttempts: 5,
    clientRetryAfterCapMs: 1_000,
    onQuirk() {},
    onFailure: (p, failure) => {
      failures.push(`${p.name}:${failure.kind}`);
    },
  };
}

function plan(routes: ProviderRuntime[], client: { signal: AbortSignal }): DispatchPlan {
  return {
    routes: routes.map((p) => ({ provider: p, upstreamModel: "m" })),
    stream: false,
    payloads: { chat: { object: { model: "m", messages: [] }, raw: '{"model":"m","messages":[]}' } },
    clientHeaders: new Headers(),
    client,
  };
}

describe("a client that left before its dispatch moved on", () => {
  test("gets no call to the next provider after a failover-worthy answer, and the provider's slot goes back", async () => {
    const first = upstream(() => new Response('{"error":{"message":"no such model"}}', { status: 404 }));
    const second = upstream(() => Response.json({ choices: [] }));
    const a = provider("a", first.port);
    const b = provider("b", second.port);
    const gone = new AbortController();
    gone.abort();
    const failures: string[] = [];
    const error = await dispatch(plan([a.runtime, b.runtime], gone), settings(failures)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ClientGoneError);
    // The first call goes (its attempt asks 25 ms in, when a slow machine may not have answered
    // it yet); nothing goes after it.
    expect(first.hits()).toBeLessThanOrEqual(1);
    expect(second.hits()).toBe(0);
    expect(failures.filter((f) => f !== "a:http_4xx")).toEqual([]);
    expect(b.breaker.held).toBe(0);
  });

  test("gets no retry at the same provider, however short the backoff", async () => {
    const failing = upstream(() => new Response("busy", { status: 503 }));
    const a = provider("a", failing.port);
    const client = new AbortController();
    const failures: string[] = [];
    const dispatched = dispatch(plan([a.runtime], client), settings(failures)).then(
      () => undefined,
      (e: unknown) => e,
    );
    client.abort();
    expect(await dispatched).toBeInstanceOf(ClientGoneError);
    expect(failing.hits()).toBeLessThanOrEqual(1);
    expect(failures.filter((f) => f !== "a:http_5xx")).toEqual([]);
  });
});
