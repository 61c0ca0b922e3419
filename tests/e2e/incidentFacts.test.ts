import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { userInfo } from "node:os";
import { api, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";
import { ensureBinary, runAgentd } from "../support/binary.ts";
import { daemonToken } from "../support/daemonTokens.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import type { Incident, IncidentEvent } from "../../src/watchdog/index.ts";
import { REFUSED_PORT } from "../support/refusedPort.ts";

// Incidents keep their facts while a check keeps failing (count, last seen, the check's output, on
// the API, the page and the CLI; one incident, one action), and say who acknowledged them: the OS
// user behind the CLI, the name typed at the page's sign-in.

let daemon: DaemonProcess;
const dbPort = REFUSED_PORT;
const cachePort = REFUSED_PORT;

const tcpCheck = (name: string, port: number) => ({
  type: "tcp",
  name,
  port,
  interval_s: 0.2,
  timeout_ms: 2000,
  failure_threshold: 1,
  success_threshold: 1,
  severity: "critical",
});

beforeAll(async () => {
  await ensureBinary();
  daemon = await startDaemon({
    dataDir: makeTempDir("agentd-incident-facts-"),
    config: { watchdog: { tick_ms: 100, checks: [tcpCheck("db", dbPort), tcpCheck("cache", cachePort)] } },
  });
}, 120_000);

afterAll(async () => {
  await daemon?.stop();
  removeTempDirs();
}, 60_000);

const incident = (id: number) => api<{ incident: Incident; timeline: IncidentEvent[] }>(daemon.url, `/api/incidents/${id}`);

async function openedFor(check: string): Promise<number> {
  const opened = await daemon.waitForLine((r) => r.event === "watchdog.incident_opened" && r.incident_component === `check:${check}`);
  return Number(opened.incident_id);
}

describe("a check that keeps failing", () => {
  test("keeps counting on its one incident: last seen moves, the output is kept, one action; the page and the CLI show it", async () => {
    const id = await openedFor("db");
    const first = (await incident(id)).incident;
    const later = await waitFor("the incident to count five failures", async () => {
      const now = (await incident(id)).incident;
      return now.count >= 5 ? now : undefined;
    });
    expect(later.first_seen).toBe(first.first_seen);
    expect(later.last_seen).toBeGreaterThan(first.last_seen);
    expect(later.state).toBe("open");
    expect(String(later.details.output)).toContain(`127.0.0.1:${dbPort}`);
    expect(String(later.details.output)).toContain("ECONNREFUSED");
    expect(later.details.output_at).toBe(later.last_seen);

    const { incidents } = await api<{ incidents: Incident[] }>(daemon.url, "/api/incidents?limit=500");
    expect(incidents.filter((i) => i.fingerprint === "check:db").map((i) => i.id)).toEqual([id]);
    expect(daemon.lines.filter((r) => r.event === "watchdog.action" && r.incident_id === id)).toHaveLength(1);
    expect(daemon.lines.filter((r) => r.event === "watchdog.incident_opened" && r.incident_component === "check:db")).toHaveLength(1);

    const page = await (await fetch(`${daemon.url}/status/incidents/${id}`, { headers: { accept: "text/html" } })).text();
    const times = Number(/, (\d+) times<\/dd>/.exec(page)?.[1]);
    expect(times).toBeGreaterThanOrEqual(later.count);
    expect(page).toContain(`connect ECONNREFUSED 127.0.0.1:${dbPort}`);

    const shown = await runAgentd(["incidents", "show", String(id), "--data-dir", daemon.dataDir]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(
      new RegExp(`latest output \\(\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\): 127\\.0\\.0\\.1:${dbPort}: connect ECONNREFUSED`),
    );
    const count = Number(/, (\d+) signal\(s\)/.exec(shown.stdout)?.[1]);
    expect(count).toBeGreaterThanOrEqual(later.count);
  }, 120_000);
});

describe("who acknowledged", () => {
  test("the CLI records its OS user as cli:<user>; the acknowledged incident keeps counting", async () => {
    const id = await openedFor("db");
    const acked = await runAgentd(["incidents", "ack", String(id), "--data-dir", daemon.dataDir], { env: { SUDO_USER: undefined } });
    expect(acked.stderr).toBe("");
    expect(acked.code).toBe(0);
    const person = `cli:${userInfo().username}`;
    const { incident: after, timeline } = await incident(id);
    expect(after).toMatchObject({ state: "acknowledged", details: { acknowledged_by: person } });
    expect(timeline.map((e) => e.message)).toContain(`acknowledged by ${person}`);
    const countAtAck = after.count;
    await waitFor("the acknowledged incident to count on", async () => (await incident(id)).incident.count > countAtAck);
    const page = await (await fetch(`${daemon.url}/status/incidents/${id}`, { headers: { accept: "text/html" } })).text();
    expect(page).toContain(`by ${person}`);
  }, 120_000);

  test("the page records the name typed at sign-in as page:<name>; an empty name is refused, saying why", async () => {
    const token = daemonToken(daemon.url);
    expect(token).toBeString();
    const id = await openedFor("cache");
    const origin = { origin: daemon.url, "content-type": "application/x-www-form-urlencoded" };
    const signIn = (name: string) =>
      fetch(`${daemon.url}/login`, {
        method: "POST",
        headers: origin,
        body: new URLSearchParams({ name, token: token!, next: `/status/incidents/${id}` }),
        redirect: "manual",
      });
    const refused = await signIn(" ");
    expect(refused.status).toBe(400);
    expect(refused.headers.getSetCookie()).toEqual([]);
    expect(await refused.text()).toContain("Cannot sign in with that name: a name is needed");

    const signedIn = await signIn("Dana on call");
    expect(signedIn.status).toBe(303);
    const cookie = signedIn.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    // The page's own Acknowledge button: a form POST from the incident page, without JavaScript.
    const ack = await fetch(`${daemon.url}/status/incidents/${id}/ack`, {
      method: "POST",
      headers: { ...origin, cookie, referer: `${daemon.url}/status/incidents/${id}` },
      redirect: "manual",
    });
    expect(ack.status).toBe(303);
    const page = await (await fetch(`${daemon.url}/status/incidents/${id}`, { headers: { accept: "text/html", cookie } })).text();
    expect(page).toContain("by page:Dana on call");
    expect((await incident(id)).incident.details.acknowledged_by).toBe("page:Dana on call");
  }, 120_000);
});
