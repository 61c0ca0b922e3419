import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ensureBinary } from "../support/binary.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { api, parseSseEvents, startDaemon, type DaemonProcess } from "../e2e/support/daemonProcess.ts";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "./support/otlpReceiver.ts";

// Traces over OTLP/HTTP from the compiled ./agentd to a receiver in the test: the proxy's gen_ai
// client spans continue the client's trace into the upstream, and an agent turn is a tree of
// turn → tool call → approval wait spans.

const GATE = "agentd-telemetry-gate";
const SPAN_KIND_CLIENT = 3;

let primary: ScriptedUpstream;
/** Serves only fo-model, ahead of backup; refuses its key once, so the request fails over. */
let refusing: ScriptedUpstream;
let backup: ScriptedUpstream;
let receiver: OtlpReceiver;
let daemon: DaemonProcess;

const hex = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("hex");
const spanNamed = (predicate: (span: ReceivedSpan) => boolean, what: string) =>
  waitFor(what, () => receiver.spans.find(predicate), { timeoutMs: 20_000, intervalMs: 50 });

beforeAll(async () => {
  await ensureBinary();
  receiver = startOtlpReceiver();
  primary = startScriptedUpstream({ models: ["gpt-test"] });
  refusing = startScriptedUpstream({ models: ["fo-model"] });
  backup = startScriptedUpstream({ models: ["fo-model"] });
  primary.setDefault({ kind: "text", chunks: ["x", "y"], usage: { prompt_tokens: 11, completion_tokens: 7 } });
  daemon = await startDaemon({
    dataDir: makeTempDir("agentd-trace-data-"),
    config: {
      providers: [
        { name: "primary", base_url: primary.url, models: ["gpt-test"], priority: 10 },
        { name: "refusing", base_url: refusing.url, models: ["fo-model"], priority: 5 },
        { name: "backup", base_url: backup.url, models: ["fo-model"], priority: 1 },
      ],
      proxy: { retry_base_ms: 1, retry_max_ms: 5 },
      agent: { model: "gpt-test" },
      approvals: { rules: [{ match: `*${GATE}*`, action: "ask" }] },
      telemetry: { otlp: { endpoint: receiver.url, scheduled_delay_ms: 100 } },
    },
  });
}, 120_000);

afterAll(async () => {
  await daemon?.stop();
  await primary?.close();
  await refusing?.close();
  await backup?.close();
  await receiver?.close();
  removeTempDirs();
}, 60_000);

