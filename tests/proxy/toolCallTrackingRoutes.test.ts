/**
 * Per-model tracking through the proxy, against a loopback chat upstream with the real openai SDK:
 * every answer to a request that offered tools is counted, unparseable markup is logged for the
 * watchdog (redacted), and a streamed structured call's name is repaired without holding it back.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { startProxy, type ProxyHarness } from "./proxyHarness.ts";
import { renderPrometheus } from "../../src/core/metrics/index.ts";

let upstream: ScriptedUpstream | undefined;
let harness: ProxyHarness | undefined;

afterEach(async () => {
  await harness?.close();
  await upstream?.close();
  harness = undefined;
  upstream = undefined;
});

const tools = [
  {
    type: "function" as const,
    function: { name: "exec_command", parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] } },
  },
];

function start(): ProxyHarness {
  upstream = startScriptedUpstream({ wires: ["chat"] });
  harness = startProxy({ providers: [{ name: "up", base_url: upstream.url }] });
  return harness;
}

function metric(name: string, labels: string): number | undefined {
  const line = renderPrometheus(harness!.proxy.metricFamilies())
    .split("\n")
    .find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.split(" ").pop());
}

const broken =
  '<tool_call>{"name": "exec_command", "arguments": {"cmd": "curl -H \'Authorization: Bearer sk-live-abcdefghijklmnop1234\'"</tool_call>';

describe("per-model tracking on the routes", () => {
  test("whole and streamed chat answers: counted per answer, unparseable markup logged with a redacted sample", async () => {
    const { client } = start();
    upstream!.enqueue(
      { kind: "text", text: "Nothing to run." },
      { kind: "text", text: broken },
      { kind: "text", text: broken, chunks: [...broken] },
      { kind: "text", text: '<tool_call>{"name": "exec_command", "arguments": {"cmd": "ls"}}</tool_call>' },
    );
    for (let i = 0; i < 2; i++) {
      const answer = await client.chat.completions.create({ model: "qwen3", messages: [], tools });
      expect(answer.choices[0]!.message.content).toBe(i === 0 ? "Nothing to run." : broken);
    }
    let content = "";
    for await (const chunk of await client.chat.completions.create({ model: "qwen3", messages: [], tools, stream: true }))
      content += chunk.choices[0]?.delta.content ?? "";
    expect(content).toBe(broken);
    await client.chat.completions.create({ model: "qwen3", messages: [], tools });
    const labels = 'provider="up",model="qwen3"';
    expect(metric("agentd_proxy_tool_answers_total", labels)).toBe(4);
    expect(metric("agentd_proxy_tool_answer_findings_total", `${labels},finding="unparsed"`)).toBe(2);
    expect(metric("agentd_proxy_tool_answer_findings_total", `${labels},finding="text_calls"`)).toBe(1);
    expect(metric("agentd_proxy_tool_calls_unparsed_total", `${labels},format="hermes"`)).toBe(2);
    const events = harness!.events("proxy.tool_calls_unparsed");
    expect(events.map((e) => [e.provider, e.model, e.format, e.blocks])).toEqual([
      ["up", "qwen3", "hermes", 1],
      ["up", "qwen3", "hermes", 1],
    ]);
    for (const event of events) {
      expect(String(event.sample)).toStartWith('<tool_call>{"name": "exec_command"');
      expect(String(event.sample)).not.toContain("sk-live-abcdefghijklmnop1234");
    }
  });

  test("a request without tools is not an answer to track", async () => {
    const { client } = start();
    upstream!.enqueue({ kind: "text", text: broken });
    await client.chat.completions.create({ model: "qwen3", messages: [] });
    expect(renderPrometheus(harness!.proxy.metricFamilies())).not.toContain("agentd_proxy_tool_answers_total{");
    expect(harness!.events("proxy.tool_calls_unparsed")).toEqual([]);
  });

  test("a streamed structured call under a prefixed name reaches the client repaired, its arguments as streamed", async () => {
    const { client } = start();
    upstream!.enqueue({ kind: "text", toolCalls: [{ name: "functions.exec_command", arguments: '{"cmd": "uptime"}' }] });
    const names: string[] = [];
    let args = "";
    for await (const chunk of await client.chat.completions.create({ model: "qwen3", messages: [], tools, stream: true }))
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        if (call.function?.name) names.push(call.function.name);
        args += call.function?.arguments ?? "";
      }
    expect([names, args]).toEqual([["exec_command"], '{"cmd": "uptime"}']);
    expect(metric("agentd_proxy_tool_call_repairs_total", 'provider="up",model="qwen3",kind="name_prefix"')).toBe(1);
    expect(metric("agentd_proxy_tool_answer_findings_total", 'provider="up",model="qwen3",finding="repaired"')).toBe(1);
  });
});
