import { describe, expect, test } from "bun:test";
import { hostVerdict } from "../../src/status/hostVerdict.ts";
import { applySilences } from "../../src/status/verdictSilences.ts";
import { renderPrometheus } from "../../src/core/metrics/index.ts";
import { verdictMetricFamily } from "../../src/status/verdictMetric.ts";
import type { Incident, Silence } from "../../src/watchdog/index.ts";

const silence = (target: string): Silence => ({ id: 1, target, until: Date.now() + 3_600_000, reason: null, created_at: 0 });

function incident(id: number, component: string, severity: string, title: string): Incident {
  return {
    id,
    dedup_key: `${component}@${id}`,
    title,
    category: "daemon",
    severity,
    state: "open",
    first_seen: 0,
    last_seen: 0,
    count: 1,
    tier: null,
    action: null,
    verdict: null,
    details: { component },
    fingerprint: component,
    pattern: component.startsWith("check:") ? "check.tcp" : "worker.crashed",
  };
}

describe("the verdict under a silence", () => {
  const checks = [
    { name: "db", kind: "tcp", state: "fail", severity: "critical" },
    { name: "web", kind: "http", state: "fail", severity: "error" },
  ];
  const open = [incident(2, "check:db", "critical", "Check db failing — check:db"), incident(1, "worker", "critical", "Worker crashed")];

  test("a silenced failing critical check and its incident are warn, named; the rest counts as before", () => {
    const facts = applySilences(checks, open, [silence("db")]);
    expect(facts.silenced).toEqual(["db"]);
    expect(facts.checks.map((c) => c.name)).toEqual(["web"]);
    expect(facts.openIncidents).toEqual([{ severity: "critical", count: 1, title: "Worker crashed" }]);
    const verdict = hostVerdict({ ...facts, pendingApprovals: 0 });
    expect(verdict.status).toBe("fail");
    expect(verdict.reasons).toEqual(["critical incident open: Worker crashed", "check failing: web", "silenced while failing: db"]);
  });

  test("with only silenced faults the verdict is warn, never pass", () => {
    const facts = applySilences(checks.slice(0, 1), open.slice(0, 1), [silence("check:db")]);
    expect(hostVerdict({ ...facts, pendingApprovals: 0 })).toEqual({
      status: "warn",
      reason: "silenced while failing: db",
      reasons: ["silenced while failing: db"],
    });
  });

  test("a silence on something else changes nothing", () => {
    const facts = applySilences(checks, open, [silence("cache")]);
    expect(facts.silenced).toEqual([]);
    expect(hostVerdict({ ...facts, pendingApprovals: 0 }).reasons[0]).toBe(
      "critical incident open: Check db failing — check:db (and 1 more)",
    );
  });

  test("agentd_verdict: one series per state, 1 for the current one", () => {
    const text = renderPrometheus([verdictMetricFamily({ status: "warn", reason: "", reasons: [] })]);
    expect(text).toContain('agentd_verdict{state="warn"} 1\n');
    expect(text).toContain('agentd_verdict{state="fail"} 0\n');
  });
});
