import { afterEach, describe, expect, test } from "bun:test";
import { IncidentStore } from "../../src/watchdog/incidents/incidentStore.ts";
import { createHarness, logLine, startAdminRecorder, type Harness } from "./watchdogHarness.ts";

let harness: Harness | undefined;
let admin: ReturnType<typeof startAdminRecorder> | undefined;
afterEach(() => {
  harness?.close();
  admin?.stop();
  harness = admin = undefined;
});

const error500 = (provider = "primary") =>
  logLine("upstream.error", { provider, status: 500, cause: "http_5xx", message: "upstream answered 500" });

describe("tier 1 against an upstream 500 storm", () => {
  test("opens the provider's breaker through the admin route, verifies it, resolves the incident", async () => {
    admin = startAdminRecorder();
    harness = createHarness({ verify_window_s: 30, resolve_after_s: 60 }, admin.url);
    const { watchdog } = harness;
    for (let i = 0; i < 4; i++) await watchdog.ingestLine(error500());
    expect(admin.calls).toHaveLength(0);
    await watchdog.ingestLine(error500());
    expect(admin.calls).toEqual([
      {
        path: "/api/admin/proxy/providers/primary/breaker/open",
        body: { cooldown_ms: 300_000, reason: expect.stringContaining("breaker-on-5xx-storm") },
      },
    ]);
    expect(admin.breakerState()).toBe("open");
    // The storm is one incident, not one per failed request.
    const store = new IncidentStore(harness.db);
    expect(store.count()).toBe(1);
    const [incident] = store.list();
    expect(incident).toMatchObject({
      tier: 1,
      action: "open_breaker",
      verdict: "pending",
      count: 5,
      category: "upstream",
      fingerprint: "provider:primary",
      pattern: "http:500+upstream.server_error",
    });

    await harness.advance(30_000);
    expect(store.get(incident!.id).verdict).toBe("success");
    expect(watchdog.memory.actions({ component: "provider:primary", pattern: "http:500+upstream.server_error" })).toEqual([
      { action: "open_breaker", command: null, tries: 1, successes: 1, last_verdict: "success" },
    ]);
    await harness.advance(30_000);
    expect(store.get(incident!.id).state).toBe("resolved");
    expect(store.timeline(incident!.id).map((e) => e.kind)).toEqual([
      "signal",
      "action",
      "action_done",
      "verdict",
      "learned",
      "note",
      "state",
    ]);
  });

  test("the storm in one read of the worker's stdout, among hundreds of proxied requests, is decided as line by line", async () => {
    admin = startAdminRecorder();
    harness = createHarness({ verify_window_s: 30 }, admin.url);
    const request = logLine("proxy.request", { provider: "primary", model: "ENOSPC", status: 200 }, "worker.proxy", "info");
    let block = "";
    for (let i = 0; i < 300; i++) block += `${i % 60 === 59 ? error500() : request}\r\n`;
    await harness.watchdog.ingestBlock(block);
    expect(admin.calls.map((call) => call.path)).toEqual(["/api/admin/proxy/providers/primary/breaker/open"]);
    const store = new IncidentStore(harness.db);
    expect(store.list()).toMatchObject([{ action: "open_breaker", count: 5, fingerprint: "provider:primary" }]);
    // Nothing raised, nothing to wait for.
    expect(harness.watchdog.ingestBlock(`${request}\n`.repeat(100))).toBeUndefined();
  });

  test("errors that continue after the action fail the verdict and escalate to an alert", async () => {
    admin = startAdminRecorder();
    harness = createHarness({ verify_window_s: 30 }, admin.url);
    for (let i = 0; i < 5; i++) await harness.watchdog.ingestLine(error500());
    harness.clock.now += 5000;
    await harness.watchdog.ingestLine(error500());
    await harness.advance(25_000);
    const incident = new IncidentStore(harness.db).list()[0]!;
    expect(incident).toMatchObject({
      action: "open_breaker",
      verdict: "failed",
      details: { reason: "open_breaker did not clear the incident" },
    });
    expect(harness.events("watchdog.alert")).toHaveLength(1);
  });

  test("an admin route that refuses counts as a failed action and alerts", async () => {
    admin = startAdminRecorder(404);
    harness = createHarness({}, admin.url);
    for (let i = 0; i < 5; i++) await harness.watchdog.ingestLine(error500());
    const incident = new IncidentStore(harness.db).list()[0]!;
    expect(incident).toMatchObject({ action: "open_breaker", verdict: "failed" });
    expect(harness.events("watchdog.alert")).toHaveLength(1);
    expect(harness.watchdog.memory.actions({ component: incident.fingerprint!, pattern: incident.pattern! })).toEqual([
      { action: "open_breaker", command: null, tries: 1, successes: 0, last_verdict: "failed" },
    ]);
  });

  test("a silenced provider is recorded but neither acted on nor alerted", async () => {
    admin = startAdminRecorder();
    harness = createHarness({}, admin.url);
    harness.watchdog.silences.add("primary", 30 * 60_000, "maintenance", harness.clock.now);
    for (let i = 0; i < 6; i++) await harness.watchdog.ingestLine(error500());
    expect(admin.calls).toHaveLength(0);
    const incident = new IncidentStore(harness.db).list()[0]!;
    expect(incident.count).toBe(6);
    expect(incident.action).toBeNull();
    expect(
      new IncidentStore(harness.db).timeline(incident.id).some((e) => e.kind === "silenced" && e.message.includes("maintenance")),
    ).toBe(true);
  });

  test("incidents left open by a previous run are re-evaluated and resolved, with the resolution alerted", async () => {
    harness = createHarness({ resolve_after_s: 60 });
    const store = new IncidentStore(harness.db);
    const old = store.open({
      fingerprint: "supervisor",
      pattern: "crash_loop",
      title: "Worker crash loop",
      category: "daemon",
      severity: "critical",
      now: harness.clock.now - 3_600_000,
    });
    store.mergeDetails(old.id, { alerted_at: harness.clock.now - 3_600_000 });
    expect(harness.watchdog.adoptUnresolved()).toBe(1);
    harness.health.ok = false;
    await harness.advance(1000);
    expect(store.get(old.id).state).toBe("open");
    harness.health.ok = true;
    await harness.advance(1000);
    expect(store.get(old.id).state).toBe("resolved");
    expect(harness.events("watchdog.alert_resolved")).toHaveLength(1);
  });

  test("the store keeps at most max_incidents, pruning the oldest resolved ones", async () => {
    harness = createHarness({ max_incidents: 10 });
    const store = new IncidentStore(harness.db);
    for (let i = 0; i < 12; i++) {
      const incident = store.open({
        fingerprint: `c${i}`,
        pattern: "p",
        title: `t${i}`,
        category: "daemon",
        severity: "error",
        now: 1000 + i,
      });
      if (i < 11) store.setState(incident.id, "resolved", "test");
    }
    expect(store.prune(10)).toBe(2);
    expect(store.list({ limit: 100 }).map((i) => i.title)).not.toContain("t0");
    expect(store.count()).toBe(10);
  });
});
