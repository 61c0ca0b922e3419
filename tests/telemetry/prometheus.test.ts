import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ensureBinary } from "../support/binary.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { startDaemon, type DaemonProcess } from "../e2e/support/daemonProcess.ts";
import { dashboardPanels, declaredNames, metricNames, RULES_DIR } from "./support/dashboard.ts";
import { promtool, startPrometheus, type MonitoringServer } from "./support/monitoringServers.ts";
import { startOtlpReceiver, type OtlpReceiver } from "./support/otlpReceiver.ts";

// Debian's prometheus scrapes the compiled ./agentd (supervisor + worker) on loopback; the test
// asks Prometheus's HTTP API what it stored after requests through the proxy to a scripted upstream.

let upstream: ScriptedUpstream;
let receiver: OtlpReceiver;
let daemon: DaemonProcess;
let prometheus: MonitoringServer;

const REQUESTS = 6;

async function query(promql: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> {
  const response = await fetch(`${prometheus.url}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = (await response.json()) as {
    status: string;
    data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
  };
  if (body.status !== "success") throw new Error(`query ${promql} failed: ${JSON.stringify(body)}`);
  return body.data.result;
}

async function chat(stream: boolean): Promise<void> {
  const response = await fetch(`${daemon.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-test", stream, messages: [{ role: "user", content: "hi" }] }),
    signal: AbortSignal.timeout(30_000),
  });
  await response.text();
  expect(response.status).toBe(200);
}

beforeAll(async () => {
  await ensureBinary();
  upstream = startScriptedUpstream({ models: ["gpt-test"] });
  receiver = startOtlpReceiver();
  upstream.setDefault({ kind: "text", chunks: ["a", "b", "c"], usage: { prompt_tokens: 11, completion_tokens: 7 } });
  daemon = await startDaemon({
    dataDir: makeTempDir("agentd-prom-data-"),
    config: {
      providers: [{ name: "scripted", base_url: upstream.url, models: ["gpt-test"] }],
      // Tracing on as well, so its span counters are among the families the dashboard reads.
      telemetry: { otlp: { endpoint: receiver.url } },
      watchdog: { tick_ms: 100 },
    },
  });
  prometheus = await startPrometheus(makeTempDir("agentd-prom-"), [new URL(daemon.url).host], join(RULES_DIR, "agentd.rules.yml"));
}, 120_000);

afterAll(async () => {
  await prometheus?.stop();
  await daemon?.stop();
  await upstream?.close();
  await receiver?.close();
  removeTempDirs();
}, 60_000);

describe("Prometheus scrapes agentd", () => {
  test("/metrics passes promtool check metrics, and the dashboard reads only families it declares", async () => {
    for (let i = 0; i < 2; i++) await chat(i % 2 === 0);
    // The supervisor's watchdog counters reach the worker's /metrics after its first tick.
    const text = await waitFor("the watchdog counters on /metrics", async () => {
      const body = await (await fetch(`${daemon.url}/metrics`)).text();
      return body.includes("# TYPE agentd_watchdog_actions_total counter") ? body : undefined;
    });
    const { code, output } = await promtool(["check", "metrics"], text);
    expect(output).toBe("");
    expect(code).toBe(0);
    for (const family of [
      "agentd_proxy_responses_total",
      "gen_ai_client_token_usage",
      "gen_ai_client_operation_duration_seconds",
      "gen_ai_server_time_to_first_token_seconds",
      "agentd_proxy_retries_total",
      "agentd_proxy_failovers_total",
      "agentd_proxy_dropped_fields_total",
      "agentd_proxy_breaker_state",
      "agentd_watchdog_check_state",
      "agentd_watchdog_check_silenced",
      "agentd_verdict",
      "agentd_watchdog_check_duration_seconds",
      "agentd_watchdog_incidents_open",
      "agentd_watchdog_actions_total",
      "agentd_watchdog_silences_active",
      "agentd_agent_turns_total",
      "agentd_agent_tool_calls_total",
      "agentd_agent_approvals_pending",
      "agentd_agent_approval_decision_seconds",
      "agentd_pty_sessions_open",
      "agentd_hops",
      "agentd_worker_restarts_total",
      "agentd_unhandled_errors_total",
      "agentd_store_size_bytes",
      "agentd_telemetry_spans_dropped_total",
    ])
      expect(text).toContain(`# TYPE ${family} `);
    // Bounded labels: the route is the template, and the breaker has one series per state.
    expect(text).toContain(
      'agentd_proxy_responses_total{provider="scripted",model="gpt-test",route="/v1/chat/completions",status="200"} 2',
    );
    expect(text).toContain('agentd_proxy_breaker_state{provider="scripted",state="closed"} 1');
    expect(text).toContain(
      'gen_ai_client_token_usage_sum{gen_ai_operation_name="chat",gen_ai_provider_name="scripted",gen_ai_request_model="gpt-test",gen_ai_token_type="input"} 22',
    );
    const declared = declaredNames(text);
    declared.add("up");
    for (const panel of dashboardPanels())
      for (const target of panel.targets)
        for (const name of metricNames(target.expr))
          expect({ panel: panel.title, name, declared: declared.has(name) }).toEqual({ panel: panel.title, name, declared: true });
  });

  test("Prometheus's API shows agentd up, the tokens proxied, and a TTFT quantile over the histogram", async () => {
    const up = await waitFor("Prometheus to scrape agentd", async () => {
      const result = await query('up{job="agentd"}');
      return result.length === 1 && result[0]!.value[1] === "1" ? result : undefined;
    });
    expect(up[0]!.metric.instance).toBe(new URL(daemon.url).host);
    const scraped = async () => Number((await query('sum(gen_ai_client_token_usage_sum{gen_ai_token_type="input"})'))[0]?.value[1] ?? NaN);
    const before = await waitFor("a first scrape with token counts", async () => {
      const value = await scraped();
      return Number.isFinite(value) ? value : undefined;
    });
    for (let i = 0; i < REQUESTS; i++) await chat(i % 2 === 0);
    const tokens = await waitFor("the input tokens of the new requests in Prometheus", async () => {
      const value = await scraped();
      return value >= before + REQUESTS * 11 ? value : undefined;
    });
    const proxied = daemon.lines.filter((r) => r.event === "proxy.request").length;
    expect(tokens).toBe(proxied * 11);
    const outputTokens = await query('sum(agentd_proxy_tokens_total{provider="scripted",direction="out"})');
    expect(Number(outputTokens[0]!.value[1])).toBe(proxied * 7);
    const p50 = await waitFor("histogram_quantile over the TTFT histogram", async () => {
      const result = await query("histogram_quantile(0.5, sum by (le) (rate(gen_ai_server_time_to_first_token_seconds_bucket[30s])))");
      const value = Number(result[0]?.value[1]);
      return Number.isFinite(value) && value > 0 ? value : undefined;
    });
    // A loopback upstream answers its first chunk within the histogram's lower buckets.
    expect(p50).toBeLessThan(1);
    const rules = (await (await fetch(`${prometheus.url}/api/v1/rules`)).json()) as {
      data: { groups: Array<{ rules: Array<{ name: string; health: string }> }> };
    };
    const loaded = rules.data.groups.flatMap((g) => g.rules);
    expect(loaded.map((r) => r.name).sort()).toEqual(
      [
        "AgentdApprovalWaitingTooLong",
        "AgentdCriticalCheckFailing",
        "AgentdDown",
        "AgentdHostFailing",
        "AgentdHostWarning",
        "AgentdProviderBreakerOpen",
        "AgentdProxyErrorRatio",
        "AgentdStoreNotWritable",
        "AgentdTtftP95High",
        "AgentdWorkerRestarting",
      ].sort(),
    );
    console.log(
      `prometheus: up=${up[0]!.value[1]} input tokens=${tokens} output tokens=${outputTokens[0]!.value[1]} TTFT p50=${p50.toFixed(4)}s rules=${loaded.map((r) => `${r.name}:${r.health}`).join(",")}`,
    );
  });
});
