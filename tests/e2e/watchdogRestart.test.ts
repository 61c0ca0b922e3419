import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { api, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// An incident about a configured check outlives a restart of agentd: stopped with SIGTERM (its
// last signal older than resolve_after_s) and started again on the same data dir, the supervisor knows the check was failing, so the
// acknowledged incident stays as it was (no auto-resolve, no second incident); once the check
// passes, that same incident resolves.

interface IncidentView {
  id: number;
  state: string;
  count: number;
  last_seen: number;
  fingerprint: string;
  details: Record<string, unknown>;
}

let daemon: DaemonProcess | undefined;
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
}, 60_000);
afterAll(removeTempDirs);

const checkIncidents = async (url: string) =>
  (await api<{ incidents: IncidentView[] }>(url, "/api/incidents?limit=500")).incidents.filter((i) => i.fingerprint === "check:db");

const runsIn = (file: string) => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0);

describe("watchdog state across a restart of ./agentd", () => {
  test("an acknowledged incident whose check still fails is kept and counts on; it resolves once the check passes", async () => {
    await ensureBinary();
    const dir = makeTempDir("agentd-wd-restart-");
    // The check runs as the command user (agentd starts as root here): it leaves its lines there.
    chmodSync(dir, 0o777);
    const dataDir = join(dir, "data");
    mkdirSync(dataDir);
    const healthy = join(dir, "healthy");
    const runs = join(dir, "runs");
    const config = {
      watchdog: {
        tick_ms: 100,
        resolve_after_s: 1,
        checks: [
          {
            type: "command",
            name: "db",
            // Each run leaves a line, so the test knows how often the check ran after the restart.
            argv: ["sh", "-c", `echo run >> '${runs}'; test -e '${healthy}'`],
            interval_s: 0.2,
            timeout_ms: 5000,
            failure_threshold: 2,
            success_threshold: 1,
          },
        ],
      },
    };

    daemon = await startDaemon({ dataDir, config });
    const first = daemon;
    const [opened] = await waitFor(
      "the check's incident",
      async () => {
        const found = await checkIncidents(first.url);
        return found.length > 0 ? found : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    await first.waitForLine((r) => r.event === "watchdog.alert" && r.incident_id === opened!.id);
    const acked = await api<{ incident: IncidentView }>(first.url, `/api/incidents/${opened!.id}/ack`, { method: "POST" });
    expect(acked.incident.state).toBe("acknowledged");
    // The check keeps failing past resolve_after_s before the stop: the incident's last signal is old by then.
    const runsBeforeStop = runsIn(runs);
    await waitFor("ten more runs before the stop", () => runsIn(runs) >= runsBeforeStop + 10, { timeoutMs: 60_000, intervalMs: 100 });
    const [beforeStop] = await checkIncidents(first.url);
    expect(beforeStop).toMatchObject({ id: opened!.id, state: "acknowledged" });

    await first.stop();
    expect(first.proc.exitCode).toBe(0);
    daemon = undefined;

    daemon = await startDaemon({ dataDir, config });
    const second = daemon;
    await second.waitForLine((r) => r.event === "watchdog.adopted");
    // Ten more failing runs (2 s) span resolve_after_s and twenty ticks: time enough to resolve or reopen.
    const runsAtStart = runsIn(runs);
    await waitFor("ten more runs of the check", () => runsIn(runs) >= runsAtStart + 10, { timeoutMs: 60_000, intervalMs: 100 });
    const after = await checkIncidents(second.url);
    expect(after.map((i) => [i.id, i.state])).toEqual([[opened!.id, "acknowledged"]]);
    // The same incident counts on (the supervisor knew the check was already failing): no new
    // episode, nothing decided again.
    expect(after[0]!.count).toBeGreaterThan(beforeStop!.count);
    expect(after[0]!.last_seen).toBeGreaterThan(beforeStop!.last_seen);
    expect(after[0]!.details).toMatchObject({ acknowledged_by: "api" });
    const events = second.lines.filter(
      (r) => r.event === "watchdog.incident_resolved" || r.event === "watchdog.incident_opened" || r.event === "watchdog.action",
    );
    expect(events).toEqual([]);
    // The check itself is known to fail from the start: the page shows it without waiting for its threshold.
    const status = await api<{ watchdog: { rows: Array<{ name: string; state: string }> } }>(second.url, "/status?format=json");
    expect(status.watchdog.rows.find((row) => row.name === "db")?.state).toBe("fail");
    // The engine's counters reach the worker's /metrics.
    const metrics = await waitFor(
      "the watchdog counters on /metrics",
      async () => {
        const text = await (await fetch(`${second.url}/metrics`)).text();
        return text.includes("agentd_watchdog_queue_dropped_total") ? text : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(metrics).toContain("\nagentd_watchdog_queue_dropped_total 0\n");

    writeFileSync(healthy, "");
    const resolved = await waitFor(
      "the incident to resolve",
      async () => (await checkIncidents(second.url)).find((i) => i.id === opened!.id && i.state === "resolved"),
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    expect(resolved.details).toMatchObject({ resolved_by: "watchdog" });
    expect((resolved.details.alerts as Array<{ kind: string }>).map((a) => a.kind)).toEqual(["alert", "resolved"]);
    expect((await checkIncidents(second.url)).map((i) => i.id)).toEqual([opened!.id]);
  }, 180_000);
});
