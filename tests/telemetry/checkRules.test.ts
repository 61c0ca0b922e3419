import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ensureBinary, runAgentd } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { startDaemon, type DaemonProcess } from "../e2e/support/daemonProcess.ts";
import { RULES_DIR } from "./support/dashboard.ts";
import { promtool, startPrometheus, type MonitoringServer } from "./support/monitoringServers.ts";
import { REFUSED_PORT } from "../support/refusedPort.ts";

// Debian's prometheus scrapes the compiled ./agentd with the shipped rules: a failing critical
// check fires AgentdCriticalCheckFailing and the verdict AgentdHostFailing (pending, its `for` is
// 5m); an agentd silence on the check ends the first and turns the verdict to warn; lifting it
// fires it again.

let daemon: DaemonProcess;
let prometheus: MonitoringServer;

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

async function query(promql: string): Promise<Sample[]> {
  const body = (await (await fetch(`${prometheus.url}/api/v1/query?query=${encodeURIComponent(promql)}`)).json()) as {
    status: string;
    data: { result: Sample[] };
  };
  if (body.status !== "success") throw new Error(`query ${promql} failed: ${JSON.stringify(body)}`);
  return body.data.result;
}

/** The alerts of `name` Prometheus holds (pending or firing), once they are as `expected` says. */
function alertsOf(name: string, expected: (alerts: Sample[]) => boolean): Promise<Sample[]> {
  return waitFor(
    `Prometheus's ${name} alerts`,
    async () => {
      const alerts = await query(`ALERTS{alertname="${name}"}`);
      return expected(alerts) ? alerts : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
}

const metrics = async () => (await fetch(`${daemon.url}/metrics`)).text();

beforeAll(async () => {
  await ensureBinary();
  daemon = await startDaemon({
    dataDir: makeTempDir("agentd-check-rules-"),
    config: {
      watchdog: {
        tick_ms: 100,
        checks: [
          { type: "tcp", name: "db", port: REFUSED_PORT, interval_s: 0.2, timeout_ms: 500, failure_threshold: 1, severity: "critical" },
        ],
      },
    },
  });
  prometheus = await startPrometheus(
    makeTempDir("agentd-check-rules-prom-"),
    [new URL(daemon.url).host],
    join(RULES_DIR, "agentd.rules.yml"),
  );
}, 120_000);

afterAll(async () => {
  await prometheus?.stop();
  await daemon?.stop();
  removeTempDirs();
}, 60_000);

describe("the shipped rules on a failing critical check", () => {
  test("/metrics carries the verdict and the check's severity and silence; promtool accepts it", async () => {
    // The verdict is computed in the background (never at scrape time): it may follow the check's state by a scrape.
    const text = await waitFor("the failing check and the verdict on /metrics", async () => {
      const body = await metrics();
      return body.includes('agentd_watchdog_check_state{check="db",kind="tcp",severity="critical",state="fail"} 1') &&
        body.includes('agentd_verdict{state="fail"} 1')
        ? body
        : undefined;
    });
    expect(text).toContain('agentd_watchdog_check_silenced{check="db"} 0');
    expect(text).toContain('agentd_verdict{state="fail"} 1');
    expect(text).toContain('agentd_verdict{state="pass"} 0');
    const checked = await promtool(["check", "metrics"], text);
    expect(checked.output).toBe("");
    expect(checked.code).toBe(0);
  });

  test("AgentdCriticalCheckFailing fires and AgentdHostFailing is pending; a silence ends the first and makes the verdict warn; lifting it fires again", async () => {
    const firing = await alertsOf("AgentdCriticalCheckFailing", (alerts) => alerts.some((a) => a.metric.alertstate === "firing"));
    expect(firing[0]!.metric).toMatchObject({ check: "db", kind: "tcp", severity: "critical", instance: new URL(daemon.url).host });
    await alertsOf("AgentdHostFailing", (alerts) => alerts.length === 1);

    const silenced = await runAgentd(["silence", "db", "2h", "--data-dir", daemon.dataDir]);
    expect(silenced.code).toBe(0);
    const id = /\(#(\d+)\)/.exec(silenced.stdout)![1]!;
    await alertsOf("AgentdCriticalCheckFailing", (alerts) => alerts.length === 0);
    await alertsOf("AgentdHostFailing", (alerts) => alerts.length === 0);
    const warning = await alertsOf("AgentdHostWarning", (alerts) => alerts.length === 1);
    expect(warning[0]!.metric.alertstate).toBe("pending");
    const status = await runAgentd(["status", "--data-dir", daemon.dataDir]);
    expect(status.stdout).toContain("silenced while failing: db");
    expect(status.code).toBe(0);

    expect((await runAgentd(["silence", "--clear", id, "--data-dir", daemon.dataDir])).code).toBe(0);
    await alertsOf("AgentdCriticalCheckFailing", (alerts) => alerts.some((a) => a.metric.alertstate === "firing"));
    expect((await runAgentd(["status", "--data-dir", daemon.dataDir])).code).toBe(1);
  }, 120_000);
});
