import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { personHeaders, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";
import { ensureBinary, runAgentd } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { freePort } from "../telemetry/support/monitoringServers.ts";

// One verdict on every surface of the compiled binary: `agentd health`, `agentd status`, /health,
// the page (banner and tab title), /badge.svg and /metrics give the same word and the same exit
// code, while a critical check fails and once it passes. /health's status code and
// `agentd health --self` stay agentd's own health, which a container's health check acts on.

let daemon: DaemonProcess;
const port = freePort();
let listener: { stop(closeActive?: boolean): void } | undefined;

interface Surfaces {
  health: { code: number; line: string };
  self: { code: number; line: string };
  status: { code: number; first: string; reason: string };
  healthJson: { http: number; own: string; verdict: { status: string; reason: string } };
  pageStatus: string;
  title: string;
  badge: string;
  metric: string;
}

async function surfaces(): Promise<Surfaces> {
  const cli = (...args: string[]) => runAgentd([...args, "--data-dir", daemon.dataDir]);
  const [health, self, status] = await Promise.all([cli("health"), cli("health", "--self"), cli("status")]);
  const healthResponse = await fetch(`${daemon.url}/health`, { headers: personHeaders(daemon.url) });
  const doc = (await healthResponse.json()) as { status: string; verdict: { status: string; reason: string } };
  const html = await (await fetch(`${daemon.url}/status`, { headers: personHeaders(daemon.url, { accept: "text/html" }) })).text();
  const metrics = await (await fetch(`${daemon.url}/metrics`)).text();
  const [first = "", reason = ""] = status.stdout.split("\n");
  return {
    health: { code: health.code, line: (health.stdout + health.stderr).trim() },
    self: { code: self.code, line: (self.stdout + self.stderr).trim() },
    status: { code: status.code, first, reason: reason.trim() },
    healthJson: { http: healthResponse.status, own: doc.status, verdict: doc.verdict },
    pageStatus:
      /id="section-verdict"[^>]*data-status="(\w+)"/.exec(html)?.[1] ??
      /data-status="(\w+)"[^>]*id="section-verdict"/.exec(html)?.[1] ??
      "",
    title: /<title>([^<]*)<\/title>/.exec(html)?.[1] ?? "",
    badge: await (await fetch(`${daemon.url}/badge.svg`)).text(),
    metric: /agentd_verdict\{state="(\w+)"\} 1/.exec(metrics)?.[1] ?? "",
  };
}

beforeAll(async () => {
  await ensureBinary();
  daemon = await startDaemon({
    dataDir: makeTempDir("agentd-one-verdict-"),
    config: {
      watchdog: {
        tick_ms: 100,
        resolve_after_s: 1,
        checks: [{ type: "tcp", name: "db", port, interval_s: 0.2, timeout_ms: 500, failure_threshold: 1, severity: "critical" }],
      },
    },
  });
}, 120_000);

afterAll(async () => {
  listener?.stop(true);
  await daemon?.stop();
  removeTempDirs();
}, 60_000);

describe("one verdict everywhere", () => {
  test("a failing critical check: fail, exit 1, on every surface; agentd itself stays warn (HTTP 200)", async () => {
    await daemon.waitForLine((r) => r.event === "watchdog.incident_opened" && r.incident_component === "check:db");
    const seen = await waitFor("every surface to say fail", async () => {
      const s = await surfaces();
      return s.metric === "fail" && s.healthJson.verdict.status === "fail" && s.status.code === 1 ? s : undefined;
    });
    expect(seen.status.first).toContain(" status FAIL ");
    expect(seen.health.code).toBe(1);
    expect(seen.health.line).toStartWith(`agentd fail: ${seen.status.reason}`);
    expect(seen.health.line).toContain("(agentd itself warn: ");
    expect(seen.healthJson.verdict.reason).toBe(seen.status.reason);
    expect(seen.status.reason).toStartWith("critical incident open: Check db failing");
    expect(seen.pageStatus).toBe("fail");
    expect(seen.title).toMatch(/^FAIL · [^·]+ · critical /);
    expect(seen.badge).toContain("agentd: fail");
    // agentd itself is fine: its /health answers 200 and --self exits 0, so no runtime restarts it.
    expect(seen.healthJson).toMatchObject({ http: 200, own: "warn" });
    expect(seen.self.code).toBe(0);
    expect(seen.self.line).toMatch(/^agentd warn \d+ checks, 0 failing, up /);
    console.log(`fail: health "${seen.health.line}"; status "${seen.status.first.trim()}"`);
  }, 120_000);

  test("once the check passes and its incident resolves: the same lesser verdict, exit 0, everywhere", async () => {
    listener = Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } });
    await daemon.waitForLine((r) => r.event === "watchdog.incident_resolved");
    // pass, or warn where this host leaves the privilege gate open: either way every surface says the same.
    const seen = await waitFor("every surface to leave fail", async () => {
      const s = await surfaces();
      return s.metric !== "fail" && s.healthJson.verdict.status === s.metric && s.status.code === 0 && s.health.code === 0 ? s : undefined;
    });
    const word = seen.metric;
    expect(["pass", "warn"]).toContain(word);
    expect(seen.status.first).toContain(` status ${word.toUpperCase()} `);
    expect(seen.health.line).toStartWith(`agentd ${word}`);
    expect(seen.health.line).not.toContain("critical");
    expect(seen.pageStatus).toBe(word);
    expect(seen.badge).toContain(`agentd: ${word}`);
    expect(seen.self.code).toBe(0);
  }, 120_000);
});
