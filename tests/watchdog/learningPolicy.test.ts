import { describe, expect, test } from "bun:test";
import { allMigrations } from "../../src/daemon/allMigrations.ts";
import { openStore } from "../../src/core/store/index.ts";
import { actionsInScope, outOfScope, scopeOf } from "../../src/watchdog/decide/actionScope.ts";
import { alsoAlerts, learnable } from "../../src/watchdog/decide/alertPolicy.ts";
import { answerKey, learnKeyOf, PatternMemory } from "../../src/watchdog/decide/patternMemory.ts";
import { judge, verificationSource } from "../../src/watchdog/decide/verificationJudge.ts";
import { watchdogConfigSchema } from "../../src/core/config/sections/watchdogConfig.ts";

const configured = new Map([
  ["svc.fatal", { id: "svc.fatal", verify_check: "svc" }],
  ["svc.noise", { id: "svc.noise" }],
]);
const evidence = { checkPassedSince: false, healthy: true, recurred: false, due: false };

describe("what verifies an action", () => {
  test("a check incident by its check; a watched service's signature by its verify_check; agentd's own by its probes", () => {
    expect(verificationSource("check:db", ["check.tcp"], configured)).toEqual({ kind: "check", check: "db" });
    expect(verificationSource("log:/var/log/svc.log", ["svc.fatal"], configured)).toEqual({ kind: "check", check: "svc" });
    expect(verificationSource("worker", ["worker.crashed"], configured)).toEqual({ kind: "probe" });
    expect(verificationSource("provider:openai", ["upstream.server_error"], configured)).toEqual({ kind: "probe" });
    const none = verificationSource("worker", ["svc.noise"], configured);
    expect(none.kind).toBe("none");
    expect(judge(none, { ...evidence, due: true })).toMatchObject({ verdict: "unverified" });
  });

  test("a check verifies only by passing again: its silence until the deadline is a failure", () => {
    const source = { kind: "check", check: "svc" } as const;
    expect(judge(source, evidence)).toBeUndefined();
    expect(judge(source, { ...evidence, due: true })).toEqual({
      verdict: "failed",
      by: "check svc did not pass again within the verification window",
    });
    // Early success once the check passed after the action; recurrence of a log line is not needed.
    expect(judge(source, { ...evidence, checkPassedSince: true })?.verdict).toBe("success");
    expect(judge(source, { ...evidence, checkPassedSince: true, recurred: true })?.verdict).toBe("success");
  });

  test("agentd's probes: a recurrence fails at once, success waits for the window and healthy probes", () => {
    const probe = { kind: "probe" } as const;
    expect(judge(probe, { ...evidence, recurred: true })?.verdict).toBe("failed");
    expect(judge(probe, evidence)).toBeUndefined();
    expect(judge(probe, { ...evidence, due: true })?.verdict).toBe("success");
    expect(judge(probe, { ...evidence, due: true, healthy: false })?.verdict).toBe("failed");
  });

  test("verify_check must name a configured check", () => {
    const signature = { id: "svc.fatal", title: "Svc fatal", category: "daemon", regex: "FATAL", verify_check: "svc" };
    expect(watchdogConfigSchema().safeParse({ signatures: [signature] }).error?.issues[0]).toMatchObject({
      path: ["signatures", 0, "verify_check"],
      message: "names no configured check (svc)",
    });
    expect(watchdogConfigSchema().safeParse({ signatures: [signature], checks: [{ type: "tcp", name: "svc", port: 5432 }] }).success).toBe(
      true,
    );
  });
});

describe("which actions fit an incident", () => {
  const signatures = new Set(["svc.fatal"]);
  test("restart_worker only for agentd's own worker signals", () => {
    expect(scopeOf("worker", ["worker.crashed"], signatures).ownWorker).toBe(true);
    expect(scopeOf("check:rss", ["check.memory"], signatures).ownWorker).toBe(true);
    expect(scopeOf("check:rss", ["check.flapping", "check.memory"], signatures).ownWorker).toBe(true);
    expect(scopeOf("check:svc", ["check.flapping"], signatures).ownWorker).toBe(false);
    // A configured signature keeps its default component `worker`, yet it is a watched service's line.
    expect(scopeOf("worker", ["svc.fatal"], signatures).ownWorker).toBe(false);
    expect(scopeOf("worker", ["worker.crashed", "svc.fatal"], signatures).ownWorker).toBe(false);
    expect(scopeOf("log:/var/log/svc.log", ["svc.fatal"], signatures).ownWorker).toBe(false);
    expect(scopeOf("check:svc", ["check.http"], signatures).ownWorker).toBe(false);
    expect(scopeOf("worker", [], signatures).ownWorker).toBe(false);
  });

  test("the refusal says why; the other actions are untouched", () => {
    const service = scopeOf("check:svc", ["check.http"], signatures);
    expect(outOfScope("restart_worker", service)).toBe(
      "restart_worker is only for incidents about agentd's own worker; this one is about check:svc",
    );
    expect(outOfScope("run_command", service)).toBeUndefined();
    expect(actionsInScope(["restart_worker", "run_command", "alert", "ignore"], service)).toEqual(["run_command", "alert", "ignore"]);
  });
});

