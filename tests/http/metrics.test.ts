import { afterEach, describe, expect, test } from "bun:test";
import { startApp, type RunningApp } from "./appHarness.ts";

let running: RunningApp | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

// One sample line of the Prometheus text format: name, optional {labels}, a number.
const SAMPLE = /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*",?)*\})? -?[0-9.e+-]+$/;

describe("/metrics", () => {
  test("Prometheus text: requests by route and status, uptime, RSS, restarts, and capability families", async () => {
    running = startApp({
      metricFamilies: () => [
        { name: "agentd_worker_restarts_total", help: "Restarts.", type: "counter", samples: [{ value: 3 }] },
        { name: "agentd_proxy_test", help: "A proxy metric.", type: "gauge", samples: [{ value: 7 }] },
        // A model name a client chose: quotes, a backslash and a newline stay inside one sample line.
        { name: "agentd_proxy_hostile_total", help: "Hostile.", type: "counter", samples: [{ labels: { model: 'q"\\\n}x' }, value: 1 }] },
      ],
    });
    for (const path of ["/livez", "/livez", "/readyz", "/nope", "/health"]) await fetch(`${running.url}${path}`);
    const response = await fetch(`${running.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const text = await response.text();
    const lines = text.trimEnd().split("\n");
    expect(lines).toContain('agentd_http_requests_total{method="GET",route="/livez",status="200"} 2');
    expect(lines).toContain('agentd_http_requests_total{method="GET",route="/readyz",status="200"} 1');
    expect(lines).toContain('agentd_http_requests_total{method="GET",route="/health",status="200"} 1');
    expect(lines).toContain('agentd_http_requests_total{method="GET",route="unmatched",status="404"} 1');
    expect(lines).toContain("# TYPE agentd_http_requests_total counter");
    expect(lines).toContain("# TYPE agentd_uptime_seconds gauge");
    expect(lines).toContain("agentd_worker_restarts_total 3");
    expect(lines).toContain("agentd_proxy_test 7");
    expect(lines).toContain('agentd_proxy_hostile_total{model="q\\"\\\\\\n}x"} 1');
    const uptime = Number(lines.find((line) => line.startsWith("agentd_uptime_seconds "))!.split(" ")[1]);
    expect(uptime).toBeGreaterThanOrEqual(5);
    const rss = Number(lines.find((line) => line.startsWith("agentd_resident_memory_bytes "))!.split(" ")[1]);
    expect(rss).toBeGreaterThan(1024 * 1024);
    for (const line of lines) {
      if (line.startsWith("# HELP ") || line.startsWith("# TYPE ")) continue;
      expect(line).toMatch(SAMPLE);
    }
  });

  test("process_* of this process, the worker's start time and the build come before the capabilities' families", async () => {
    running = startApp();
    const text = await (await fetch(`${running.url}/metrics`)).text();
    const value = (name: string) =>
      Number(
        text
          .split("\n")
          .find((line) => line.startsWith(`${name} `))!
          .split(" ")[1],
      );
    expect(value("agentd_start_time_seconds")).toBe(running.deps.startedAt / 1000);
    expect(value("process_start_time_seconds")).toBe(performance.timeOrigin / 1000);
    expect(value("process_open_fds")).toBeGreaterThan(0);
    expect(value("process_cpu_seconds_total")).toBeGreaterThan(0);
    expect(text).toContain(`agentd_build_info{version="9.9.9-test",bun_version="${Bun.version}"} 1\n`);
    expect(text.indexOf("# TYPE process_resident_memory_bytes gauge")).toBeLessThan(text.indexOf("agentd_worker_restarts_total"));
  });

  test("a request's status is counted as answered, 503 included", async () => {
    running = startApp({ readiness: () => ["not yet"] });
    await fetch(`${running.url}/readyz`);
    const text = await (await fetch(`${running.url}/metrics`)).text();
    expect(text).toContain('agentd_http_requests_total{method="GET",route="/readyz",status="503"} 1\n');
  });
});
