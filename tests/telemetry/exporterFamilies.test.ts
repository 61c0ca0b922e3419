import { describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import {
  agentdFamilies,
  buildFacts,
  CounterFamily,
  maxOpenFiles,
  processFacts,
  processFamilies,
  renderPrometheus,
} from "../../src/core/metrics/index.ts";
import { CheckScheduler } from "../../src/watchdog/checks/checkScheduler.ts";
import { watchdogConfigSchema } from "../../src/core/config/sections/watchdogConfig.ts";
import { watchdogMetricFamilies } from "../../src/watchdog/watchdogCounters.ts";
import { promtool } from "./support/monitoringServers.ts";
import { memoryStores } from "../support/memoryStore.ts";

// The pure parts of the exporter conventions: the families' names and types, counters shown at 0
// before their first event, and each check's last run read from the store.

const store = memoryStores();

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            1024                 524288               files
Max locked memory         8388608              8388608              bytes
`;

describe("process_* families", () => {
  test("the soft open-files limit is read from /proc/PID/limits; unlimited or missing gives none", () => {
    expect(maxOpenFiles(LIMITS)).toBe(1024);
    expect(maxOpenFiles(LIMITS.replace("1024       ", "unlimited  "))).toBeUndefined();
    expect(maxOpenFiles("Max cpu time unlimited unlimited seconds\n")).toBeUndefined();
    expect(maxOpenFiles("")).toBeUndefined();
  });

  test("this process's facts render as promtool-clean text with the client libraries' names", async () => {
    const facts = processFacts();
    expect(facts.openFds).toBeGreaterThan(2);
    expect(facts.maxFds).toBeGreaterThan(facts.openFds!);
    expect(facts.startTimeSeconds).toBeLessThanOrEqual(Date.now() / 1000);
    const text = renderPrometheus(processFamilies(facts));
    for (const line of [
      "# TYPE process_resident_memory_bytes gauge",
      "# TYPE process_cpu_seconds_total counter",
      "# TYPE process_start_time_seconds gauge",
      "# TYPE process_open_fds gauge",
      "# TYPE process_max_fds gauge",
    ])
      expect(text).toContain(`${line}\n`);
    const checked = await promtool(["check", "metrics"], text);
    expect(checked.output).toBe("");
    expect(checked.code).toBe(0);
  });

  test("without /proc the fd families are left out rather than reported as 0", () => {
    const names = processFamilies({ residentBytes: 1, cpuSeconds: 0.5, startTimeSeconds: 10 }).map((f) => f.name);
    expect(names).toEqual(["process_resident_memory_bytes", "process_cpu_seconds_total", "process_start_time_seconds"]);
  });
});

describe("agentd_build_info and agentd_start_time_seconds", () => {
  test("the commit is a label only when the environment names one", () => {
    expect(buildFacts("1.2.3", { AGENTD_BUILD_COMMIT: " abc123\n" })).toEqual({
      version: "1.2.3",
      bunVersion: Bun.version,
      commit: "abc123",
    });
    expect(buildFacts("1.2.3", { AGENTD_BUILD_COMMIT: "  " })).toEqual({ version: "1.2.3", bunVersion: Bun.version });
    expect(renderPrometheus(agentdFamilies(buildFacts("1.2.3", {}), 1_700_000_000_250))).toContain(
      `agentd_build_info{version="1.2.3",bun_version="${Bun.version}"} 1\n# HELP agentd_start_time_seconds`,
    );
    expect(renderPrometheus(agentdFamilies({ version: "1", bunVersion: "2", commit: 'a"b' }, 0))).toContain(
      'agentd_build_info{version="1",bun_version="2",commit="a\\"b"} 1\n',
    );
    expect(renderPrometheus(agentdFamilies(buildFacts("1", {}), 1_700_000_000_250))).toContain("agentd_start_time_seconds 1700000000.25\n");
  });
});

