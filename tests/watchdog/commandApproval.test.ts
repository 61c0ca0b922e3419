import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { allMigrations } from "../../src/daemon/allMigrations.ts";
import { createLogger } from "../../src/core/log/index.ts";
import { openStore } from "../../src/core/store/index.ts";
import { ACTION_REQUEST_STATUSES, canTransition, refuseDecision, type ActionRequest } from "../../src/watchdog/incidents/actionRequest.ts";
import { ActionRequestStore } from "../../src/watchdog/incidents/actionRequestStore.ts";
import { IncidentStore } from "../../src/watchdog/incidents/incidentStore.ts";
import { HttpProxyAdmin } from "../../src/watchdog/actions/proxyAdmin.ts";
import { Watchdog } from "../../src/watchdog/watchdog.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { createHarness, logLine, type Harness } from "./watchdogHarness.ts";

let harness: Harness | undefined;
afterEach(() => {
  harness?.close();
  harness = undefined;
});
afterAll(removeTempDirs);

function request(overrides: Partial<ActionRequest> = {}): ActionRequest {
  return {
    id: 1,
    incident_id: 7,
    action: "run_command",
    command: "fix",
    tier: 1,
    reason: "rule",
    status: "pending",
    requested_at: 1000,
    expires_at: 5000,
    decided_at: null,
    decided_by: null,
    finished_at: null,
    outcome: null,
    ...overrides,
  };
}

describe("the action request state machine", () => {
  test("only a pending request takes a decision; only an allowed one may run; finished ones are final", () => {
    expect(canTransition("pending", "allowed")).toBe(true);
    expect(canTransition("pending", "denied")).toBe(true);
    expect(canTransition("pending", "expired")).toBe(true);
    expect(canTransition("pending", "running")).toBe(false);
    expect(canTransition("allowed", "running")).toBe(true);
    expect(canTransition("denied", "running")).toBe(false);
    expect(canTransition("expired", "allowed")).toBe(false);
    expect(canTransition("running", "done")).toBe(true);
    for (const final of ["denied", "expired", "cancelled", "done", "failed"] as const) {
      expect(ACTION_REQUEST_STATUSES.filter((to) => canTransition(final, to))).toEqual([]);
    }
  });

  test("refuseDecision explains why a decision cannot be taken", () => {
    expect(refuseDecision(request(), 4999)).toBeUndefined();
    expect(refuseDecision(request(), 5000)?.code).toBe("action_expired");
    expect(refuseDecision(request({ status: "expired" }), 1)?.code).toBe("action_expired");
    const decided = refuseDecision(request({ status: "allowed", decided_by: "page", decided_at: 2000 }), 3000);
    expect(decided?.code).toBe("action_already_decided");
    expect(decided?.status).toBe(409);
    expect(decided?.message).toContain("allowed by page");
  });
});

