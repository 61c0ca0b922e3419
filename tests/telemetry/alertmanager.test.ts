import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ensureBinary } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { startDaemon, type DaemonProcess } from "../e2e/support/daemonProcess.ts";
import { freePort, startAlertmanager, type MonitoringServer } from "./support/monitoringServers.ts";
import { startOtlpReceiver, type OtlpReceiver } from "./support/otlpReceiver.ts";

// Debian's prometheus-alertmanager receives agentd's incidents: a configured check fails, the
// incident becomes an alert; the check recovers, the incident resolves and so does the alert.
// Alertmanager starts late on purpose: until it listens, agentd retries with backoff.

interface AmAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  status: { state: string };
}

interface Notification {
  status: string;
  alerts: Array<{ status: string; labels: Record<string, string>; annotations: Record<string, string>; endsAt: string }>;
}

let healthy = true;
const service = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: () => new Response(healthy ? "ok" : "down", { status: healthy ? 200 : 503 }),
});
const notifications: Notification[] = [];
const webhook = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    notifications.push((await req.json()) as Notification);
    return new Response("ok");
  },
});

let daemon: DaemonProcess;
let alertmanager: MonitoringServer | undefined;
let receiver: OtlpReceiver;
const amPort = freePort();
const amUrl = `http://127.0.0.1:${amPort}`;

const alerts = async (): Promise<AmAlert[]> => (await (await fetch(`${amUrl}/api/v2/alerts`)).json()) as AmAlert[];

beforeAll(async () => {
  await ensureBinary();
  receiver = startOtlpReceiver();
  daemon = await startDaemon({
    dataDir: makeTempDir("agentd-am-data-"),
    config: {
      watchdog: {
        tick_ms: 100,
        resolve_after_s: 1,
        checks: [
          {
            type: "http",
            name: "web",
            url: `http://127.0.0.1:${service.port}/`,
            interval_s: 0.2,
            timeout_ms: 1000,
            failure_threshold: 1,
            success_threshold: 1,
          },
        ],
      },
      alerts: { alertmanager: [amUrl], resend_interval_s: 1, timeout_ms: 1000, labels: { team: "infra" } },
      telemetry: { otlp: { endpoint: receiver.url, scheduled_delay_ms: 100 } },
    },
  });
}, 120_000);

afterAll(async () => {
  await alertmanager?.stop();
  await daemon?.stop();
  await service.stop(true);
  await webhook.stop(true);
  await receiver?.close();
  removeTempDirs();
}, 60_000);

describe("Alertmanager receives agentd's incidents", () => {
  test("a failing check fires an alert (retried until Alertmanager is up); its recovery resolves it", async () => {
    healthy = false;
    const opened = await daemon.waitForLine((r) => r.event === "watchdog.incident_opened" && r.incident_component === "check:web");
    // Nothing listens yet: each post fails, and the next waits longer.
    const failures = await waitFor("two failed posts to the absent Alertmanager", () => {
      const lines = daemon.lines.filter((r) => r.event === "watchdog.alertmanager_failed");
      return lines.length >= 2 ? lines : undefined;
    });
    expect(Number(failures[1]!.retry_in_ms)).toBeGreaterThan(Number(failures[0]!.retry_in_ms));
    // The watchdog kept deciding meanwhile: the incident's alert action ran.
    await daemon.waitForLine((r) => r.event === "watchdog.action" && r.incident_id === opened.incident_id);

    alertmanager = await startAlertmanager(makeTempDir("agentd-am-"), `http://127.0.0.1:${webhook.port}/`, amPort);
    const firing = await waitFor(
      "the incident as an active alert in Alertmanager",
      async () => (await alerts()).find((a) => a.labels.incident === String(opened.incident_id) && a.status.state === "active"),
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(firing.labels).toMatchObject({
      alertname: "AgentdIncident",
      component: "check:web",
      severity: "error",
      incident: String(opened.incident_id),
      team: "infra",
    });
    expect(firing.labels.host).toBeTruthy();
    expect(firing.annotations.title).toBe(String(opened.title));
    expect(firing.annotations.summary).toContain(String(opened.title));
    expect(firing.annotations.status_page).toBe(`${daemon.url}/status/incidents/${opened.incident_id}`);
    // What the check said, for the person paged.
    expect(firing.annotations.output).toBe("HTTP 503, expected 200");
    expect(Date.parse(firing.endsAt)).toBeGreaterThan(Date.now());
    await waitFor("Alertmanager's firing notification", () =>
      notifications.find((n) => n.status === "firing" && n.alerts.some((a) => a.labels.incident === String(opened.incident_id))),
    );

    healthy = true;
    await daemon.waitForLine((r) => r.event === "watchdog.incident_resolved" && r.incident_id === opened.incident_id);
    const resolved = await waitFor(
      "Alertmanager's resolved notification",
      () => notifications.find((n) => n.status === "resolved" && n.alerts.some((a) => a.labels.incident === String(opened.incident_id))),
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    const alert = resolved.alerts.find((a) => a.labels.incident === String(opened.incident_id))!;
    expect(alert.status).toBe("resolved");
    expect(Date.parse(alert.endsAt)).toBeLessThanOrEqual(Date.now());
    // Resolved alerts leave the API's list of active ones.
    expect((await alerts()).filter((a) => a.labels.incident === String(opened.incident_id) && a.status.state === "active")).toEqual([]);
    console.log(
      `alertmanager: firing ${JSON.stringify(firing.labels)} annotations ${JSON.stringify(firing.annotations)}; resolved endsAt ${alert.endsAt}; failed posts before it listened: ${failures.length}`,
    );

    // The supervisor's own tracer exported the watchdog's action as a span.
    const action = await waitFor("the watchdog action span from the supervisor", () =>
      receiver.spans.find((s) => s.name === "watchdog.action alert" && s.attributes["agentd.incident.id"] === opened.incident_id),
    );
    expect(action.resource["agentd.process"]).toBe("supervisor");
    expect(action.attributes["agentd.incident.component"]).toBe("check:web");
  });
});
