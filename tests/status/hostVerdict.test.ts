import { describe, expect, test } from "bun:test";
import { ALL_CLEAR, hostVerdict, verdictExitCode } from "../../src/status/hostVerdict.ts";

const quiet = { checks: [], openIncidents: [], pendingApprovals: 0 };

describe("hostVerdict", () => {
  test("nothing wrong is pass, and says so", () => {
    expect(hostVerdict(quiet)).toEqual({ status: "pass", reason: ALL_CLEAR, reasons: [] });
    expect(hostVerdict({ ...quiet, checks: [{ name: "web", state: "pass", severity: "critical" }] }).status).toBe("pass");
  });

  test("a failing check of any severity but critical is warn", () => {
    const verdict = hostVerdict({
      ...quiet,
      checks: [
        { name: "web", state: "fail", severity: "error" },
        { name: "db", state: "fail" },
      ],
    });
    expect(verdict.status).toBe("warn");
    expect(verdict.reason).toBe("check failing: web, db");
  });

  test("a failing critical check is fail, and its reason comes first", () => {
    const verdict = hostVerdict({
      ...quiet,
      checks: [
        { name: "web", state: "fail", severity: "warning" },
        { name: "db", state: "fail", severity: "critical" },
      ],
      pendingApprovals: 2,
    });
    expect(verdict.status).toBe("fail");
    expect(verdict.reasons).toEqual(["critical check failing: db", "check failing: web", "2 approvals waiting"]);
  });

  test("an open critical incident is fail; an open error incident is warn; lesser ones count for nothing", () => {
    expect(hostVerdict({ ...quiet, openIncidents: [{ severity: "critical", count: 3, title: "Worker crash loop" }] })).toEqual({
      status: "fail",
      reason: "critical incident open: Worker crash loop (and 2 more)",
      reasons: ["critical incident open: Worker crash loop (and 2 more)"],
    });
    expect(hostVerdict({ ...quiet, openIncidents: [{ severity: "error", count: 1, title: "Disk" }] }).reason).toBe(
      "error incident open: Disk",
    );
    expect(hostVerdict({ ...quiet, openIncidents: [{ severity: "warning", count: 4, title: "Flapping" }] }).status).toBe("pass");
  });

  test("a waiting approval is warn", () => {
    expect(hostVerdict({ ...quiet, pendingApprovals: 1 })).toMatchObject({ status: "warn", reason: "1 approval waiting" });
  });

  test("an unknown check is not a failing one", () => {
    expect(hostVerdict({ ...quiet, checks: [{ name: "web", state: "unknown", severity: "critical" }] }).status).toBe("pass");
  });
});

describe("agentd's own health in the verdict", () => {
  test("a failing /health check fails the host; its mirrors of the watchdog are not counted twice", () => {
    const verdict = hostVerdict({
      ...quiet,
      health: [
        { key: "store:writable", status: "fail" },
        { key: "watchdog:checks", status: "warn" },
        { key: "incidents:open", status: "warn" },
      ],
    });
    expect(verdict).toEqual({
      status: "fail",
      reason: "agentd check failing: store:writable",
      reasons: ["agentd check failing: store:writable"],
    });
    expect(hostVerdict({ ...quiet, health: [{ key: "watchdog:checks", status: "warn" }] }).status).toBe("pass");
  });
});

describe("verdictExitCode", () => {
  test("1 on a fail verdict, in JSON and in text; 0 on pass and warn", () => {
    expect(verdictExitCode(JSON.stringify({ verdict: { status: "fail" }, health: { status: "pass" } }), true)).toBe(1);
    expect(verdictExitCode(JSON.stringify({ verdict: { status: "warn" }, health: { status: "pass" } }), true)).toBe(0);
    expect(verdictExitCode("agentd 0.1.0  status FAIL  host h  up 1m\n", false)).toBe(1);
    expect(verdictExitCode("agentd 0.1.0  status WARN  host h  up 1m\n", false)).toBe(0);
  });
});