describe("ActionRequestStore", () => {
  test("a decision is taken exactly once, even from two connections to the same store", () => {
    const path = join(makeTempDir("agentd-approval-"), "agentd.db");
    const first = openStore({ path, migrations: allMigrations });
    const second = openStore({ path, migrations: allMigrations });
    try {
      const incidents = new IncidentStore(first);
      const incident = incidents.open({
        fingerprint: "worker",
        pattern: "p",
        title: "t",
        category: "daemon",
        severity: "error",
        now: 1000,
      });
      const requests = new ActionRequestStore(first, incidents);
      const created = requests.create({ incidentId: incident.id, command: "fix", tier: 1, reason: "rule", now: 1000, expiresAt: 10_000 });
      expect(created.status).toBe("pending");
      // One outstanding request per incident.
      expect(() =>
        requests.create({ incidentId: incident.id, command: "fix", tier: 1, reason: "again", now: 1001, expiresAt: 10_000 }),
      ).toThrow();

      const otherIncidents = new IncidentStore(second);
      const other = new ActionRequestStore(second, otherIncidents);
      expect(other.decide(incident.id, "allow", "cli", 2000)).toMatchObject({ status: "allowed", decided_by: "cli", decided_at: 2000 });
      expect(() => requests.decide(incident.id, "deny", "api", 2001)).toThrow(
        expect.objectContaining({ code: "action_already_decided", status: 409 }),
      );
      expect(() => other.decide(incident.id, "allow", "page", 2002)).toThrow(expect.objectContaining({ code: "action_already_decided" }));
      expect(incidents.get(incident.id).action_request).toMatchObject({ status: "allowed", decided_by: "cli" });
      expect(incidents.timeline(incident.id).map((e) => [e.kind, e.message])).toEqual([
        ["action_allowed", "run_command fix allowed by cli"],
      ]);

      // Claimed to run once; the second claim loses.
      expect(requests.claim(created.id, 3000)).toBe(true);
      expect(other.claim(created.id, 3001)).toBe(false);
      expect(requests.finish(created.id, true, "fix: exit 0", 3500)).toBe(true);
      expect(requests.get(created.id)).toMatchObject({ status: "done", outcome: "fix: exit 0", finished_at: 3500 });
    } finally {
      second.close();
      first.close();
    }
  });

  test("past its deadline a request expires instead of taking a decision; no request is its own error", () => {
    harness = createHarness({});
    const incidents = new IncidentStore(harness.db);
    const incident = incidents.open({ fingerprint: "worker", pattern: "p", title: "t", category: "daemon", severity: "error", now: 1000 });
    const requests = new ActionRequestStore(harness.db, incidents);
    expect(() => requests.decide(incident.id, "allow", "api", 1000)).toThrow(
      expect.objectContaining({ code: "no_action_request", status: 409 }),
    );
    expect(() => requests.decide(999, "allow", "api", 1000)).toThrow(expect.objectContaining({ code: "incident_not_found" }));
    requests.create({ incidentId: incident.id, command: "fix", tier: 1, reason: "rule", now: 1000, expiresAt: 2000 });
    expect(() => requests.decide(incident.id, "allow", "api", 2000)).toThrow(
      expect.objectContaining({ code: "action_expired", status: 409 }),
    );
    expect(incidents.get(incident.id).action_request?.status).toBe("expired");
    expect(incidents.timeline(incident.id).map((e) => e.kind)).toEqual(["action_expired"]);
  });
});

/**
 * A config whose `app.disk_full` log event makes tier 1 choose `run_command fix`, which appends to a
 * marker file; the `space` check passing again is what verifies it.
 */
function approvalConfig(dir: string, extra: Record<string, unknown> = {}, preApproved = false) {
  return {
    verify_window_s: 10,
    resolve_after_s: 100_000,
    approval_timeout_s: 600,
    checks: [{ type: "disk", name: "space", path: dir }],
    signatures: [
      {
        id: "app.disk_full",
        title: "Disk full",
        category: "config_state",
        severity: "error",
        event: "app.disk_full",
        component: "app",
        verify_check: "space",
      },
    ],
    rules: [{ id: "free-space", when: { signal: "app.disk_full" }, do: "run_command", command: "fix" }],
    commands: { fix: { argv: ["/bin/sh", "-c", `echo ran >> '${join(dir, "marker")}'`], pre_approved: preApproved, timeout_ms: 20_000 } },
    ...extra,
  };
}

const marker = (dir: string) => (existsSync(join(dir, "marker")) ? readFileSync(join(dir, "marker"), "utf8") : undefined);

