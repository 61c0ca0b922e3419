import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { agentConfigSchema, agentMigrations, approvalsConfigSchema, createAgent, type Agent } from "../../src/agent/index.ts";
import { createLogger } from "../../src/core/log/index.ts";
import { baseMigrations, openStore, type Database } from "../../src/core/store/index.ts";
import { IncidentStore } from "../../src/watchdog/index.ts";
import { createApp } from "../../src/http/app.ts";
import { buildHealthDocument } from "../../src/core/health/index.ts";
import { createStatusSource } from "../../src/status/statusSource.ts";
import { statusPageMounts } from "../../src/status/statusMounts.ts";
import { fakeExecTool } from "../agent/testTools.ts";
import { PROJECT_ROOT } from "../support/binary.ts";
import { openBrowser, type BrowserSession } from "../support/browser.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { appDeps } from "../http/appHarness.ts";

// A pending approval granted from the page in Chromium. The worker does not mount the agent yet,
// so this composes what it will: the real agent (its /api routes) and the page's status source in
// one app on loopback, a scripted model upstream, and a recording exec tool.

let db: Database;
let agent: Agent;
let upstream: ScriptedUpstream;
let server: ReturnType<typeof Bun.serve>;
let browser: BrowserSession;
const ran: string[] = [];
const sentDigests: Array<string | undefined> = [];
let url: string;

beforeAll(async () => {
  const dataDir = makeTempDir("agentd-approvals-e2e-");
  db = openStore({ path: join(dataDir, "agentd.db"), migrations: [...baseMigrations, ...agentMigrations] });
  upstream = startScriptedUpstream();
  const quiet = createLogger("test.approvals");
  agent = createAgent({
    db,
    dataDir,
    config: { agent: agentConfigSchema().parse({}), approvals: approvalsConfigSchema().parse({}), services: [] },
    modelBaseUrl: upstream.url,
    tools: [fakeExecTool(ran)],
    logger: { ...quiet, info: () => {}, debug: () => {} },
  });
  const status = createStatusSource({
    incidents: new IncidentStore(db),
    decisions: {
      approval: (id, decision, by, digest) => {
        sentDigests.push(digest);
        return agent.decideApproval(id, decision, by, digest);
      },
    },
    health: async () => buildHealthDocument({ version: "test", checks: [], notes: [], uptimeS: 1, memoryMb: 1, requestsTotal: 0 }),
    worker: () => ({ pid: process.pid, supervisor_pid: null, version: "test", uptime_s: 1, restarts: 0, memory_mb: 1 }),
    approvals: () =>
      agent.pendingApprovals().map((a) => ({
        id: a.id,
        kind: "agent" as const,
        requested_by: "agent session",
        session_id: a.session_id,
        tool: a.tool,
        scope: a.scope,
        summary: a.summary,
        requested_at: a.created_at,
        ...(a.digest ? { digest: a.digest } : {}),
      })),
    sessions: (page) => {
      const { total, rows } = agent.sessions(page);
      return {
        total,
        rows: rows.map((s) => ({
          id: s.id,
          target: s.target,
          model: s.model,
          state: s.state,
          started_at: s.created_at,
          last_activity: s.updated_at,
          title: s.title ?? undefined,
        })),
      };
    },
  });
  const { app } = createApp(appDeps({ mounts: [...statusPageMounts(status, {}).mounts, { path: "/api", app: agent.routes }] }));
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: app.fetch, idleTimeout: 0 });
  url = `http://127.0.0.1:${server.port}`;
  browser = await openBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop(true);
  await agent?.close();
  db?.close();
  await upstream?.close();
  removeTempDirs();
}, 60_000);

describe("approvals on the status page", () => {
  test("Allow once, double-clicked, sends one decision and the command runs once", async () => {
    upstream.enqueue(
      { kind: "text", toolCalls: [{ id: "c1", name: "exec_command", arguments: JSON.stringify({ cmd: "sudo systemctl restart nginx" }) }] },
      { kind: "text", text: "restarted" },
    );
    const created = await fetch(`${url}/api/sessions`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    const sessionId = ((await created.json()) as { id: string }).id;
    // The turn pauses on the approval; its stream ends there.
    await (
      await fetch(`${url}/api/sessions/${sessionId}/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ content: "restart nginx" }),
      })
    ).text();
    const [pending] = agent.pendingApprovals();
    expect(pending).toBeDefined();

    const { page, errors, requests } = browser;
    await page.goto(`${url}/status`);
    const item = page.locator("#section-approvals li").filter({ hasText: "sudo systemctl restart nginx" });
    await item.waitFor();
    await item.getByRole("button", { name: "Allow once" }).dblclick();
    await item.getByText("Allowed once").waitFor({ timeout: 30_000 });
    await waitFor("the command to run", () => ran.length > 0 && upstream.completionRequests().length === 2, { timeoutMs: 30_000 });
    expect(ran).toEqual(["sudo systemctl restart nginx"]);
    expect(requests.filter((r) => r.includes("/status/approvals/"))).toHaveLength(1);
    // The button sent the digest the card showed.
    expect(sentDigests).toEqual([pending!.digest]);
    expect(agent.pendingApprovals()).toEqual([]);
    const decided = (await (await fetch(`${url}/api/approvals/${pending!.id}`)).json()) as { status: string; decided_by: string };
    expect(decided).toMatchObject({ status: "allow_once", decided_by: "page" });
    expect(errors).toEqual([]);
    mkdirSync(join(PROJECT_ROOT, "tests", "e2e", "artifacts"), { recursive: true });
    await page.screenshot({ path: join(PROJECT_ROOT, "tests", "e2e", "artifacts", "status-approval-decided.png"), fullPage: true });
    // The next poll drops the decided approval from the section.
    await page.locator("#section-approvals").getByText("Nothing is waiting for approval.").waitFor({ timeout: 30_000 });
  }, 120_000);
});
