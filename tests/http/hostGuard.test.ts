import { afterEach, describe, expect, test } from "bun:test";
import { Hono } from "hono";
import { hostnameOf } from "../../src/http/hostGuard.ts";
import { waitFor } from "../support/waitFor.ts";
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
  fetch(`${url}/api/pty`, {
    method: "POST",
    headers: { host, origin: `http://${host}`, "sec-fetch-site": "same-origin", "content-type": "application/json" },
    body: '{"cmd":"id"}',
  });

describe("DNS rebinding on a loopback bind", () => {
  test("a request addressed to another name is refused before any route runs", async () => {
    const ran: string[] = [];
    running = startApp({ mounts: [{ path: "/api/pty", app: commandRoute(ran) }] });
    const port = new URL(running.url).port;
    const refused = await post(running.url, `evil.example:${port}`);
    expect(refused.status).toBe(421);
    expect(await refused.json()).toMatchObject({ error: { code: "bad_host" } });
    expect(ran).toEqual([]);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`])
      expect((await post(running.url, host)).status).toBe(200);
    expect(ran).toHaveLength(3);
  });

  test("a loopback Host accepted once does not open the door to another name afterwards", async () => {
    const ran: string[] = [];
    running = startApp({ mounts: [{ path: "/api/pty", app: commandRoute(ran) }] });
    const port = new URL(running.url).port;
    // The check remembers the last loopback Host it judged: each other Host is still judged, in any order.
    for (const host of [
      `127.0.0.1:${port}`,
      `evil.example:${port}`,
      `127.0.0.1:${port}`,
      `127.0.0.1.evil.example:${port}`,
      `localhost:${port}`,
    ])
      expect((await post(running.url, host)).status).toBe(host.includes("evil") ? 421 : 200);
    expect(ran).toHaveLength(3);
  });

  test("with a required token the token decides, whatever the Host", async () => {
    running = startApp({ requiredToken: "a-long-enough-test-token" });
    const port = new URL(running.url).port;
    const response = await fetch(`${running.url}/health`, {
      headers: { host: `agentd.example.net:${port}`, authorization: "Bearer a-long-enough-test-token" },
    });
    expect(response.status).toBe(200);
  });

  test("a request without Host (an HTTP/1.0 probe) is not refused nor an error; a fully qualified localhost. passes", async () => {
    running = startApp();
    const { port } = new URL(running.url);
    const socket = await Bun.connect({
      hostname: "127.0.0.1",
      port: Number(port),
      socket: {
        data: (_s, data) => {
          answer += data.toString();
        },
      },
    });
    let answer = "";
    socket.write("GET /livez HTTP/1.0\r\n\r\n");
    await waitFor("the answer's head", () => answer.includes("\r\n\r\n") || undefined, { timeoutMs: 5000 });
    socket.end();
    // Bun cannot build the request's URL without a Host, so no route matches (404); what matters
    // here is that the guard lets it through without a 500 (which opened an incident) or a 421.
    expect(answer).toMatch(/^HTTP\/1\.1 (200|404) /);
    expect((await fetch(`${running.url}/livez`, { headers: { host: `localhost.:${port}` } })).status).toBe(200);
  });

  test("host names are read from Host headers of every shape", () => {
    expect(hostnameOf("127.0.0.1:7070")).toBe("127.0.0.1");
    expect(hostnameOf("[::1]:7070")).toBe("::1");
    expect(hostnameOf("localhost")).toBe("localhost");
    expect(hostnameOf("::1")).toBe("::1");
  });
});
