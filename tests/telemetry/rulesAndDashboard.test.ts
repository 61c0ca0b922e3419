import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { promtool } from "./support/monitoringServers.ts";
import { dashboardPanels, metricNames, RULES_DIR } from "./support/dashboard.ts";

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
});
