import { describe, expect, test } from "bun:test";
import { AgentTelemetry } from "../../src/agent/agentTelemetry.ts";
import { ApprovalStore } from "../../src/agent/approvalStore.ts";
import { SessionStore } from "../../src/agent/sessionStore.ts";
import { ToolCallStore } from "../../src/agent/toolCallStore.ts";
import { createLogger } from "../../src/core/log/index.ts";
import { renderPrometheus, type MetricFamily } from "../../src/core/metrics/index.ts";
import { failureCount } from "../../src/core/process/index.ts";
import type { Database } from "../../src/core/store/index.ts";
import { LatestVerdict } from "../../src/daemon/latestVerdict.ts";
import { hopMetricFamilies } from "../../src/hop/hopMetrics.ts";
import type { HopInfo } from "../../src/hop/hopManager.ts";
import { RequestCounter } from "../../src/http/requestCounter.ts";
import { ProxyMetrics } from "../../src/proxy/state/proxyMetrics.ts";
import { ptyMetricFamilies } from "../../src/pty/ptyMetrics.ts";
import type { PtySessionInfo } from "../../src/pty/ptySchemas.ts";
import type { HostVerdict } from "../../src/status/hostVerdict.ts";
import { spanCountFamilies } from "../../src/telemetry/tracing.ts";
import { watchdogMetricFamilies } from "../../src/watchdog/watchdogCounters.ts";
import { promtool } from "./support/monitoringServers.ts";
import { memoryStores } from "../support/memoryStore.ts";

// Each capability's /metrics families, built from what it keeps in memory, without a socket.

const store = memoryStores();

const named = (families: MetricFamily[], name: string): MetricFamily => {
  const family = families.find((f) => f.name === name);
  if (!family) throw new Error(`no family ${name} in ${families.map((f) => f.name).join(", ")}`);
  return family;
};
const sampleValue = (family: MetricFamily, labels: Record<string, string | number> = {}) =>
  family.samples.find((s) => JSON.stringify(s.labels ?? {}) === JSON.stringify(labels))?.value;

/** A pending approval on a fresh session and tool call, as the agent loop records one. */
function askOnce(db: Database, approvals: ApprovalStore): string {
  const session = new SessionStore(db).create({ model: "m", target: "local", policy: {} });
  const call = new ToolCallStore(db).plan({
    sessionId: session.id,
    turnId: "turn-1",
    step: 0,
    ordinal: 0,
    callId: "c1",
    tool: "exec_command",
    scope: "sudo",
    arguments: {},
  });
  const approval = approvals.create(
    { session_id: session.id, turn_id: "turn-1", tool_call_id: call.id, tool: "exec_command", scope: "sudo", summary: "sudo true" },
    20,
  );
  return approval.id;
}

