/**
 * Repairs and switches through the proxy, against a loopback chat upstream, with the real openai
 * SDK: what is repaired is said in `x-agentd-repaired` and counted by kind and model in /metrics;
 * `tool_call_text` and `tool_call_format` turn reading off or pin a format per provider and model.
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
    function: {
      name: "exec_command",
      parameters: { type: "object", properties: { cmd: { type: "string" }, timeout_ms: { type: "integer" } }, required: ["cmd"] },
    },
  },
];

function start(provider: Record<string, unknown> = {}): ProxyHarness {
  upstream = startScriptedUpstream({ wires: ["chat"] });
  harness = startProxy({ providers: [{ name: "up", base_url: upstream.url, ...provider }] });
  return harness;
}

function metric(name: string, labels: string): number | undefined {
  const line = renderPrometheus(harness!.proxy.metricFamilies())
    .split("\n")
    .find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.split(" ").pop());
}

describe("repairs against the declared schema", () => {
  test("a text call under a prefixed name with a near parameter name: repaired, said in the header, counted", async () => {
    const { client } = start();
    upstream!.enqueue({
      kind: "text",
      text: '<tool_call>{"name": "functions.exec_command", "arguments": {"command": "ls -la"}}</tool_call>',
    });
    const { data, response } = await client.chat.completions
      .create({ model: "gpt-test", messages: [{ role: "user", content: "list" }], tools })
      .withResponse();
    const call = data.choices[0]!.message.tool_calls![0]!;
    expect(call.type === "function" && [call.function.name, call.function.arguments]).toEqual(["exec_command", '{"cmd":"ls -la"}']);
    expect(response.headers.get("x-agentd-repaired")).toBe("name_prefix,param_name");
    expect(metric("agentd_proxy_tool_call_repairs_total", 'provider="up",model="gpt-test",kind="name_prefix"')).toBe(1);
    expect(metric("agentd_proxy_tool_call_repairs_total", 'provider="up",model="gpt-test",kind="param_name"')).toBe(1);
    expect(metric("agentd_proxy_text_tool_calls_total", 'provider="up",model="gpt-test",format="hermes"')).toBe(1);
    expect(harness!.events("proxy.tool_calls_read").map((r) => [r.model, r.formats, r.calls, r.repairs])).toEqual([
      ["gpt-test", ["hermes"], 1, ["name_prefix", "param_name"]],
    ]);
  });

  test("a structured call the upstream parsed itself: case of the name and a double-wrapped value repaired", async () => {
    const { client } = start();
    upstream!.enqueue({ kind: "text", toolCalls: [{ name: "EXEC_COMMAND", arguments: '{"cmd":"{\\"cmd\\": \\"ls\\"}"}' }] });
    const { data, response } = await client.chat.completions
      .create({ model: "gpt-test", messages: [{ role: "user", content: "list" }], tools })
      .withResponse();
    const call = data.choices[0]!.message.tool_calls![0]!;
    expect(call.type === "function" && [call.function.name, call.function.arguments]).toEqual(["exec_command", '{"cmd":"ls"}']);
    expect(response.headers.get("x-agentd-repaired")).toBe("name_case,nested_json");
  });

  test("arguments encoded twice, streamed a character at a time: repaired and counted (a stream's headers are already sent)", async () => {
    const { client } = start();
    const twice = JSON.stringify(JSON.stringify(JSON.stringify({ cmd: "uptime" })));
    const text = `<tool_call>{"name": "exec_command", "arguments": ${twice}}</tool_call>`;
    upstream!.enqueue({ kind: "text", text, chunks: [...text] });
    let args = "";
    for await (const chunk of await client.chat.completions.create({ model: "gpt-test", messages: [], tools, stream: true }))
      args += chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? "";
    expect(args).toBe('{"cmd":"uptime"}');
    expect(metric("agentd_proxy_tool_call_repairs_total", 'provider="up",model="gpt-test",kind="double_encoded"')).toBe(1);
  });

  test("an empty required argument and a call needing no repair pass through unchanged, with no header", async () => {
    const { client } = start();
    upstream!.enqueue(
      { kind: "text", toolCalls: [{ name: "exec_command", arguments: '{"cmd": ""}' }] },
      { kind: "text", text: '<tool_call>{"name": "exec_command", "arguments": {"cmd": ""}}</tool_call>' },
    );
    for (let i = 0; i < 2; i++) {
      const { data, response } = await client.chat.completions.create({ model: "gpt-test", messages: [], tools }).withResponse();
      const call = data.choices[0]!.message.tool_calls![0]!;
      expect(call.type === "function" && JSON.parse(call.function.arguments)).toEqual({ cmd: "" });
      expect(response.headers.get("x-agentd-repaired")).toBeNull();
    }
    expect(renderPrometheus(harness!.proxy.metricFamilies())).not.toContain("agentd_proxy_tool_call_repairs_total{");
  });
});

describe("turning it off and pinning a format", () => {
  const glm = "<tool_call>exec_command\n<arg_key>cmd</arg_key>\n<arg_value>ls</arg_value>\n</tool_call>";
  const hermes = '<tool_call>{"name": "exec_command", "arguments": {"cmd": "ls"}}</tool_call>';

  test("on by default; off per provider leaves the text as it came, repairs included", async () => {
    const { client } = start();
    upstream!.enqueue({ kind: "text", text: glm });
    const on = await client.chat.completions.create({ model: "gpt-test", messages: [], tools });
    expect(on.choices[0]!.finish_reason).toBe("tool_calls");
    await harness!.close();
    await upstream!.close();
    const off = start({ tool_call_text: "off" });
    upstream!.enqueue(
      { kind: "text", text: glm },
      { kind: "text", toolCalls: [{ name: "functions.exec_command", arguments: '{"command":"ls"}' }] },
    );
    const answer = await off.client.chat.completions.create({ model: "gpt-test", messages: [], tools });
    expect([answer.choices[0]!.message.content, answer.choices[0]!.finish_reason]).toEqual([glm, "stop"]);
    const { data, response } = await off.client.chat.completions.create({ model: "gpt-test", messages: [], tools }).withResponse();
    const call = data.choices[0]!.message.tool_calls![0]!;
    expect(call.type === "function" && call.function.name).toBe("functions.exec_command");
    expect(response.headers.get("x-agentd-repaired")).toBeNull();
  });

  test("a request without tools gets the text as written", async () => {
    const { client } = start();
    upstream!.enqueue({ kind: "text", text: hermes });
    const answer = await client.chat.completions.create({ model: "gpt-test", messages: [] });
    expect(answer.choices[0]!.message.content).toBe(hermes);
  });

  test("tool_call_format by model glob: a GLM model reads GLM only, other models every format", async () => {
    const { client } = start({ tool_call_format: { "glm-*": "glm45" } });
    upstream!.enqueue({ kind: "text", text: hermes }, { kind: "text", text: glm }, { kind: "text", text: hermes });
    const pinnedMiss = await client.chat.completions.create({ model: "glm-4.5", messages: [], tools });
    expect(pinnedMiss.choices[0]!.message.content).toBe(hermes);
    const pinnedHit = await client.chat.completions.create({ model: "glm-4.5", messages: [], tools });
    expect(pinnedHit.choices[0]!.finish_reason).toBe("tool_calls");
    const other = await client.chat.completions.create({ model: "qwen3", messages: [], tools });
    expect(other.choices[0]!.finish_reason).toBe("tool_calls");
  });
});

describe("reasoning alongside a streamed text call", () => {
  test("the reasoning reaches the client, the call comes back structured", async () => {
    const { client } = start();
    upstream!.enqueue({
      kind: "text",
      reasoning: "The user wants a listing.",
      chunks: ["<tool_call>", '{"name": "exec_command", "arguments": {"cmd": "ls"}}', "</tool_call>"],
    });
    let reasoning = "";
    let content = "";
    const names: string[] = [];
    for await (const chunk of await client.chat.completions.create({ model: "gpt-test", messages: [], tools, stream: true })) {
      const delta = chunk.choices[0]?.delta as { reasoning_content?: string; content?: string | null } | undefined;
      reasoning += delta?.reasoning_content ?? "";
      content += delta?.content ?? "";
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) names.push(call.function?.name ?? "");
    }
    expect([reasoning, content, names]).toEqual(["The user wants a listing.", "", ["exec_command"]]);
  });
});
