import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary } from "../support/binary.ts";
import { daemonToken } from "../support/daemonTokens.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { api, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// run_command through the compiled ./agentd: a tcp check of a closed port fails, tier 1 chooses
// `run_command mark` (not pre-approved), the incident shows the pending request and nothing runs;
// an allow through the worker's API makes the supervisor's watchdog run it exactly once.

interface ActionRequestView {
  id: number;
  command: string;
  status: string;
  decided_by: string | null;
  requested_at: number;
  outcome: string | null;
}

interface IncidentView {
  id: number;
  fingerprint: string;
  action: string | null;
  verdict: string | null;
  action_request: ActionRequestView | null;
}

let daemon: DaemonProcess | undefined;

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
}, 60_000);
afterAll(removeTempDirs);

function closedPort(): number {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = server.port!;
  server.stop(true);
  return port;
}

describe("run_command approval, end to end against ./agentd", () => {
  test("the command waits for a decision, runs once after an allow through the API; a second decision is 409", async () => {
    await ensureBinary();
    const home = makeTempDir("agentd-wd-run-");
    const dataDir = join(home, "data");
    mkdirSync(dataDir);
    const marker = join(home, "marker");
    daemon = await startDaemon({
      dataDir,
      config: {
        watchdog: {
          tick_ms: 100,
          verify_window_s: 1,
          resolve_after_s: 3600,
          checks: [
            {
              type: "tcp",
              name: "db",
              host: "127.0.0.1",
              port: closedPort(),
              interval_s: 0.2,
              timeout_ms: 2000,
              failure_threshold: 2,
              success_threshold: 1,
            },
          ],
          rules: [{ id: "mark-db", when: { signal: "check.tcp" }, do: "run_command", command: "mark" }],
          commands: { mark: { argv: ["/bin/sh", "-c", `echo ran >> '${marker}'`], timeout_ms: 20_000 } },
        },
      },
    });
    const url = daemon.url;
    const incidentOfCheck = async () =>
      (await api<{ incidents: IncidentView[] }>(url, "/api/incidents?state=unresolved&limit=500")).incidents.find(
        (i) => i.fingerprint === "check:db",
      );

    const opened = await waitFor("the check's incident", incidentOfCheck, { timeoutMs: 60_000, intervalMs: 100 });
    const required = await daemon.waitForLine((r) => r.event === "watchdog.approval_required" && r.incident_id === opened.id);
    expect(required).toMatchObject({ command: "mark", tier: 1 });
    await daemon.waitForLine(
      (r) => r.event === "watchdog.alert" && r.incident_id === opened.id && String(r.message).includes("needs approval"),
    );

    const shown = await api<{ incident: IncidentView; timeline: Array<{ kind: string }> }>(url, `/api/incidents/${opened.id}`);
    expect(shown.incident).toMatchObject({
      action: "run_command",
      verdict: "pending",
      action_request: { command: "mark", status: "pending", decided_by: null },
    });
    expect(shown.incident.action_request!.requested_at).toBeGreaterThan(0);
    expect(shown.timeline.map((e) => e.kind)).toContain("action_requested");

    // The page offers the decision; a cross-site POST is refused by the CSRF guard.
    const page = await (await fetch(`${url}/status/incidents/${opened.id}`, { headers: { accept: "text/html" } })).text();
    expect(page).toContain(`hx-post="/status/incidents/${opened.id}/action"`);
    const crossSite = await fetch(`${url}/status/incidents/${opened.id}/action`, {
      method: "POST",
      // The person's browser holds the token cookie; another site makes it post: the CSRF guard refuses.
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "sec-fetch-site": "cross-site",
        origin: "https://evil.example",
        cookie: `agentd_token=${daemonToken(url)}`,
      },
      body: "decision=allow",
    });
    expect(crossSite.status).toBe(403);
    expect(((await crossSite.json()) as { error: { code: string } }).error.code).toBe("csrf_rejected");

    // Nothing has run without a decision.
    expect(existsSync(marker)).toBe(false);
    const mark = daemon.lines.length;

    const allowed = await api<{ request: ActionRequestView }>(url, `/api/incidents/${opened.id}/action`, { body: { decision: "allow" } });
    expect(allowed.request).toMatchObject({ status: "allowed", decided_by: "api" });

    await daemon.waitForLine((r) => r.event === "watchdog.approved_command" && r.incident_id === opened.id, mark);
    const done = await waitFor(
      "the command's outcome",
      async () => {
        const incident = (await api<{ incident: IncidentView }>(url, `/api/incidents/${opened.id}`)).incident;
        return incident.action_request?.status === "done" ? incident : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    expect(done.action_request).toMatchObject({ outcome: "mark: exit 0", decided_by: "api" });
    expect(readFileSync(marker, "utf8")).toBe("ran\n");

    const again = await api<{ error: { code: string } }>(url, `/api/incidents/${opened.id}/action`, {
      body: { decision: "allow" },
      expect: 409,
    });
    expect(again.error.code).toBe("action_already_decided");

    // Verified like any action: the port is still closed, so the verdict is failed, and the command ran once.
    const verdict = await daemon.waitForLine(
      (r) => r.event === "watchdog.verdict" && r.incident_id === opened.id && r.action === "run_command",
      mark,
    );
    expect(verdict.verdict).toBe("failed");
    expect(readFileSync(marker, "utf8")).toBe("ran\n");
  }, 240_000);
});
