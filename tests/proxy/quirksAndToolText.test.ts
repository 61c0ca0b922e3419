import { afterEach, describe, expect, test } from "bun:test";
import { listQuirks, proxyMigrations } from "../../src/proxy/index.ts";
import { baseMigrations, openStore } from "../../src/core/store/index.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { startProxy, type ProxyHarness } from "./proxyHarness.ts";

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
    function: { name: "exec_command", strict: true, parameters: { type: "object", properties: { cmd: { type: "string" } } } },
  },
];

describe("provider quirks", () => {
  test("a 400 naming an unsupported parameter: dropped, retried once, remembered across restarts", async () => {
    upstream = startScriptedUpstream();
    const db = openStore({ path: ":memory:", migrations: [...baseMigrations, ...proxyMigrations] });
    harness = startProxy({ providers: [{ name: "up", base_url: upstream.url }], db });
    upstream.enqueue(
      {
        kind: "http_error",
        status: 400,
        body: JSON.stringify({ error: { message: "Unrecognized request argument supplied: parallel_tool_calls" } }),
      },
      { kind: "text", text: "ok" },
    );
    const answer = await harness.client.chat.completions.create({
      model: "gpt-test",
      messages: [{ role: "user", content: "x" }],
      tools,
      parallel_tool_calls: false,
    });
    expect(answer.choices[0]!.message.content).toBe("ok");
    const [rejected, retried] = upstream.completionRequests();
    expect(rejected!.body.parallel_tool_calls).toBe(false);
    expect(retried!.body.parallel_tool_calls).toBeUndefined();
    expect(retried!.body.tools[0].function.strict).toBe(true);
    expect(harness.proxy.status()[0]!.quirks).toEqual(["parallel_tool_calls"]);
    expect(listQuirks(db).map((q) => [q.provider, q.param])).toEqual([["up", "parallel_tool_calls"]]);
    expect(harness.events("upstream.error")).toHaveLength(0);

    // A new proxy on the same store starts knowing the quirk.
    await harness.close();
    harness = startProxy({ providers: [{ name: "up", base_url: upstream.url }], db });
    await harness.client.chat.completions.create({ model: "gpt-test", messages: [], tools, parallel_tool_calls: true });
    expect(upstream.completionRequests()[2]!.body.parallel_tool_calls).toBeUndefined();
    await harness.close();
    harness = undefined;
    db.close();
  });

  test("strict in tool schemas is dropped when rejected; a 400 about something else is not a quirk", async () => {
    upstream = startScriptedUpstream();
    harness = startProxy({ providers: [{ name: "up", base_url: upstream.url }] });
    upstream.enqueue(
      {
        kind: "http_error",
        status: 400,
        body: JSON.stringify({ error: { message: "tools.0.function.strict: Extra inputs are not permitted" } }),
      },
      { kind: "text", text: "ok" },
    );
    await harness.client.chat.completions.create({ model: "gpt-test", messages: [], tools });
    expect(upstream.completionRequests()[1]!.body.tools[0].function.strict).toBeUndefined();
    upstream.enqueue({ kind: "http_error", status: 400, body: JSON.stringify({ error: { message: "context length exceeded" } }) });
    const error = await harness.client.chat.completions.create({ model: "gpt-test", messages: [], tools }).catch((e) => e);
    expect(error.status).toBe(400);
    expect(upstream.completionRequests()).toHaveLength(3);
  });
});

describe("tool calls written as text (tool_call_text: parse)", () => {
  test("non-streamed <tool_call> text becomes a structured call; prose stays prose", async () => {
    upstream = startScriptedUpstream();
    harness = startProxy({ providers: [{ name: "up", base_url: upstream.url, tool_call_text: "parse" }] });
    upstream.enqueue(
      { kind: "text", text: 'Checking.\n<tool_call>{"name": "exec_command", "arguments": {"cmd": "df -h"}}</tool_call>' },
      { kind: "text", text: "I would run df -h to check the disk." },
    );
    const first = await harness.client.chat.completions.create({ model: "gpt-test", messages: [], tools });
    const call = first.choices[0]!.message.tool_calls![0]!;
    expect(call.type === "function" && [call.function.name, call.function.arguments]).toEqual(["exec_command", '{"cmd":"df -h"}']);
    expect(first.choices[0]!.message.content).toBe("Checking.\n");
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    const second = await harness.client.chat.completions.create({ model: "gpt-test", messages: [], tools });
    expect(second.choices[0]!.message.tool_calls).toBeUndefined();
    expect(second.choices[0]!.message.content).toBe("I would run df -h to check the disk.");
  });

  test("a fenced call split across streamed chunks becomes a function_call item in a Responses stream", async () => {
    upstream = startScriptedUpstream();
    harness = startProxy({ providers: [{ name: "up", base_url: upstream.url, tool_call_text: "parse" }] });
    upstream.enqueue({
      kind: "text",
      chunks: ["Sure. ``", '`json\n{"name": "exec_', 'command", "arguments": {"cmd": "uptime"}}\n`', "``"],
    });
    const final = await harness.client.responses
      .stream({ model: "gpt-test", input: "load?", tools: [{ type: "function", name: "exec_command", parameters: null, strict: false }] })
      .finalResponse();
    expect(final.output_text).toBe("Sure. ");
    expect(final.output.find((item) => item.type === "function_call")).toMatchObject({
      name: "exec_command",
      arguments: '{"cmd":"uptime"}',
    });
  });

  test("tool_call_text: off: the text is passed through untouched", async () => {
    upstream = startScriptedUpstream();
    harness = startProxy({ providers: [{ name: "up", base_url: upstream.url, tool_call_text: "off" }] });
    const text = '<tool_call>{"name": "exec_command", "arguments": {}}</tool_call>';
    upstream.enqueue({ kind: "text", text });
    const answer = await harness.client.chat.completions.create({ model: "gpt-test", messages: [], tools });
    expect(answer.choices[0]!.message.content).toBe(text);
  });
});