describe("the agent's families", () => {
  test("turns, tool calls by origin, decisions and the gauges it is given", () => {
    const telemetry = new AgentTelemetry(undefined, (name) => name === "exec_command");
    telemetry.turnEnded("t1", "stop", 2);
    telemetry.toolEnded("r1", "exec_command", "ok", "agent");
    telemetry.toolEnded("r2", "made_up", "error", "agent");
    telemetry.toolEnded("r3", "exec_command", "denied", "mcp");
    telemetry.approvalDecided("a1", "deny", "api", 2_000);
    const families = telemetry.metricFamilies([9_000, 4_000], 1, 3, 10_000);
    const turns = named(families, "agentd_agent_turns_total");
    expect(sampleValue(turns, { reason: "stop" })).toBe(1);
    // Every end reason is there from the first scrape.
    expect(sampleValue(turns, { reason: "max_steps" })).toBe(0);
    const agentCalls = named(families, "agentd_agent_tool_calls_total");
    expect(sampleValue(agentCalls, { tool: "exec_command", outcome: "ok" })).toBe(1);
    expect(sampleValue(agentCalls, { tool: "unknown", outcome: "error" })).toBe(1);
    expect(agentCalls.samples).toHaveLength(2);
    expect(named(families, "agentd_mcp_tool_calls_total").samples).toEqual([
      { labels: { tool: "exec_command", outcome: "denied" }, value: 1 },
    ]);
    expect(named(families, "agentd_agent_approval_decision_seconds").samples.at(-1)).toEqual({
      suffix: "_count",
      labels: { decision: "deny" },
      value: 1,
    });
    expect(sampleValue(named(families, "agentd_agent_approvals_pending"))).toBe(2);
    expect(sampleValue(named(families, "agentd_agent_approval_oldest_pending_seconds"))).toBe(6);
    expect(sampleValue(named(families, "agentd_agent_turns_running"))).toBe(1);
    expect(sampleValue(named(families, "agentd_agent_sessions_held"))).toBe(3);
    expect(sampleValue(named(new AgentTelemetry().metricFamilies([], 0, 0, 10_000), "agentd_agent_approval_oldest_pending_seconds"))).toBe(
      0,
    );
  });

  test("pending approvals are kept in memory as they are asked and decided, read from the store once at start", () => {
    const db = store();
    const approvals = new ApprovalStore(db);
    const first = askOnce(db, approvals);
    askOnce(db, approvals);
    expect(approvals.pendingSince()).toHaveLength(2);
    expect(approvals.decide(first, "deny", "api")).toBe(true);
    // A second decision loses the race and changes nothing.
    expect(approvals.decide(first, "allow_once", "api")).toBe(false);
    expect(approvals.pendingSince()).toHaveLength(1);
    // A worker that starts again finds what waits in the store.
    const restarted = new ApprovalStore(db);
    expect(restarted.pendingSince()).toEqual(approvals.pendingSince());
    // From then on the gauge is the store's own memory: a scrape reads no row.
    db.run("UPDATE agent_approvals SET status = 'cancelled'");
    expect(restarted.pendingSince()).toHaveLength(1);
  });
});

describe("the other capabilities' families", () => {
  test("telemetry: spans exported and dropped by reason, from the exporter's counts", () => {
    const families = spanCountFamilies({ exported: 5, dropped_queue_full: 2, dropped_export_failed: 1 });
    expect(sampleValue(named(families, "agentd_telemetry_spans_exported_total"))).toBe(5);
    expect(named(families, "agentd_telemetry_spans_dropped_total").samples).toEqual([
      { labels: { reason: "queue_full" }, value: 2 },
      { labels: { reason: "export_failed" }, value: 1 },
    ]);
  });

  test("proxy: each provider's breaker has one series per state, 1 for the current one", () => {
    const families = new ProxyMetrics().families([
      { provider: "a", state: "open" },
      { provider: "b", state: "closed" },
    ]);
    const breaker = named(families, "agentd_proxy_breaker_state");
    expect(breaker.samples).toHaveLength(6);
    expect(sampleValue(breaker, { provider: "a", state: "open" })).toBe(1);
    expect(sampleValue(breaker, { provider: "a", state: "closed" })).toBe(0);
    expect(sampleValue(breaker, { provider: "b", state: "closed" })).toBe(1);
  });

  test("pty: sessions held and running; hops: every state, 0 when none", () => {
    const sessions = [{ running: true }, { running: false }, { running: true }] as PtySessionInfo[];
    const pty = ptyMetricFamilies(sessions);
    expect(sampleValue(named(pty, "agentd_pty_sessions_open"))).toBe(3);
    expect(sampleValue(named(pty, "agentd_pty_sessions_running"))).toBe(2);
    const hops = named(
      hopMetricFamilies([{ state: "connected" }, { state: "closed" }, { state: "connected" }] as HopInfo[]),
      "agentd_hops",
    );
    expect(hops.samples.map((s) => [s.labels?.state, s.value])).toEqual([
      ["connecting", 0],
      ["connected", 2],
      ["reconnecting", 0],
      ["fallback", 0],
      ["closed", 1],
    ]);
  });

  test("http: requests by method, route template and status", () => {
    const requests = new RequestCounter();
    requests.record("GET", "/livez", 200);
    requests.record("GET", "/livez", 200);
    requests.record("POST", "/v1/chat/completions", 503);
    expect(requests.total).toBe(3);
    expect(requests.metricFamily().samples).toEqual([
      { labels: { method: "GET", route: "/livez", status: 200 }, value: 2 },
      { labels: { method: "POST", route: "/v1/chat/completions", status: 503 }, value: 1 },
    ]);
  });
});