describe("labelled counters at 0 before their first event", () => {
  test("known label sets show 0, count from there, and others appear as they come", () => {
    const family = new CounterFamily(
      "agentd_test_total",
      "A test.",
      ["a", "b"].map((reason) => ({ reason })),
    );
    expect(renderPrometheus([family.family()])).toBe(
      '# HELP agentd_test_total A test.\n# TYPE agentd_test_total counter\nagentd_test_total{reason="a"} 0\nagentd_test_total{reason="b"} 0\n',
    );
    family.inc({ reason: "b" });
    family.inc({ reason: "c" }, 2);
    expect(renderPrometheus([family.family()]).split("\n").slice(2, -1)).toEqual([
      'agentd_test_total{reason="a"} 0',
      'agentd_test_total{reason="b"} 1',
      'agentd_test_total{reason="c"} 2',
    ]);
  });

  test("the watchdog's counters read 0, not absent, before the supervisor first pushes them; then what it pushed", () => {
    const text = renderPrometheus(watchdogMetricFamilies(store(), undefined));
    for (const series of [
      "agentd_watchdog_signals_total 0",
      "agentd_watchdog_signals_merged_total 0",
      "agentd_watchdog_queue_dropped_total 0",
      "agentd_watchdog_alertmanager_alerts_sent_total 0",
      "agentd_watchdog_alertmanager_posts_failed_total 0",
    ])
      expect(text).toContain(`${series}\n`);
    const pushed = renderPrometheus(
      watchdogMetricFamilies(store(), {
        signals_total: 7,
        signals_merged_total: 2,
        queue_dropped_total: 0,
        queue_depth: 1,
        actions_in_flight: 0,
        actions: { "1|restart_worker|success": 3 },
      }),
    );
    expect(pushed).toContain("agentd_watchdog_signals_total 7\n");
    expect(pushed).toContain('agentd_watchdog_actions_total{tier="1",action="restart_worker",verdict="success"} 3\n');
  });
});

describe("agentd_watchdog_check_last_run_timestamp_seconds", () => {
  const config = watchdogConfigSchema().parse({
    checks: [
      { type: "command", name: "ok", argv: ["true"], severity: "critical" },
      { type: "command", name: "later", argv: ["true"] },
    ],
  });

  /** A scheduler over `checks` on the store, its clock read from `now`, its signals dropped. */
  const schedulerFor = (checks: typeof config, db: Database, now: () => number) =>
    new CheckScheduler(checks.checks, checks.flapping, { workerPid: () => undefined }, () => undefined, db, now);

  test("a check's last run is the time of its latest run; a check not yet run has none", async () => {
    const db = store();
    let now = 1_700_000_000_000;
    const scheduler = schedulerFor(config, db, () => now);
    await scheduler.runOnce("ok");
    let text = renderPrometheus(watchdogMetricFamilies(db, undefined, now));
    expect(text).toContain('agentd_watchdog_check_last_run_timestamp_seconds{check="ok"} 1700000000\n');
    expect(text).not.toContain('agentd_watchdog_check_last_run_timestamp_seconds{check="later"}');
    expect(text).toContain('agentd_watchdog_check_state{check="ok",kind="command",severity="critical",state="pass"} 1\n');
    now += 1_500;
    await scheduler.runOnce("ok");
    text = renderPrometheus(watchdogMetricFamilies(db, undefined, now));
    expect(text).toContain('agentd_watchdog_check_last_run_timestamp_seconds{check="ok"} 1700000001.5\n');
    const checked = await promtool(["check", "metrics"], text);
    expect(checked.output).toBe("");
    expect(checked.code).toBe(0);
  });

  test("a check no longer configured loses its last run with its state", async () => {
    const db = store();
    const now = 1_700_000_000_000;
    const first = schedulerFor(config, db, () => now);
    await first.runOnce("ok");
    await first.runOnce("later");
    const kept = watchdogConfigSchema().parse({ checks: [{ type: "command", name: "later", argv: ["true"] }] });
    schedulerFor(kept, db, () => now);
    const text = renderPrometheus(watchdogMetricFamilies(db, undefined, now));
    expect(text).toContain('agentd_watchdog_check_last_run_timestamp_seconds{check="later"} 1700000000\n');
    expect(text).not.toContain('check="ok"');
  });
});
