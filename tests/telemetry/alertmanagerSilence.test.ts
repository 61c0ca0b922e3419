import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ensureBinary, runAgentd } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { startDaemon, type DaemonProcess } from "../e2e/support/daemonProcess.ts";
import { startAlertmanager, type MonitoringServer } from "./support/monitoringServers.ts";

// `agentd silence` against Debian's prometheus-alertmanager: a silenced check's alert reaches
// Alertmanager muted (no page), a silence set on a firing alert mutes it and its repeats, and
// lifting either pages again while the check still fails; resolving a still failing check's
// incident by hand is refused and its alert keeps paging. Alertmanager repeats every 2 s here, so a
// muted alert that still paged would show up among the repeats of "other", a check never silenced,
// whose notifications are the barrier: they prove Alertmanager flushed since the silence took hold.

interface AmAlert {
  labels: Record<string, string>;
  status: { state: string; silencedBy: string[] };
}

interface AmSilence {
  id: string;
  endsAt: string;
  createdBy: string;
  comment: string;
  status: { state: string };
  matchers: Array<{ name: string; value: string }>;
}

interface Notification {
  receivedAt: number;
  status: string;
  alerts: Array<{ status: string; labels: Record<string, string> }>;
}

const healthy: Record<string, boolean> = { web: true, db: true, other: true };
const service = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: (req) => {
    const ok = healthy[new URL(req.url).pathname.slice(1)] ?? false;
    return new Response(ok ? "ok" : "down", { status: ok ? 200 : 503 });
  },
});
const notifications: Notification[] = [];
const webhook = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    notifications.push({ ...((await req.json()) as Omit<Notification, "receivedAt">), receivedAt: Date.now() });
    return new Response("ok");
  },
});

let daemon: DaemonProcess;
let alertmanager: MonitoringServer;

const check = (name: string) => ({
  type: "http",
  name,
  url: `http://127.0.0.1:${service.port}/${name}`,
  interval_s: 0.2,
  timeout_ms: 1000,
  failure_threshold: 1,
  success_threshold: 1,
});

const amAlerts = async (): Promise<AmAlert[]> => (await (await fetch(`${alertmanager.url}/api/v2/alerts`)).json()) as AmAlert[];
const amSilences = async (): Promise<AmSilence[]> => (await (await fetch(`${alertmanager.url}/api/v2/silences`)).json()) as AmSilence[];
const notified = (incident: string, status = "firing", after = 0) =>
  notifications.filter((n) => n.receivedAt > after && n.status === status && n.alerts.some((a) => a.labels.incident === incident));
const cli = (...args: string[]) => runAgentd([...args, "--data-dir", daemon.dataDir]);

async function openedFor(name: string): Promise<string> {
  const line = await daemon.waitForLine((r) => r.event === "watchdog.incident_opened" && r.incident_component === `check:${name}`);
  return String(line.incident_id);
}

async function alertState(incident: string, state: string): Promise<AmAlert> {
  return waitFor(
    `incident ${incident}'s alert ${state} in Alertmanager`,
    async () => (await amAlerts()).find((a) => a.labels.incident === incident && a.status.state === state),
    { timeoutMs: 60_000, intervalMs: 200 },
  );
}

