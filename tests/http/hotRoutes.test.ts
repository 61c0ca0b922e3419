import { afterEach, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { type Context, Hono } from "hono";
import { createApp } from "../../src/http/app.ts";
import { appDeps } from "./appHarness.ts";

/**
 * A mount whose POST /run is also a hot route, as the proxy's model calls are: the worker's fetch
 * serves it without the router. Every answer must be the one the app itself gives.
 */
function runMount(ran: string[]) {
  const app = new Hono();
  const run = async (c: Context): Promise<Response> => {
    const body = await c.req.text();
    if (body === "throw") throw new Error("the handler failed");
    ran.push(body);
    return c.json({ ran: body });
  };
  app.post("/run", run);
  return { path: "/v1", app, hot: new Map([["POST /run", run]]), bodyLimitBytes: 64 };
}

interface Lanes {
  url: string;
  /** The worker's fetch (hot routes served beside the app). */
  hot: Server<undefined>;
  /** The app alone. */
  plain: Server<undefined>;
  ran: string[];
  metrics(): Promise<string>;
}

let lanes: Lanes | undefined;
afterEach(async () => {
  await lanes?.hot.stop(true);
  await lanes?.plain.stop(true);
  lanes = undefined;
});

function start(overrides: Parameters<typeof appDeps>[0] = {}): Lanes {
  const ran: string[] = [];
  const created = createApp(appDeps({ mounts: [runMount(ran)], ...overrides }));
  const hot = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request, server) => created.fetch(request, server) });
  const plain = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request, server) => created.app.fetch(request, server) });
  const url = `http://127.0.0.1:${hot.port}`;
  return { url, hot, plain, ran, metrics: async () => (await fetch(`${url}/metrics`)).text() };
}

/** The same request to both lanes: status and body of each. */
type Init = Omit<RequestInit, "body"> & { host?: string; body?: string | (() => ReadableStream<Uint8Array>) };

async function both(l: Lanes, path: string, init: Init = {}) {
  const answer = async (server: Server<undefined>) => {
    const headers = new Headers(init.headers);
    if (init.host) headers.set("host", init.host.replace("PORT", String(server.port)));
    const body = typeof init.body === "function" ? init.body() : init.body;
    const response = await fetch(`http://127.0.0.1:${server.port}${path}`, { method: "POST", ...init, headers, body });
    // Messages may name the port the request came to: the two lanes listen on two.
    const text = (await response.text()).replaceAll(String(server.port), "PORT");
    return { status: response.status, body: text, www: response.headers.get("www-authenticate") };
  };
  return { hot: await answer(l.hot), plain: await answer(l.plain) };
}

describe("hot routes", () => {
  test("served without the router, answered and counted as the app does", async () => {
    lanes = start();
    const { hot, plain } = await both(lanes, "/v1/run?x=1", { body: "hello" });
    expect(hot).toEqual(plain);
    expect(hot).toMatchObject({ status: 200, body: '{"ran":"hello"}' });
    expect(lanes.ran).toEqual(["hello", "hello"]);
    // One count per lane: the hot lane counts under the route's template as the router does.
    expect(await lanes.metrics()).toContain('agentd_http_requests_total{method="POST",route="/v1/run",status="200"} 2');
  });

  test("every refusal of the gate holds on the hot lane, before the handler runs", async () => {
    lanes = start();
    const cases: Array<[string, Init, number]> = [
      ["another host name (DNS rebinding)", { host: "evil.example:PORT", body: "x" }, 421],
      ["a cross-site origin", { headers: { origin: "http://evil.example", "sec-fetch-site": "cross-site" }, body: "x" }, 403],
      ["a body over the mount's limit", { body: "y".repeat(65) }, 413],
      [
        "a chunked body over the mount's limit",
        {
          body: () =>
            new ReadableStream({
              start(controller) {
                controller.enqueue(new TextEncoder().encode("z".repeat(65)));
                controller.close();
              },
            }),
        },
        413,
      ],
    ];
    for (const [name, init, status] of cases) {
      const { hot, plain } = await both(lanes, "/v1/run", init);
      expect({ name, ...hot }).toEqual({ name, ...plain });
      expect({ name, status: hot.status }).toEqual({ name, status });
    }
    expect(lanes.ran).toEqual([]);
    const metrics = await lanes.metrics();
    expect(metrics).toContain('agentd_http_requests_total{method="POST",route="/v1/run",status="421"} 2');
    expect(metrics).toContain('agentd_http_requests_total{method="POST",route="/v1/run",status="413"} 4');
  });

  test("a required token and the agent-peer rules hold on the hot lane", async () => {
    lanes = start({
      requiredToken: "tok-123",
      agentPeers: {
        paths: [],
        directCallPaths: [/^\/v1\/run$/],
        commandUid: undefined,
        decisionToken: undefined,
        directCallToken: "tok-123",
      },
    });
    const without = await both(lanes, "/v1/run", { body: "x" });
    expect(without.hot).toEqual(without.plain);
    expect(without.hot.status).toBe(401);
    expect(without.hot.www).toContain("Bearer");
    const withToken = await both(lanes, "/v1/run", { body: "ok", headers: { authorization: "Bearer tok-123" } });
    expect(withToken.hot).toEqual(withToken.plain);
    expect(withToken.hot.status).toBe(200);
    expect(lanes.ran).toEqual(["ok", "ok"]);
  });

  test("a handler that throws gets the app's error answer; an escaped path is read as the router reads it", async () => {
    lanes = start();
    const thrown = await both(lanes, "/v1/run", { body: "throw" });
    expect(thrown.hot).toEqual(thrown.plain);
    expect(thrown.hot.status).toBe(500);
    expect(JSON.parse(thrown.hot.body)).toMatchObject({ error: { code: "internal_error" } });
    expect(thrown.hot.body).not.toContain("the handler failed");
    const escaped = await both(lanes, "/v1/%72un", { body: "escaped" });
    expect(escaped.hot).toEqual(escaped.plain);
    expect(escaped.hot.status).toBe(200);
  });
});

test("a hot route that another middleware would also run stays the app's, so the middleware still runs", async () => {
  const ran: string[] = [];
  const seen: string[] = [];
  const watcher = new Hono();
  watcher.use("*", async (c, next) => {
    seen.push(c.req.path);
    await next();
  });
  const created = createApp(appDeps({ mounts: [{ path: "/", app: watcher }, runMount(ran)] }));
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request, bunServer) => created.fetch(request, bunServer) });
  try {
    const response = await fetch(`http://127.0.0.1:${server.port}/v1/run`, { method: "POST", body: "through the app" });
    expect(response.status).toBe(200);
    expect(ran).toEqual(["through the app"]);
    expect(seen).toEqual(["/v1/run"]);
  } finally {
    await server.stop(true);
  }
});

test("a route that makes no answer is an error on the app lane, not an empty 200", async () => {
  const app = new Hono();
  // A handler bug: it returns nothing. Hono refuses a request nobody answered ("not finalized").
  app.post("/silent", (async () => undefined) as unknown as (c: Context) => Promise<Response>);
  const created = createApp(appDeps({ mounts: [{ path: "/v1", app }] }));
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request, s) => created.fetch(request, s) });
  try {
    const response = await fetch(`http://127.0.0.1:${server.port}/v1/silent`, { method: "POST", body: "x" });
    expect(response.status).toBe(500);
  } finally {
    await server.stop(true);
  }
});