describe("alerts and learning", () => {
  test("an error incident alerts when tier 2 or 3 acts or anything ignores it; tier 1 reflexes and warnings do not page", () => {
    expect(alsoAlerts({ tier: 2, action: "run_command" }, "error", false)).toBe(true);
    expect(alsoAlerts({ tier: 3, action: "ignore" }, "critical", false)).toBe(true);
    expect(alsoAlerts({ tier: 1, action: "ignore" }, "error", false)).toBe(true);
    expect(alsoAlerts({ tier: 1, action: "restart_worker" }, "critical", false)).toBe(false);
    expect(alsoAlerts({ tier: 3, action: "ignore" }, "warning", false)).toBe(false);
    expect(alsoAlerts({ tier: 3, action: "ignore" }, "error", true)).toBe(false);
    expect(alsoAlerts({ tier: 3, action: "alert" }, "error", false)).toBe(false);
    expect(["alert", "ignore", "restart_worker", "run_command"].map(learnable)).toEqual([false, false, true, true]);
  });

  test("outcomes are kept per (component, pattern); a failure demotes; alert and ignore are never recorded; forget", () => {
    const db = openStore({ path: ":memory:", migrations: allMigrations });
    try {
      const memory = new PatternMemory(db);
      const svc = { component: "check:svc", pattern: "check.http" };
      const billing = { component: "check:billing", pattern: "check.http" };
      for (let i = 1; i <= 3; i++) memory.record(svc, "run_command", 2, "success", i, i, "restart-svc");
      expect(memory.record(svc, "ignore", 3, "success", 4, 4)).toBe(false);
      expect(memory.record(svc, "alert", 3, "success", 5, 5)).toBe(false);
      expect(memory.recommend(svc, 3, 0.7)).toMatchObject({ action: "run_command", command: "restart-svc", tries: 3, successes: 3 });
      expect(memory.recommend(billing, 1, 0)).toBeUndefined();
      expect(answerKey(svc)).not.toBe(answerKey(billing));

      memory.record(svc, "run_command", 2, "failed", 6, 6, "restart-svc");
      // 3 of 4 is above the rate floor, but the last try failed: demoted until it works again.
      expect(memory.recommend(svc, 3, 0.7)).toBeUndefined();
      memory.record(svc, "run_command", 3, "success", 7, 7, "restart-svc");
      expect(memory.recommend(svc, 3, 0.7)).toMatchObject({ tries: 5, successes: 4, last_verdict: "success" });

      memory.record(billing, "run_command", 3, "success", 8, 8, "restart-billing");
      expect(memory.learned("check:svc")).toEqual([
        {
          component: "check:svc",
          pattern: "check.http",
          action: "run_command",
          command: "restart-svc",
          tries: 5,
          successes: 4,
          last_verdict: "success",
          incident_ids: [1, 2, 3, 6, 7],
        },
      ]);
      const cache = db.query<{ fingerprint: string }, []>("SELECT fingerprint FROM watchdog_ai_cache ORDER BY fingerprint");
      for (const key of [svc, billing, { component: "check:svc2", pattern: "check.http" }])
        db.run("INSERT INTO watchdog_ai_cache (fingerprint, answer, expires_at) VALUES (?, '{}', 1e15)", [answerKey(key)]);
      // A verdict from before outcomes were kept per component names none: it is never recommended.
      db.run("INSERT INTO watchdog_outcomes (pattern, action, tier, verdict, ts) VALUES ('check.http', 'restart_worker', 3, 'success', 1)");
      expect(memory.recommend(billing, 1, 0)?.action).toBe("run_command");
      expect(memory.learned().map((l) => l.action)).toEqual(["run_command", "run_command"]);
      expect(memory.forget("check:svc")).toBe(5);
      expect(memory.learned().map((l) => l.component)).toEqual(["check:billing"]);
      // The model's saved answers for check:svc go too; check:svc2's is another component's.
      expect(cache.all().map((r) => r.fingerprint)).toEqual(["check:billing|check.http", "check:svc2|check.http"]);
      expect(memory.forget("check:billing", "check.http")).toBe(1);
      expect(cache.all().map((r) => r.fingerprint)).toEqual(["check:svc2|check.http"]);
    } finally {
      db.close();
    }
  });
});

test("a check that flaps while its fix is verified is learned under the same key", () => {
  expect(learnKeyOf({ fingerprint: "check:svc", pattern: "check.flapping+check.http" })).toEqual({
    component: "check:svc",
    pattern: "check.http",
  });
  expect(learnKeyOf({ fingerprint: "check:svc", pattern: "check.flapping" })).toEqual({
    component: "check:svc",
    pattern: "check.flapping",
  });
});