/** Two notifications of the barrier incident received after `since`: Alertmanager flushed at least twice meanwhile. */
async function twoFlushesAfter(barrier: string, since: number): Promise<number> {
  const flushes = await waitFor(
    "two repeats of the barrier alert",
    () => {
      const seen = notified(barrier, "firing", since);
      return seen.length >= 2 ? seen : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
  return flushes[0]!.receivedAt;
}

async function silence(target: string): Promise<string> {
  const result = await cli("silence", target, "2h", "--reason", "maintenance");
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return /\(#(\d+)\)/.exec(result.stdout)![1]!;
}

let other = "";

beforeAll(async () => {
  await ensureBinary();
  alertmanager = await startAlertmanager(makeTempDir("agentd-am-silence-"), `http://127.0.0.1:${webhook.port}/`, undefined, "2s");
  daemon = await startDaemon({
    dataDir: makeTempDir("agentd-am-silence-data-"),
    config: {
      watchdog: { tick_ms: 100, resolve_after_s: 1, checks: [check("web"), check("db"), check("other")] },
      alerts: { alertmanager: [alertmanager.url], resend_interval_s: 1, timeout_ms: 2000 },
    },
  });
  healthy.other = false;
  other = await openedFor("other");
  await waitFor("the barrier's first page", () => notified(other)[0], { timeoutMs: 60_000, intervalMs: 100 });
}, 120_000);

afterAll(async () => {
  await daemon?.stop();
  await alertmanager?.stop();
  await service.stop(true);
  await webhook.stop(true);
  removeTempDirs();
}, 60_000);

// Each case has a check of its own (web, db, other) and reads only its incident's notifications;
// the barrier's flushes are observed, never changed: the cases wait on Alertmanager side by side.
describe.concurrent("agentd silences reach Alertmanager", () => {
  test("a check silenced before it fails: its alert arrives muted, nobody is paged; lifting the silence pages", async () => {
    const silenceId = await silence("web");
    healthy.web = false;
    const web = await openedFor("web");
    const muted = await alertState(web, "suppressed");
    expect(muted.status.silencedBy).toHaveLength(1);
    const amSilence = (await amSilences()).find((s) => s.id === muted.status.silencedBy[0])!;
    const listed = JSON.parse((await cli("silence", "--list", "--json")).stdout) as Array<{ id: number; until: number }>;
    const agentdSilence = listed.find((s) => String(s.id) === silenceId)!;
    // Alertmanager's silence ends when agentd's does, so expiry restores paging by itself.
    expect(Math.abs(Date.parse(amSilence.endsAt) - agentdSilence.until)).toBeLessThan(1000);
    expect(amSilence.createdBy).toMatch(/^agentd@/);
    expect(amSilence.comment).toContain(`agentd silence #${silenceId} on web: maintenance`);
    expect(amSilence.matchers.map((m) => `${m.name}=${m.value}`)).toContain(`incident=${web}`);

    await twoFlushesAfter(other, Date.now());
    expect(notifications.filter((n) => n.alerts.some((a) => a.labels.incident === web))).toEqual([]);

    const lifted = Date.now();
    const cleared = await cli("silence", "--clear", silenceId);
    expect(cleared.code).toBe(0);
    await waitFor("a page for the still failing web check", () => notified(web, "firing", lifted)[0], {
      timeoutMs: 60_000,
      intervalMs: 100,
    });
    expect((await amSilences()).find((s) => s.id === amSilence.id)?.status.state).toBe("expired");
    console.log(`silenced before failing: alert ${web} suppressed by ${amSilence.id} until ${amSilence.endsAt}; paged after the lift`);
  }, 120_000);

  test("a silence set on a firing alert mutes it and its repeats without a false resolution; lifting it pages again", async () => {
    healthy.db = false;
    const db = await openedFor("db");
    await waitFor("db's first page", () => notified(db)[0], { timeoutMs: 60_000, intervalMs: 100 });
    const silenceId = await silence("db");
    await alertState(db, "suppressed");
    const mutedAt = Date.now();
    const barrier = await twoFlushesAfter(other, mutedAt);
    // A repeat already on its way when the silence took hold may land; none after the barrier's next flush.
    expect(notified(db, "firing", barrier)).toEqual([]);
    expect(notifications.filter((n) => n.status === "resolved" && n.alerts.some((a) => a.labels.incident === db))).toEqual([]);

    const lifted = Date.now();
    expect((await cli("silence", "--clear", silenceId)).code).toBe(0);
    await alertState(db, "active");
    await waitFor("a repeat page for db once the silence is lifted", () => notified(db, "firing", lifted)[0], {
      timeoutMs: 60_000,
      intervalMs: 100,
    });
  }, 120_000);

  test("resolving a still failing check's incident by hand is refused, and its alert keeps paging", async () => {
    const refused = await cli("incidents", "resolve", other);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`Incident ${other} stays open: check "other" still fails`);
    const after = Date.now();
    await twoFlushesAfter(other, after);
    await alertState(other, "active");
    expect(notified(other, "resolved")).toEqual([]);
  }, 120_000);
});
