import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { promtool } from "./support/monitoringServers.ts";
import { dashboardPanels, legendProblems, metricNames, RULES_DIR, seriesKind, unitProblems, type Panel } from "./support/dashboard.ts";

// The shipped Prometheus rules and Grafana dashboard, checked with Debian's promtool.

describe("deploy/prometheus", () => {
  test("promtool check rules accepts agentd.rules.yml", async () => {
    const { code, output } = await promtool(["check", "rules", join(RULES_DIR, "agentd.rules.yml")]);
    expect(output).toContain("SUCCESS: 10 rules found");
    expect(code).toBe(0);
  });

  test("promtool test rules passes the unit tests of every alert", async () => {
    const { code, output } = await promtool(["test", "rules", "agentd.rules.test.yml"], undefined, RULES_DIR);
    expect(output).toContain("SUCCESS");
    expect(code).toBe(0);
  });
});

describe("deploy/grafana", () => {
  test("the dashboard is JSON whose every panel queries agentd's metrics", () => {
    const panels = dashboardPanels();
    expect(panels.length).toBeGreaterThanOrEqual(12);
    for (const panel of panels) {
      expect(panel.targets.length).toBeGreaterThan(0);
      for (const target of panel.targets) {
        const names = metricNames(target.expr);
        expect(names.length).toBeGreaterThan(0);
        for (const name of names) expect(name).toMatch(/^(up|agentd_\w+|gen_ai_\w+)$/);
      }
    }
  });

  test("metric names are read out of PromQL, not labels, functions or strings", () => {
    expect(
      metricNames(
        'histogram_quantile(0.95, sum by (gen_ai_provider_name, le) (rate(gen_ai_server_time_to_first_token_seconds_bucket{instance=~"$i"}[5m])))',
      ),
    ).toEqual(["gen_ai_server_time_to_first_token_seconds_bucket"]);
    expect(metricNames('up{job="agentd"}')).toEqual(["up"]);
  });

  test("one unit per axis: each panel's series measure one thing, drawn in a unit that fits it", () => {
    expect(dashboardPanels().flatMap(unitProblems)).toEqual([]);
  });

  test("instance is in every legend and survives every aggregation", () => {
    expect(dashboardPanels().flatMap(legendProblems)).toEqual([]);
  });

  test("a per-host verdict panel reads agentd_verdict by instance", () => {
    const verdict = dashboardPanels().filter((panel) =>
      panel.targets.some((target) => metricNames(target.expr).includes("agentd_verdict")),
    );
    expect(verdict.map((panel) => panel.title)).toEqual(["Verdict per host"]);
    expect(verdict[0]!.targets.every((target) => /by \(instance\)/.test(target.expr) && target.legendFormat === "{{instance}}")).toBe(true);
  });

  test("the unit and legend rules catch the hostile panels: mixed units, a wrong unit, a lost instance", () => {
    const panel = (unit: string, ...targets: Panel["targets"]): Panel => ({ title: "p", fieldConfig: { defaults: { unit } }, targets });
    expect(seriesKind('agentd_watchdog_check_state{state="fail"}')).toBe("state");
    expect(seriesKind("agentd_watchdog_check_duration_seconds")).toBe("seconds");
    expect(seriesKind("histogram_quantile(0.95, sum by (instance, le) (rate(x_seconds_bucket[5m])))")).toBe("seconds");
    expect(seriesKind("sum by (instance) (rate(a_total[5m])) / sum by (instance) (rate(b_total[5m]))")).toBe("ratio");
    expect(seriesKind("increase(agentd_worker_restarts_total[1h])")).toBe("count");
    expect(seriesKind("agentd_store_size_bytes")).toBe("bytes");
    expect(
      unitProblems(
        panel("short", { expr: 'agentd_watchdog_check_state{state="fail"}' }, { expr: "agentd_watchdog_check_duration_seconds" }),
      ),
    ).toEqual(["p: series of different units on one axis (state, seconds)"]);
    expect(unitProblems(panel("short", { expr: "agentd_store_size_bytes" }))).toEqual(["p: unit short for bytes series (expected bytes)"]);
    expect(unitProblems(panel("suffix: tokens/s", { expr: "sum by (instance) (rate(t_sum[5m]))" }))).toEqual([]);
    expect(legendProblems(panel("reqps", { expr: "sum by (provider) (rate(r_total[5m]))", legendFormat: "{{provider}}" }))).toEqual([
      'p: legend "{{provider}}" lacks {{instance}}',
      "p: sum by (provider) (…) drops the instance label",
    ]);
    expect(legendProblems(panel("ops", { expr: "sum(rate(r_total[5m]))", legendFormat: "{{instance}}" }))).toEqual([
      "p: sum(…) drops the instance label",
    ]);
  });
});
