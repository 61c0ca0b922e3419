import { afterEach, describe, expect, test } from "bun:test";
import { removeTempDirs } from "../support/tempDir.ts";
import { type ClientPath, startPath } from "./clientPaths.ts";
import { runCodex } from "./codexRun.ts";

/**
 * The Codex CLI (custom provider, as docs/http-api.md configures it) against a rate-limited
 * upstream and a breaker the watchdog holds open for 300 s, with agentd's default retries and
 * Retry-After cap: the turn fails with Codex's own error instead of sitting silent.
 */

let path: ClientPath | undefined;

afterEach(async () => {
  await path?.close();
  path = undefined;
  removeTempDirs();
});

describe("Codex CLI and honest waits", () => {
  test("a 429 with Retry-After: 1: the turn fails naming the 429; the breaker stays closed", async () => {
    path = startPath("responses", { max_attempts: 4 });
    path.up.setDefault({ kind: "http_error", status: 429, headers: { "retry-after": "1" }, message: "Rate limit reached" });
    const started = performance.now();
    const run = await runCodex({ baseURL: path.baseURL, prompt: "hi" });
    const failed = run.events.find((e) => e.type === "turn.failed");
    console.log(
      `Codex × responses × 429 retry-after 1 → ${failed?.error?.message} (${((performance.now() - started) / 1000).toFixed(1)} s)`,
    );
    expect(run.exitCode).not.toBe(0);
    expect(failed?.error?.message).toContain("429");
    expect(path.h.events("breaker.open")).toHaveLength(0);
  }, 60_000);

  test("a breaker held open 300 s: the turn fails naming the 503, without waiting out the cooldown", async () => {
    path = startPath("chat", { max_attempts: 4 });
    const opened = await fetch(`${path.h.url}/api/admin/proxy/providers/chat/breaker/open`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ cooldown_ms: 300_000, reason: "breaker-on-5xx-storm" }),
    });
    expect(opened.status).toBe(200);
    const started = performance.now();
    const run = await runCodex({ baseURL: path.baseURL, prompt: "hi" });
    const failed = run.events.find((e) => e.type === "turn.failed");
    console.log(`Codex × chat × breaker open 300 s → ${failed?.error?.message} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
    expect(run.exitCode).not.toBe(0);
    expect(failed?.error?.message).toContain("503");
    expect(path.up.completionRequests()).toHaveLength(0);
  }, 60_000);
});