async function chat(model: string, headers: Record<string, string> = {}): Promise<Response> {
  const response = await fetch(`${daemon.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ model, stream: true, messages: [{ role: "user", content: "hi" }] }),
    signal: AbortSignal.timeout(30_000),
  });
  await response.text();
  return response;
}

describe("OpenTelemetry traces", () => {
  test("a proxied request is a gen_ai client span in the client's trace, and the upstream continues it under agentd's span", async () => {
    const traceId = hex(16);
    const clientSpan = hex(8);
    primary.enqueue({ kind: "http_error", status: 503 });
    const response = await chat("gpt-test", { traceparent: `00-${traceId}-${clientSpan}-01` });
    expect(response.status).toBe(200);
    const span = await spanNamed((s) => s.traceId === traceId && s.name === "chat gpt-test", "the proxy's span");
    expect(span.parentSpanId).toBe(clientSpan);
    expect(span.kind).toBe(SPAN_KIND_CLIENT);
    expect(span.resource["service.name"]).toBe("agentd");
    expect(span.resource["agentd.process"]).toBe("worker");
    expect(span.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "primary",
      "gen_ai.request.model": "gpt-test",
      "gen_ai.request.stream": true,
      "gen_ai.usage.input_tokens": 11,
      "gen_ai.usage.output_tokens": 7,
      "http.route": "/v1/chat/completions",
      "http.response.status_code": 200,
      "agentd.proxy.attempts": 2,
      "agentd.proxy.retries": 1,
      "agentd.proxy.failover": false,
    });
    expect(span.attributes["gen_ai.response.time_to_first_chunk"]).toBeGreaterThan(0);
    // Both attempts went upstream with the client's trace id and agentd's span as the parent.
    const sent = primary.completionRequests().slice(-2);
    for (const request of sent) expect(request.headers.traceparent).toBe(`00-${traceId}-${span.spanId}-01`);
  });

  test("a failover shows on the span: the provider that answered and the one it replaced", async () => {
    refusing.enqueue({ kind: "http_error", status: 401 });
    backup.enqueue({ kind: "text", chunks: ["ok"], usage: { prompt_tokens: 3, completion_tokens: 1 } });
    const traceId = hex(16);
    expect((await chat("fo-model", { traceparent: `00-${traceId}-${hex(8)}-01` })).status).toBe(200);
    const span = await spanNamed((s) => s.traceId === traceId && s.name === "chat fo-model", "the failover span");
    expect(span.attributes).toMatchObject({
      "gen_ai.provider.name": "backup",
      "agentd.proxy.failover": true,
      "agentd.proxy.failover_from": "refusing",
    });
    const metrics = await (await fetch(`${daemon.url}/metrics`)).text();
    expect(metrics).toContain('agentd_proxy_failovers_total{from="refusing",to="backup"} 1');
  });

  test("an agent turn is a span tree: turn → tool call → approval wait, with the model calls under the turn", async () => {
    primary.enqueue(
      { kind: "text", toolCalls: [{ id: "call_gate", name: "exec_command", arguments: JSON.stringify({ cmd: `echo ${GATE}` }) }] },
      { kind: "text", text: "Done." },
    );
    const { id } = await api<{ id: string }>(daemon.url, "/api/sessions", { body: {}, expect: 201 });
    const stream = await fetch(`${daemon.url}/api/sessions/${id}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ content: "run the gate" }),
      signal: AbortSignal.timeout(60_000),
    });
    const events = parseSseEvents(await stream.text());
    expect(events.at(-1)!.type).toBe("approval_required");
    const approvalId = events.at(-1)!.data.approvals[0].approval_id as string;
    await api(daemon.url, `/api/approvals/${approvalId}`, { body: { decision: "allow_once" } });

    const turn = await spanNamed(
      (s) => s.name === "invoke_agent agentd" && s.attributes["gen_ai.conversation.id"] === id,
      "the turn's span (it ends with the turn)",
    );
    expect(turn.parentSpanId).toBeUndefined();
    expect(turn.attributes).toMatchObject({ "gen_ai.operation.name": "invoke_agent", "agentd.turn.reason": "stop" });
    const tool = await spanNamed((s) => s.traceId === turn.traceId && s.name === "execute_tool exec_command", "the tool call's span");
    expect(tool.parentSpanId).toBe(turn.spanId);
    expect(tool.attributes).toMatchObject({
      "gen_ai.tool.name": "exec_command",
      "gen_ai.tool.call.id": "call_gate",
      "agentd.tool.outcome": "ok",
    });
    const wait = await spanNamed((s) => s.traceId === turn.traceId && s.name === "agentd.approval.wait", "the approval wait's span");
    expect(wait.parentSpanId).toBe(tool.spanId);
    expect(wait.attributes).toMatchObject({
      "agentd.approval.id": approvalId,
      "agentd.approval.scope": "exec",
      "agentd.approval.decision": "allow_once",
      "agentd.approval.decided_by": "api",
    });
    const modelCalls = await waitFor("both model calls of the turn", () => {
      const calls = receiver.spans.filter((s) => s.traceId === turn.traceId && s.name === "chat gpt-test");
      return calls.length === 2 ? calls : undefined;
    });
    for (const call of modelCalls) expect(call.parentSpanId).toBe(turn.spanId);
    console.log(
      `otlp: turn ${turn.spanId} ← tool ${tool.spanId} (parent ${tool.parentSpanId}) ← approval ${wait.spanId} (parent ${wait.parentSpanId}); model calls parents ${modelCalls.map((c) => c.parentSpanId).join(",")}`,
    );
  });

  test("a collector that refuses exports loses spans to the counter, and requests go on", async () => {
    receiver.failWith(503);
    for (let i = 0; i < 3; i++) expect((await chat("gpt-test")).status).toBe(200);
    const dropped = await waitFor(
      "spans counted as dropped",
      async () => {
        const text = await (await fetch(`${daemon.url}/metrics`)).text();
        const value = Number(/^agentd_telemetry_spans_dropped_total\{reason="export_failed"\} (\d+)$/m.exec(text)?.[1]);
        return value >= 3 ? value : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(receiver.refused).toBeGreaterThan(0);
    expect(dropped).toBeGreaterThanOrEqual(3);
    receiver.failWith(0);
  });
});