describe("run_command waits for approval", () => {
  test("tier 1 records a pending request, nothing runs; an allow runs it once on the next tick and it is verified", async () => {
    const dir = makeTempDir("agentd-approval-");
    harness = createHarness(approvalConfig(dir));
    const store = new IncidentStore(harness.db);
    await harness.watchdog.ingestLine(logLine("app.disk_full", {}, "app", "error"));
    const incident = store.list()[0]!;
    expect(incident).toMatchObject({ tier: 1, action: "run_command", verdict: "pending" });
    expect(store.get(incident.id).action_request).toMatchObject({
      action: "run_command",
      command: "fix",
      status: "pending",
      requested_at: harness.clock.now,
      expires_at: harness.clock.now + 600_000,
      tier: 1,
    });
    expect(store.timeline(incident.id).map((e) => e.kind)).toEqual(["signal", "action", "action_requested", "alert"]);
    expect(harness.events("watchdog.approval_required")).toMatchObject([{ incident_id: incident.id, command: "fix", tier: 1 }]);
    expect(harness.events("watchdog.alert")[0]!.message).toContain(`agentd incidents approve ${incident.id}`);

    // Ticks and further signals while it waits: nothing runs, no second request.
    await harness.advance(1000);
    await harness.watchdog.ingestLine(logLine("app.disk_full", {}, "app", "error"));
    await harness.advance(1000);
    expect(marker(dir)).toBeUndefined();
    expect(harness.events("watchdog.approval_required")).toHaveLength(1);

    new ActionRequestStore(harness.db, store).decide(incident.id, "allow", "page", harness.clock.now);
    await harness.advance(1000);
    expect(marker(dir)).toBe("ran\n");
    expect(store.get(incident.id).action_request).toMatchObject({ status: "done", decided_by: "page", outcome: "fix: exit 0" });
    expect(harness.events("watchdog.approved_command")).toMatchObject([{ incident_id: incident.id, command: "fix", decided_by: "page" }]);

    // The check that the signature names passes again after the command: that is the verification.
    harness.clock.now += 500;
    harness.passCheck("space");
    await harness.advance(500);
    expect(marker(dir)).toBe("ran\n");
    expect(store.get(incident.id).verdict).toBe("success");
    expect(harness.watchdog.memory.actions({ component: "app", pattern: incident.pattern! })).toEqual([
      { action: "run_command", command: "fix", tries: 1, successes: 1, last_verdict: "success" },
    ]);
    expect(
      store
        .timeline(incident.id)
        .map((e) => e.kind)
        .slice(-4),
    ).toEqual(["action_allowed", "action_done", "verdict", "learned"]);
  });

  test("a failing approved command fails the verdict and escalates to an alert", async () => {
    const dir = makeTempDir("agentd-approval-");
    const config = approvalConfig(dir);
    config.commands.fix.argv = ["/bin/sh", "-c", "echo broken >&2; exit 3"];
    harness = createHarness(config);
    const store = new IncidentStore(harness.db);
    await harness.watchdog.ingestLine(logLine("app.disk_full", {}, "app", "error"));
    const incident = store.list()[0]!;
    new ActionRequestStore(harness.db, store).decide(incident.id, "allow", "api", harness.clock.now);
    await harness.advance(1000);
    expect(store.get(incident.id)).toMatchObject({
      verdict: "failed",
      action_request: { status: "failed", outcome: "fix: exit 3 broken" },
    });
    expect(harness.events("watchdog.alert").at(-1)!.message).toBe("run_command did not clear the incident");
  });

  test("deny: a timeline event, an alert, verdict denied, the command never runs", async () => {
    const dir = makeTempDir("agentd-approval-");
    harness = createHarness(approvalConfig(dir));
    const store = new IncidentStore(harness.db);
    await harness.watchdog.ingestLine(logLine("app.disk_full", {}, "app", "error"));
    const incident = store.list()[0]!;
    new ActionRequestStore(harness.db, store).decide(incident.id, "deny", "cli", harness.clock.now);
    await harness.advance(1000);
    await harness.advance(1000);
    expect(marker(dir)).toBeUndefined();
    expect(store.get(incident.id)).toMatchObject({ verdict: "denied", action_request: { status: "denied", decided_by: "cli" } });
    expect(
      store
        .timeline(incident.id)
        .map((e) => e.kind)
        .slice(-2),
    ).toEqual(["action_denied", "alert"]);
    expect(harness.events("watchdog.alert").at(-1)!.message).toBe("run_command fix denied by cli; it did not run");
    expect(harness.events("watchdog.approval_denied")).toHaveLength(1);
  });

  test("no decision within approval_timeout_s: expired, alerted, and a late allow is refused", async () => {
    const dir = makeTempDir("agentd-approval-");
    harness = createHarness(approvalConfig(dir, { approval_timeout_s: 60 }));
    const store = new IncidentStore(harness.db);
    await harness.watchdog.ingestLine(logLine("app.disk_full", {}, "app", "error"));
    const incident = store.list()[0]!;
    await harness.advance(59_000);
    expect(store.get(incident.id).action_request?.status).toBe("pending");
    await harness.advance(1000);
    expect(store.get(incident.id)).toMatchObject({ verdict: "expired", action_request: { status: "expired" } });
    expect(harness.events("watchdog.alert").at(-1)!.message).toBe("run_command fix expired without a decision; it did not run");
    expect(() => new ActionRequestStore(harness!.db, store).decide(incident.id, "allow", "api", harness!.clock.now)).toThrow(
      expect.objectContaining({ code: "action_expired" }),
    );
    await harness.advance(1000);
    expect(marker(dir)).toBeUndefined();
  });

  test("a pre-approved command runs at once, without a request", async () => {
    const dir = makeTempDir("agentd-approval-");
    harness = createHarness(approvalConfig(dir, {}, true));
    const store = new IncidentStore(harness.db);
    await harness.watchdog.ingestLine(logLine("app.disk_full", {}, "app", "error"));
    expect(marker(dir)).toBe("ran\n");
    const incident = store.get(store.list()[0]!.id);
    expect(incident.action_request).toBeNull();
    expect(harness.events("watchdog.approval_required")).toHaveLength(0);
  });

  test("an incident resolved by hand cancels its request: a later allow is refused and nothing runs", async () => {
    const dir = makeTempDir("agentd-approval-");
    harness = createHarness(approvalConfig(dir));
    const store = new IncidentStore(harness.db);
    await harness.watchdog.ingestLine(logLine("app.disk_full", {}, "app", "error"));
    const incident = store.list()[0]!;
    store.setState(incident.id, "resolved", "api");
    await harness.advance(1000);
    expect(store.get(incident.id)).toMatchObject({ verdict: "cancelled", action_request: { status: "cancelled" } });
    expect(() => new ActionRequestStore(harness!.db, store).decide(incident.id, "allow", "api", harness!.clock.now)).toThrow(
      expect.objectContaining({ code: "action_already_decided" }),
    );
    await harness.advance(1000);
    expect(marker(dir)).toBeUndefined();
  });

  test("a new supervisor adopts the pending request and runs it once allowed", async () => {
    const dir = makeTempDir("agentd-approval-");
    harness = createHarness(approvalConfig(dir));
    const store = new IncidentStore(harness.db);
    await harness.watchdog.ingestLine(logLine("app.disk_full", {}, "app", "error"));
    const incident = store.list()[0]!;
    const clock = harness.clock;
    const next = new Watchdog({
      config: harness.config,
      db: harness.db,
      log: createLogger("watchdog"),
      worker: { restartWorker: async () => "restarted" },
      proxy: new HttpProxyAdmin(() => undefined, undefined),
      health: () => ({ ok: true, detail: {} }),
      now: () => clock.now,
    });
    expect(next.adoptUnresolved()).toBe(1);
    new ActionRequestStore(harness.db, store).decide(incident.id, "allow", "api", clock.now);
    clock.now += 1000;
    await next.tick();
    expect(marker(dir)).toBe("ran\n");
    expect(store.get(incident.id).action_request?.status).toBe("done");
  });

  test("tier 2 remembers which command worked and asks approval for that command", async () => {
    const dir = makeTempDir("agentd-approval-");
    harness = createHarness(approvalConfig(dir, { rules: [] }));
    const store = new IncidentStore(harness.db);
    const key = { component: "app", pattern: "app.disk_full" };
    for (let i = 0; i < 3; i++) harness.watchdog.memory.record(key, "run_command", 1, "success", 0, harness.clock.now, "fix");
    await harness.watchdog.ingestLine(logLine("app.disk_full", {}, "app", "error"));
    const incident = store.get(store.list()[0]!.id);
    expect(incident).toMatchObject({ tier: 2, action: "run_command", action_request: { command: "fix", status: "pending", tier: 2 } });
    expect(marker(dir)).toBeUndefined();
  });
});
