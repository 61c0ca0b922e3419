import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ensureBinary } from "../support/binary.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { api, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// An upstream 500 storm through the compiled ./agentd: the worker's proxy logs each failure, the
// supervisor's watchdog reads those lines, tier 1 opens the provider's breaker through the
// loopback admin route, and the verdict is verified once the failures stop.

const MAX_REQUESTS = 40;

let upstream: ScriptedUpstream;
let daemon: DaemonProcess;

interface ProviderView {
  name: string;
  state: string;
  breaker: { state: string };
}

interface IncidentView {
  id: number;
  action: string | null;
  verdict: string | null;
  tier: number | null;
  fingerprint: string;
  pattern: string | null;
  count: number;
}

const incidents = async () => (await api<{ incidents: IncidentView[] }>(daemon.url, "/api/incidents?limit=500")).incidents;

const provider = async () =>
  (await api<{ providers: ProviderView[] }>(daemon.url, "/api/admin/proxy/providers")).providers.find((p) => p.name === "storm")!;

beforeAll(async () => {
  await ensureBinary();
  upstream = startScriptedUpstream();
  upstream.setDefault({ kind: "http_error", status: 500, message: "scripted outage" });
  daemon = await startDaemon({
    dataDir: makeTempDir("agentd-storm-data-"),
    config: {
      providers: [{ name: "storm", base_url: upstream.url, api_key: "storm-key" }],
      // One attempt per request, and a proxy breaker that would need far more failures than the
      // storm sends: the breaker this test sees open was opened by the watchdog.
      proxy: { max_attempts: 1, max_total_attempts: 1, retry_base_ms: 1, retry_max_ms: 1, breaker: { failures: 1000 } },
      watchdog: {
        probe: { interval_ms: 200, timeout_ms: 2000, failure_threshold: 3 },
        tick_ms: 100,
        verify_window_s: 2,
        resolve_after_s: 3,
        group_window_s: 60,
      },
    },
  });
}, 120_000);

afterAll(async () => {
  await daemon?.stop();
  await upstream?.close();
  removeTempDirs();
}, 60_000);

describe("watchdog against an upstream 500 storm, end to end", () => {
  test("tier 1 opens the breaker, the incident records open_breaker and its verdict becomes success", async () => {
    expect((await provider()).state).toBe("ok");
    const statuses: number[] = [];
    let incident: IncidentView | undefined;
    // One request at a time, each waited for until the watchdog has counted it, so no failure
    // arrives while the action runs: the verdict depends on the storm, not on timing.
    for (let i = 0; i < MAX_REQUESTS && incident?.action !== "open_breaker"; i++) {
      const response = await fetch(`${daemon.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: `storm ${i}` }] }),
        signal: AbortSignal.timeout(30_000),
      });
      await response.arrayBuffer();
      statuses.push(response.status);
      incident = await waitFor(`the watchdog to count failure ${i + 1}`, async () => {
        const found = (await incidents()).find((x) => x.fingerprint === "provider:storm");
        return found && found.count >= i + 1 ? found : undefined;
      });
    }
    const opened = await waitFor("the breaker to open", async () => (await provider()).breaker.state === "open", {
      timeoutMs: 30_000,
    }).catch(() => false);
    expect(opened).toBe(true);
    expect(statuses.length).toBeGreaterThanOrEqual(5);
    expect(statuses.every((status) => status >= 500)).toBe(true);
    const view = await provider();
    expect(view.state).toBe("open");

    const action = daemon.lines.find((r) => r.event === "watchdog.action" && r.action === "open_breaker");
    expect(action).toBeDefined();

    // Requests now fail fast at the proxy: nothing more reaches the upstream.
    const seen = upstream.completionRequests().length;
    const refused = await fetch(`${daemon.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: "after" }] }),
    });
    await refused.arrayBuffer();
    expect(refused.status).toBe(503);
    expect(upstream.completionRequests().length).toBe(seen);

    const decided = await waitFor(
      "the open_breaker incident's verdict",
      async () => {
        const found = (await incidents()).find((i) => i.action === "open_breaker");
        return found && found.verdict !== "pending" && found.verdict !== null ? found : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(decided).toMatchObject({ tier: 1, action: "open_breaker", verdict: "success", fingerprint: "provider:storm" });
    expect(decided.pattern).toContain("upstream.server_error");
    // The breaker the watchdog opened stays open: opening it must not make the worker look
    // unhealthy and get it restarted, which would forget the breaker and let the storm resume.
    expect(daemon.lines.filter((r) => r.event === "worker.restart").map((r) => r.reason)).toEqual([]);
    expect((await provider()).breaker.state).toBe("open");
  }, 180_000);
});
