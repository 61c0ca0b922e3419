import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { api, personHeaders, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";
import { ensureBinary, runAgentd } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { freePort } from "../telemetry/support/monitoringServers.ts";

// A critical tcp check on a port nothing listens on: its incident may not be resolved by hand
// while the check fails (the CLI, the API and the page all refuse, saying why and what to do); once
// the port answers the incident resolves by itself, and a new failure opens a new incident.

let daemon: DaemonProcess;
const port = freePort();
let listener: { stop(closeActive?: boolean): void } | undefined;

beforeAll(async () => {
  await ensureBinary();
  daemon = await startDaemon({
    dataDir: makeTempDir("agentd-resolve-failing-"),
    config: {
      watchdog: {
        tick_ms: 100,
        resolve_after_s: 1,
        checks: [
          {
            type: "tcp",
            name: "db",
            port,
            interval_s: 0.2,
            timeout_ms: 500,
            failure_threshold: 1,
            success_threshold: 1,
            severity: "critical",
          },
        ],
      },
    },
  });
}, 120_000);

afterAll(async () => {
  listener?.stop(true);
  await daemon?.stop();
  removeTempDirs();
}, 60_000);

describe("resolving an incident whose check still fails", () => {
  test("is refused everywhere with the reason; the incident stays open and resolves itself once the check passes", async () => {
    const opened = await daemon.waitForLine((r) => r.event === "watchdog.incident_opened" && r.incident_component === "check:db");
    const id = Number(opened.incident_id);

    const cli = await runAgentd(["incidents", "resolve", String(id), "--data-dir", daemon.dataDir]);
    expect(cli.code).toBe(1);
    expect(cli.stdout).toBe("");
    expect(cli.stderr).toContain(`Incident ${id} stays open: check "db" still fails since `);
    expect(cli.stderr).toContain("agentd silence db 2h");

    const refused = await fetch(`${daemon.url}/api/incidents/${id}/resolve`, { method: "POST", headers: personHeaders(daemon.url) });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("incident_still_failing");
    const page = await fetch(`${daemon.url}/status/incidents/${id}/resolve`, {
      method: "POST",
      headers: personHeaders(daemon.url, { accept: "application/json", origin: daemon.url }),
      redirect: "manual",
    });
    expect(page.status).toBe(409);
    await page.body?.cancel();

    // Acknowledging is still allowed: someone is on it, the paging stays.
    const acked = await api<{ incident: { state: string } }>(daemon.url, `/api/incidents/${id}/ack?by=cli`, { method: "POST", body: {} });
    expect(acked.incident.state).toBe("acknowledged");

    const up = Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } });
    listener = up;
    await daemon.waitForLine((r) => r.event === "watchdog.incident_resolved" && r.incident_id === id);
    up.stop(true);
    listener = undefined;
    const reopened = await daemon.waitForLine(
      (r) => r.event === "watchdog.incident_opened" && r.incident_component === "check:db" && r.incident_id !== id,
    );
    expect(Number(reopened.incident_id)).toBeGreaterThan(id);
  }, 120_000);
});
