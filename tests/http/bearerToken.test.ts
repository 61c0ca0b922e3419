import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { chmodSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureApiToken, isLoopbackAddress } from "../../src/http/token.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { startApp, type RunningApp } from "./appHarness.ts";

let running: RunningApp | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});
afterAll(removeTempDirs);

const TOKEN = "test-token-0123456789abcdef";
const ROUTES = ["/readyz", "/health", "/metrics", "/status", "/no-such-route"];

describe("bearer token on a non-loopback bind", () => {
  test("every route but /livez answers 401 JSON without the token", async () => {
    running = startApp({ requiredToken: TOKEN });
    const livez = await fetch(`${running.url}/livez`);
    expect(livez.status).toBe(200);
    for (const path of ROUTES) {
      const response = await fetch(`${running.url}${path}`);
      expect({ path, status: response.status }).toEqual({ path, status: 401 });
      expect(response.headers.get("www-authenticate")).toBe('Bearer realm="agentd"');
      const body = (await response.json()) as { error: { code: string; type: string; message: string } };
      expect(body.error.code).toBe("unauthorized");
      expect(body.error.type).toBe("authentication_error");
      expect(body.error.message).toContain("Authorization: Bearer");
    }
  });

  test("the right token opens every route; a wrong one does not", async () => {
    running = startApp({ requiredToken: TOKEN });
    for (const path of ["/readyz", "/health", "/metrics"]) {
      const response = await fetch(`${running.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect({ path, status: response.status }).toEqual({ path, status: 200 });
    }
    expect((await fetch(`${running.url}/no-such-route`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
    expect((await fetch(`${running.url}/health`, { headers: { authorization: `bearer ${TOKEN}` } })).status).toBe(200);
    expect((await fetch(`${running.url}/health`, { headers: { authorization: `Bearer ${TOKEN}x` } })).status).toBe(401);
    expect((await fetch(`${running.url}/health`, { headers: { authorization: `Bearer ${TOKEN.slice(0, -1)}` } })).status).toBe(401);
    expect((await fetch(`${running.url}/health`, { headers: { authorization: TOKEN } })).status).toBe(401);
  });

  test("on /v1/messages the token may come as x-api-key (Anthropic's clients); nowhere else", async () => {
    running = startApp({ requiredToken: TOKEN });
    const post = (path: string, headers: Record<string, string>) => fetch(`${running!.url}${path}`, { method: "POST", headers });
    // No proxy is mounted in this app: 404 means the token was accepted, 401 that it was not.
    expect((await post("/v1/messages", { "x-api-key": TOKEN })).status).toBe(404);
    expect((await post("/v1/messages/count_tokens", { "x-api-key": TOKEN })).status).toBe(404);
    expect((await post("/v1/messages", { "x-api-key": "wrong" })).status).toBe(401);
    expect((await post("/v1/chat/completions", { "x-api-key": TOKEN })).status).toBe(401);
    expect((await fetch(`${running.url}/health`, { headers: { "x-api-key": TOKEN } })).status).toBe(401);
  });

  test("the page's cookie is accepted in place of the header", async () => {
    running = startApp({ requiredToken: TOKEN });
    expect((await fetch(`${running.url}/health`, { headers: { cookie: `agentd_token=${TOKEN}` } })).status).toBe(200);
    expect((await fetch(`${running.url}/health`, { headers: { cookie: "agentd_token=wrong" } })).status).toBe(401);
  });

  test("without a required token (loopback bind) nothing asks for one", async () => {
    running = startApp();
    expect((await fetch(`${running.url}/health`)).status).toBe(200);
  });
});

describe("the token file", () => {
  test("created at first start with mode 0600, then reused", () => {
    const dataDir = join(makeTempDir(), "data");
    const first = ensureApiToken(dataDir);
    expect(first.created).toBe(true);
    expect(first.path).toBe(join(dataDir, "token"));
    expect(first.token.length).toBeGreaterThanOrEqual(32);
    expect(statSync(first.path).mode & 0o777).toBe(0o600);
    const second = ensureApiToken(dataDir);
    expect(second).toEqual({ token: first.token, path: first.path, created: false });
    expect(ensureApiToken(makeTempDir()).token).not.toBe(first.token);
  });

  test("a file of ours too short to be a real token is replaced, still 0600", () => {
    const dataDir = makeTempDir();
    writeFileSync(join(dataDir, "token"), "short\n", { mode: 0o600 });
    const token = ensureApiToken(dataDir);
    expect(token.created).toBe(true);
    expect(token.token).not.toBe("short");
    expect(statSync(token.path).mode & 0o777).toBe(0o600);
  });

  test("a token others could have written is refused with the reason", () => {
    const readable = makeTempDir();
    writeFileSync(join(readable, "token"), "planted-token-0123456789abcdef\n", { mode: 0o644 });
    expect(() => ensureApiToken(readable)).toThrow(/mode 644, want 600/);
    const shared = makeTempDir();
    chmodSync(shared, 0o777);
    expect(() => ensureApiToken(shared)).toThrow(/writable by other users \(mode 777\)/);
    const linked = makeTempDir();
    symlinkSync(join(readable, "token"), join(linked, "token"));
    expect(() => ensureApiToken(linked)).toThrow(/is a symbolic link/);
  });
});

describe("which binds count as loopback", () => {
  test("127.0.0.1, ::1 and localhost do; anything else, the rest of 127/8 included, does not", () => {
    for (const address of ["127.0.0.1", "::1", "[::1]", "localhost", "::ffff:127.0.0.1"])
      expect({ address, loopback: isLoopbackAddress(address) }).toEqual({ address, loopback: true });
    for (const address of ["0.0.0.0", "::", "10.0.0.5", "192.168.1.1", "128.0.0.1", "127.0.0.2", "127.1.2.3", "example.com"])
      expect({ address, loopback: isLoopbackAddress(address) }).toEqual({ address, loopback: false });
  });
});
