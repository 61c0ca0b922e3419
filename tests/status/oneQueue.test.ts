import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { parseConfig } from "../../src/core/config/index.ts";
import { createLogger } from "../../src/core/log/index.ts";
import { openStore, type Database } from "../../src/core/store/index.ts";
import { allMigrations } from "../../src/daemon/allMigrations.ts";
import { createWorkerApp, type WorkerApp } from "../../src/daemon/workerApp.ts";
import { ActionRequestStore, IncidentStore } from "../../src/watchdog/index.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

// The worker's own app on a real socket; this test process is a person: not the command user, and it holds the token.
const TOKEN = "one-queue-decision-token";
let db: Database;
let worker: WorkerApp;
let server: Server<undefined>;
let url: string;
let incidents: IncidentStore;
let requests: ActionRequestStore;

function storeCheckRows(rows: unknown[]): void {
  db.run("INSERT INTO kv (key, value, updated_at) VALUES ('watchdog.checks', ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [
    JSON.stringify(rows),
    Date.now(),
  ]);
}

beforeAll(async () => {
  const dataDir = makeTempDir("agentd-one-queue-");
  db = openStore({ path: `${dataDir}/agentd.db`, migrations: allMigrations });
  worker = await createWorkerApp({
    config: parseConfig("{}", { file: "agentd.jsonc", env: {} }),
    notes: [],
    db,
    dataDir,
    logger: createLogger("test.worker"),
    startedAt: Date.now(),
    supervisorPid: null,
    restarts: 0,
    commandUid: process.getuid!() + 1,
    decisionToken: TOKEN,
  });
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: worker.app.fetch, idleTimeout: 0 });
  url = `http://127.0.0.1:${server.port}`;
  incidents = new IncidentStore(db);
  requests = new ActionRequestStore(db, incidents);
});

afterAll(async () => {
  await server?.stop(true);
  await worker?.services.close();
  db?.close();
  removeTempDirs();
});

type Health = { status: string; checks: Record<string, Array<{ status: string; output?: string }>> };

describe("/health lists the watchdog as warnings", () => {
  test("pass while quiet; warn (never pass) with a failing check or an open incident; never fail for them", async () => {
    storeCheckRows([{ name: "web", kind: "http", severity: "critical", state: "pass", last_change: null }]);
    let health = (await (await fetch(`${url}/health`)).json()) as Health;
    expect(health.status).toBe("pass");
    expect(health.checks["watchdog:checks"]?.[0]?.status).toBe("pass");
    expect(health.checks["incidents:open"]?.[0]?.status).toBe("pass");

    storeCheckRows([{ name: "web", kind: "http", severity: "critical", state: "fail", last_change: Date.now() }]);
    const response = await fetch(`${url}/health`);
    health = (await response.json()) as Health;
    expect(response.status).toBe(200);
    expect(health.status).toBe("warn");
    expect(health.checks["watchdog:checks"]?.[0]).toMatchObject({ status: "warn", output: "failing: web" });

    const incident = incidents.open({
      fingerprint: "q1",
      pattern: "p",
      title: "Disk full",
      category: "daemon",
      severity: "critical",
      now: Date.now(),
    });
    health = (await (await fetch(`${url}/health`)).json()) as Health;
    expect(health.checks["incidents:open"]?.[0]).toMatchObject({ status: "warn", output: "1 open incident" });
    expect(health.status).toBe("warn");

    // The host's verdict, unlike /health, fails: a critical check fails and a critical incident is open.
    const status = (await (await fetch(`${url}/status`, { headers: { accept: "application/json" } })).json()) as {
      schema: number;
      host: string;
      verdict: { status: string; reasons: string[] };
    };
    expect(status.schema).toBe(2);
    expect(status.host.length).toBeGreaterThan(0);
    expect(status.verdict.status).toBe("fail");
    expect(status.verdict.reasons).toEqual(["critical incident open: Disk full", "critical check failing: web"]);
    const badge = await (await fetch(`${url}/badge.svg`)).text();
    expect(badge).toContain("agentd: fail");
    const checkBadge = await fetch(`${url}/badge/check/web.svg`);
    expect(await checkBadge.text()).toContain("web: fail");
    expect((await fetch(`${url}/badge/check/nope.svg`)).status).toBe(404);
    incidents.setState(incident.id, "resolved", "test");
    storeCheckRows([]);
  });
});

describe("one approval queue: the watchdog's commands in /api/approvals", () => {
  test("listed beside the agent's, decided by id through /api/approvals/:id; the agent's own connection gets 403", async () => {
    const incident = incidents.open({
      fingerprint: "q2",
      pattern: "p",
      title: "nginx down",
      category: "daemon",
      severity: "error",
      now: Date.now(),
    });
    const request = requests.create({
      incidentId: incident.id,
      command: "systemctl restart nginx",
      tier: 1,
      reason: "rule nginx",
      now: Date.now(),
      expiresAt: Date.now() + 600_000,
    });
    const listed = (await (await fetch(`${url}/api/approvals`)).json()) as { approvals: Array<Record<string, unknown>> };
    expect(listed.approvals).toEqual([
      expect.objectContaining({
        id: `wd_${request.id}`,
        kind: "watchdog",
        requested_by: "watchdog",
        session_id: null,
        command: "systemctl restart nginx",
        target: "local",
        task: "nginx down",
        incident_id: incident.id,
        status: "pending",
      }),
    ]);
    const one = await fetch(`${url}/api/approvals/wd_${request.id}`);
    expect(((await one.json()) as { command: string }).command).toBe("systemctl restart nginx");

    // Served in-process, without a connection: the agent's own fetch, refused even with the token.
    const post = (init: RequestInit = {}) => ({
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ decision: "allow_once" }),
      ...init,
    });
    const agent = await worker.app.fetch(new Request(`http://127.0.0.1/api/approvals/wd_${request.id}`, post()));
    expect(agent.status).toBe(403);
    expect(((await agent.json()) as { error: { code: string } }).error.code).toBe("approver_is_agent");
    expect(requests.get(request.id)?.status).toBe("pending");

    const decided = await fetch(`${url}/api/approvals/wd_${request.id}`, post());
    expect(decided.status).toBe(200);
    const body = (await decided.json()) as { approval: { status: string; decided_by: string }; request: { status: string } };
    expect(body.approval).toMatchObject({ status: "allowed", decided_by: "api" });
    expect(requests.get(request.id)?.status).toBe("allowed");

    const again = await fetch(`${url}/api/approvals/wd_${request.id}`, post());
    expect(again.status).toBe(409);
    expect(((await (await fetch(`${url}/api/approvals`)).json()) as { approvals: unknown[] }).approvals).toEqual([]);
    expect((await fetch(`${url}/api/approvals/wd_999999`, post())).status).toBe(404);
  });
});
