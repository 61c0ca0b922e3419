import { afterEach, describe, expect, test } from "bun:test";
import { Hono } from "hono";
import { AgentdError } from "../../src/core/errors/index.ts";
import { setLogSink } from "../../src/core/log/index.ts";
import { startApp, type RunningApp } from "./appHarness.ts";

let running: RunningApp | undefined;
const logged: string[] = [];
afterEach(async () => {
  await running?.stop();
  running = undefined;
  setLogSink((line) => process.stdout.write(`${line}\n`));
  logged.length = 0;
});

/** A capability's routes, mounted like the proxy's: reads bodies and throws on cue. */
function testMount() {
  const app = new Hono();
  app.post("/echo", async (c) => c.json({ bytes: (await c.req.arrayBuffer()).byteLength }));
  app.get("/typed", () => {
    throw new AgentdError("file_not_found", "No file called x", { param: "path", details: { name: "x" } });
  });
  app.get("/crash", () => {
    throw new Error("secret internals at /srv/app.ts:12");
  });
  return app;
}

function slowBody(totalBytes: number, chunkBytes = 1024): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= totalBytes) return controller.close();
      const size = Math.min(chunkBytes, totalBytes - sent);
      sent += size;
      controller.enqueue(new Uint8Array(size).fill(120));
    },
  });
}

describe("request body limit", () => {
  test("a body under the limit reaches the route", async () => {
    running = startApp({ mounts: [{ path: "/api", app: testMount() }] });
    const response = await fetch(`${running.url}/api/echo`, { method: "POST", body: "x".repeat(4000) });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ bytes: 4000 });
  });

  test("a body over the limit (Content-Length) is 413 JSON with code body_too_large", async () => {
    running = startApp({ mounts: [{ path: "/api", app: testMount() }] });
    const response = await fetch(`${running.url}/api/echo`, { method: "POST", body: "x".repeat(5000) });
    expect(response.status).toBe(413);
    expect(response.headers.get("content-type")).toStartWith("application/json");
    expect(await response.json()).toEqual({
      error: {
        message: "Request body is larger than the limit of 4096 bytes",
        type: "request_too_large",
        param: null,
        code: "body_too_large",
      },
    });
  });

  test("a streamed body without Content-Length is cut at the limit as well", async () => {
    running = startApp({ mounts: [{ path: "/api", app: testMount() }] });
    const response = await fetch(`${running.url}/api/echo`, { method: "POST", body: slowBody(64 * 1024), duplex: "half" } as RequestInit);
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("body_too_large");
  });
});

describe("errors are JSON with a stable code", () => {
  test("an unknown route is 404 JSON", async () => {
    running = startApp();
    const response = await fetch(`${running.url}/no/such/thing`);
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toStartWith("application/json");
    expect(await response.json()).toEqual({
      error: { message: "No route for GET /no/such/thing", type: "not_found_error", param: null, code: "not_found" },
    });
    const post = await fetch(`${running.url}/livez`, { method: "POST" });
    expect(post.status).toBe(404);
    expect(((await post.json()) as { error: { code: string } }).error.code).toBe("not_found");
  });

  test("an AgentdError becomes its registry status, code, message, param and details", async () => {
    running = startApp({ mounts: [{ path: "/api", app: testMount() }] });
    const response = await fetch(`${running.url}/api/typed`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: { message: "No file called x", type: "not_found_error", param: "path", code: "file_not_found", details: { name: "x" } },
    });
  });

  test("any other error is a 500 without the stack or message, and is logged", async () => {
    setLogSink((line) => logged.push(line));
    running = startApp({ mounts: [{ path: "/api", app: testMount() }] });
    const response = await fetch(`${running.url}/api/crash`);
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      error: { message: "Internal error; see the agentd log", type: "server_error", param: null, code: "internal_error" },
    });
    expect(text).not.toContain("secret internals");
    const record = logged.map((line) => JSON.parse(line)).find((r) => r.event === "http.unhandled_error");
    expect(record).toMatchObject({
      level: "error",
      component: "test.web",
      method: "GET",
      path: "/api/crash",
      error: { name: "Error", message: "secret internals at /srv/app.ts:12" },
    });
  });

  test("a loopback-only mount answers a loopback caller", async () => {
    running = startApp({ mounts: [{ path: "/admin", app: testMount(), loopbackOnly: true }] });
    const response = await fetch(`${running.url}/admin/echo`, { method: "POST", body: "abc" });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ bytes: 3 });
  });
});