describe("the verdict on /metrics", () => {
  test("each refresh computes the verdict anew; refreshes at the same time share one computation", async () => {
    let computed = 0;
    let answer: HostVerdict["status"] = "pass";
    let release: () => void = () => undefined;
    let gate: Promise<void> = Promise.resolve();
    const latest = new LatestVerdict(async () => {
      computed++;
      await gate;
      return verdictOf(answer);
    }, createLogger("test"));
    await latest.refresh();
    expect(computed).toBe(1);
    const state = () => named(latest.families(), "agentd_verdict").samples.find((s) => s.value === 1)?.labels?.state;
    expect(state()).toBe("pass");
    answer = "fail";
    gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const scrapes = [latest.refresh(), latest.refresh(), latest.refresh()];
    expect(computed).toBe(2);
    // Until the computation ends, families() shows the verdict it holds.
    expect(state()).toBe("pass");
    release();
    await Promise.all(scrapes);
    expect(state()).toBe("fail");
    await latest.refresh();
    expect(computed).toBe(3);
  });

  test("none before the first computation; one that fails keeps the last verdict and is counted", async () => {
    let fail = false;
    const latest = new LatestVerdict(async () => {
      if (fail) throw new Error("health source down");
      return verdictOf("warn");
    }, createLogger("test"));
    expect(latest.families()).toEqual([]);
    await latest.refresh();
    fail = true;
    const before = failureCount("background");
    await latest.refresh();
    expect(failureCount("background")).toBe(before + 1);
    expect(named(latest.families(), "agentd_verdict").samples).toEqual([
      { labels: { state: "pass" }, value: 0 },
      { labels: { state: "warn" }, value: 1 },
      { labels: { state: "fail" }, value: 0 },
    ]);
  });
});

test("every capability's families together: no name twice, and promtool accepts the text", async () => {
  const telemetry = new AgentTelemetry();
  telemetry.toolEnded("r", "exec_command", "ok", "mcp");
  const proxy = new ProxyMetrics();
  proxy.request({
    provider: "p",
    model: 'm"1',
    route: "/v1/chat/completions",
    operation: "chat",
    status: 200,
    outcome: "ok",
    totalMs: 120,
    ttftMs: 30,
    tokensIn: 10,
    tokensOut: 3,
    attempts: 2,
    failoverFrom: "q",
  });
  const latest = new LatestVerdict(async () => verdictOf("fail"), createLogger("test"));
  await latest.refresh();
  const requests = new RequestCounter();
  requests.record("GET", "/metrics", 200);
  const text = renderPrometheus([
    requests.metricFamily(),
    ...telemetry.metricFamilies([], 0, 0),
    ...proxy.families([{ provider: "p", state: "closed" }]),
    ...spanCountFamilies({ exported: 1, dropped_queue_full: 0, dropped_export_failed: 0 }),
    ...ptyMetricFamilies([]),
    ...hopMetricFamilies([]),
    ...watchdogMetricFamilies(store(), undefined),
    ...latest.families(),
  ]);
  const checked = await promtool(["check", "metrics"], text);
  expect(checked.output).toBe("");
  expect(checked.code).toBe(0);
});

function verdictOf(status: HostVerdict["status"]): HostVerdict {
  return { status, reason: status, reasons: [] };
}
