import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary } from "../support/binary.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { api, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// A sustained 429 from the only provider of a model: the default switch-on-rate-limit rule fires,
// but switching would turn the 429s into 503s for five minutes, so the watchdog skips it and says so.

let daemon: DaemonProcess | undefined;
let upstream: ScriptedUpstream | undefined;

afterEach(async () => {
  await daemon?.stop();
  await upstream?.close();
  daemon = upstream = undefined;
}, 60_000);
afterAll(removeTempDirs);

describe("switch-on-rate-limit with one provider, end to end against ./agentd", () => {
  test("the switch is skipped: no breaker forced open, the incident says why", async () => {
    await ensureBinary();
    upstream = startScriptedUpstream({ models: ["gpt-x"] });
    // Retry-After 0: each request reaches the upstream at once, so the rule's ten come in well under a
    // second (a longer wait, answered by agentd itself meanwhile, is covered in tests/proxy/clientRateLimits).
    upstream.setDefault({ kind: "http_error", status: 429, headers: { "retry-after": "0" }, message: "slow down" });
    const home = makeTempDir("agentd-wd-429-");
    const dataDir = join(home, "data");
    mkdirSync(dataDir);
    daemon = await startDaemon({
      dataDir,
      config: {
        providers: [{ name: "primary", base_url: upstream.url, models: ["gpt-x"] }],
        watchdog: { tick_ms: 100 },
      },
    });
    const url = daemon.url;
    const provider = async () =>
      (
        await api<{ incidents: Array<{ id: number; fingerprint: string; action: string | null }> }>(url, "/api/incidents?state=unresolved")
      ).incidents.find((i) => i.fingerprint === "provider:primary" && i.action === "switch_provider");
    // Enough rate-limited requests for the rule (10 within 60 s); each answer is the client's own 429 or 503.
    const statuses: number[] = [];
    const decided = await waitFor(
      "the rule's decision",
      async () => {
        const response = await fetch(`${url}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "gpt-x", messages: [{ role: "user", content: "hi" }] }),
        });
        statuses.push(response.status);
        await response.body?.cancel();
        return provider();
      },
      { timeoutMs: 90_000, intervalMs: 50 },
    );
    expect(statuses).toContain(429);
    const skipped = await waitFor(
      "the skipped switch",
      async () =>
        (await api<{ timeline: Array<{ kind: string; message: string }> }>(url, `/api/incidents/${decided.id}`)).timeline.find(
          (e) => e.kind === "action_skipped",
        ),
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(skipped.message).toBe(
      "switch_provider skipped: no other provider serves model gpt-x; switching primary away would answer 503 for 300 s instead of the upstream's own rate limit",
    );
    expect(daemon.lines.filter((r) => r.event === "proxy.admin" && r.action === "breaker_open")).toEqual([]);
  }, 180_000);
});
