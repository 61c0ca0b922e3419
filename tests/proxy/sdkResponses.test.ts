import { afterEach, describe, expect, test } from "bun:test";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { startProxy, type ProxyHarness } from "./proxyHarness.ts";

let upstream: ScriptedUpstream;
let harness: ProxyHarness;

afterEach(async () => {
  await harness?.close();
  await upstream?.close();
});

function setup(provider: Record<string, unknown> = {}) {
  upstream = startScriptedUpstream();
  harness = startProxy({ providers: [{ name: "up", base_url: upstream.url, ...provider }] });
}

const tools = [
  {
    type: "function" as const,
    name: "read_file",
    description: "Reads a file",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    strict: false,
  },
];

describe("responses API over a chat upstream", () => {
  test("non-streaming: input and instructions are translated, the answer is a Response with usage", async () => {
    setup();
    upstream.enqueue({ kind: "text", text: "Paris", usage: { prompt_tokens: 11, completion_tokens: 1 } });
    const response = await harness.client.responses.create({
      model: "gpt-test",
      instructions: "Be brief.",
      input: "Capital of France?",
      max_output_tokens: 50,
      temperature: 0.2,
      reasoning: { effort: "low" },
    });
    expect(response.output_text).toBe("Paris");
    expect(response.status).toBe("completed");
    expect(response.usage).toMatchObject({ input_tokens: 11, output_tokens: 1, total_tokens: 12 });
    expect(upstream.completionRequests()[0]!.body).toEqual({
      model: "gpt-test",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Capital of France?" },
      ],
      max_completion_tokens: 50,
      temperature: 0.2,
      reasoning_effort: "low",
    });
  });

  test("streaming through responses.stream: the SDK assembles the text from the event sequence", async () => {
    setup();
    upstream.enqueue({ kind: "text", chunks: ["Bon", "jour"] });
    const stream = harness.client.responses.stream({ model: "gpt-test", input: "greet me" });
    const types: string[] = [];
    let deltas = "";
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") deltas += event.delta;
    }
    const final = await stream.finalResponse();
    expect(deltas).toBe("Bonjour");
    expect(final.output_text).toBe("Bonjour");
    expect(types[0]).toBe("response.created");
    expect(types).toContain("response.output_item.added");
    expect(types).toContain("response.output_item.done");
    expect(types.at(-1)).toBe("response.completed");
    expect(final.usage?.output_tokens).toBe(3);
    expect(upstream.completionRequests()[0]!.body.stream_options).toEqual({ include_usage: true });
  });

  test("three turns of tool calls keep call ids paired, via previous_response_id", async () => {
    setup();
    upstream.enqueue(
      { kind: "text", toolCalls: [{ id: "call_1", name: "read_file", arguments: '{"path":"/etc/hostname"}' }] },
      { kind: "text", toolCalls: [{ id: "call_2", name: "read_file", arguments: '{"path":"/etc/os-release"}' }] },
      { kind: "text", text: "host web1 runs Debian" },
    );
    const first = await harness.client.responses.create({ model: "gpt-test", input: "what host and OS?", tools, stream: false });
    const call1 = first.output.find((item) => item.type === "function_call")!;
    expect(call1).toMatchObject({ type: "function_call", call_id: "call_1", name: "read_file", arguments: '{"path":"/etc/hostname"}' });

    // Turn two streams, continuing from the stored response.
    const stream = harness.client.responses.stream({
      model: "gpt-test",
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: "call_1", output: "web1" }],
      tools,
    });
    const argDeltas: string[] = [];
    stream.on("response.function_call_arguments.delta", (event) => argDeltas.push(event.delta));
    const second = await stream.finalResponse();
    expect(argDeltas.join("")).toBe('{"path":"/etc/os-release"}');
    const call2 = second.output.find((item) => item.type === "function_call")!;
    expect(call2).toMatchObject({ call_id: "call_2", arguments: '{"path":"/etc/os-release"}' });

    const third = await harness.client.responses.create({
      model: "gpt-test",
      previous_response_id: second.id,
      input: [{ type: "function_call_output", call_id: "call_2", output: "Debian 13" }],
      tools,
    });
    expect(third.output_text).toBe("host web1 runs Debian");

    const messages = upstream.completionRequests()[2]!.body.messages;
    expect(messages).toEqual([
      { role: "user", content: "what host and OS?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path":"/etc/hostname"}' } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "web1" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_2", type: "function", function: { name: "read_file", arguments: '{"path":"/etc/os-release"}' } }],
      },
      { role: "tool", tool_call_id: "call_2", content: "Debian 13" },
    ]);
    expect(upstream.completionRequests()[0]!.body.tools).toEqual([
      { type: "function", function: { name: "read_file", description: "Reads a file", parameters: tools[0]!.parameters, strict: false } },
    ]);
  });

  test("a client that sends the whole conversation itself gets the same pairing", async () => {
    setup();
    upstream.enqueue({ kind: "text", text: "done" });
    await harness.client.responses.create({
      model: "gpt-test",
      input: [
        { role: "developer", content: "You operate servers." },
        { role: "user", content: [{ type: "input_text", text: "check" }] },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Checking two things." }] },
        { type: "function_call", call_id: "c1", name: "read_file", arguments: "{}" },
        { type: "function_call", call_id: "c2", name: "read_file", arguments: "{}" },
        { type: "function_call_output", call_id: "c1", output: "a" },
        { type: "function_call_output", call_id: "c2", output: "b" },
      ],
      tools,
      tool_choice: { type: "function", name: "read_file" },
    } as never);
    const body = upstream.completionRequests()[0]!.body;
    expect(body.messages[2]).toEqual({
      role: "assistant",
      content: "Checking two things.",
      tool_calls: [
        { id: "c1", type: "function", function: { name: "read_file", arguments: "{}" } },
        { id: "c2", type: "function", function: { name: "read_file", arguments: "{}" } },
      ],
    });
    expect(body.messages[0]).toEqual({ role: "system", content: "You operate servers." });
    expect(body.tool_choice).toEqual({ type: "function", function: { name: "read_file" } });
  });

  test("an unknown previous_response_id is a 404", async () => {
    setup();
    const error = await harness.client.responses
      .create({ model: "gpt-test", previous_response_id: "resp_nope", input: "x" })
      .catch((e) => e);
    expect(error.status).toBe(404);
    expect(error.code).toBe("previous_response_not_found");
  });

  test("store: false keeps nothing to continue from", async () => {
    setup();
    const first = await harness.client.responses.create({ model: "gpt-test", input: "x", store: false });
    const error = await harness.client.responses.create({ model: "gpt-test", previous_response_id: first.id, input: "y" }).catch((e) => e);
    expect(error.code).toBe("previous_response_not_found");
  });

  test("what a chat upstream cannot take and would change the answer's shape is a clear 400 naming it", async () => {
    setup();
    const hosted = await harness.client.responses
      .create({ model: "gpt-test", input: "x", tools: [{ type: "web_search" }], tool_choice: { type: "web_search" } } as never)
      .catch((e) => e);
    expect(hosted.status).toBe(400);
    expect(hosted.code).toBe("unsupported_parameter");
    expect(hosted.param).toBe("tool_choice");
    const background = await harness.client.responses.create({ model: "gpt-test", input: "x", background: true }).catch((e) => e);
    expect(background.status).toBe(400);
    expect(background.param).toBe("background");
    expect(upstream.completionRequests()).toHaveLength(0);
  });

  test("a stored response can be fetched by id", async () => {
    setup();
    const created = await harness.client.responses.create({ model: "gpt-test", input: "x" });
    const fetched = await harness.client.responses.retrieve(created.id);
    expect(fetched.output_text).toBe("ok");
  });
});

describe("responses API over a Responses upstream", () => {
  test("passes through, streaming and not, and previous_response_id is resolved by the proxy", async () => {
    setup({ wire: "responses" });
    upstream.enqueue({ kind: "text", text: "first" }, { kind: "text", chunks: ["sec", "ond"] });
    const first = await harness.client.responses.create({ model: "gpt-test", input: "one" });
    expect(first.output_text).toBe("first");
    expect(upstream.completionRequests()[0]!.path).toBe("/v1/responses");
    const second = await harness.client.responses
      .stream({ model: "gpt-test", input: "two", previous_response_id: first.id })
      .finalResponse();
    expect(second.output_text).toBe("second");
    const sent = upstream.completionRequests()[1]!.body;
    expect(sent.previous_response_id).toBeUndefined();
    expect(sent.input.map((item: { role?: string; type?: string }) => item.role ?? item.type)).toEqual(["user", "assistant", "user"]);
  });
});
