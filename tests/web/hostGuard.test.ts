import { afterEach, describe, expect, test } from "bun:test";
import { Hono } from "hono";
import { hostnameOf } from "../../src/web/hostGuard.ts";
import { startApp, type RunningApp } from "./appHarness.ts";

let running: RunningApp | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

/** A route standing in for /api/pty: it would run a command if reached. */
function commandRoute(ran: string[]): Hono {
  const app = new Hono();
  app.post("/", async (c) => {
    ran.push(await c.req.text());
    return c.json({ ran: true });
  });
  return app;
}

const post = (url: string, host: string) =>
  fetch(`${url}/api/pty`, { method: "POST", headers: { host, origin: `http://${host}`, "sec-fetch-site": "same-origin", "content-type": "application/json" }, body: '{"cmd":"id"}' });

describe("DNS rebinding on a loopback bind", () => {
  test("a request addressed to another name is refused before any route runs", async () => {
    const ran: string[] = [];
    running = startApp({ mounts: [{ path: "/api/pty", app: commandRoute(ran) }] });
    const port = new URL(running.url).port;
    const refused = await post(running.url, `evil.example:${port}`);
    expect(refused.status).toBe(421);
    expect(await refused.json()).toMatchObject({ error: { code: "bad_host" } });
    expect(ran).toEqual([]);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) expect((await post(running.url, host)).status).toBe(200);
    expect(ran).toHaveLength(3);
  });

  test("with a required token the token decides, whatever the Host", async () => {
    running = startApp({ requiredToken: "a-long-enough-test-token" });
    const port = new URL(running.url).port;
    const response = await fetch(`${running.url}/health`, { headers: { host: `agentd.example.net:${port}`, authorization: "Bearer a-long-enough-test-token" } });
    expect(response.status).toBe(200);
  });

  test("host names are read from Host headers of every shape", () => {
    expect(hostnameOf("127.0.0.1:7070")).toBe("127.0.0.1");
    expect(hostnameOf("[::1]:7070")).toBe("::1");
    expect(hostnameOf("localhost")).toBe("localhost");
    expect(hostnameOf("::1")).toBe("::1");
  });
});
