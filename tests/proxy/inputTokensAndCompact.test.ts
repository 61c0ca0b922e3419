import { afterEach, describe, expect, test } from "bun:test";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { startProxy, type ProxyHarness } from "./proxyHarness.ts";

/** POST /v1/responses/input_tokens and /v1/responses/compact on chat-only and Responses upstreams. */

let upstream: ScriptedUpstream | undefined;
let harness: ProxyHarness | undefined;

afterEach(async () => {
  await harness?.close();
  await upstream?.close();
  harness = undefined;
  upstream = undefined;
});

function setup(wire: "chat" | "responses") {
  upstream = startScriptedUpstream({ wires: [wire] });
  harness = startProxy({ providers: [{ name: wire, base_url: upstream.url, wire }] });
  return { up: upstream, h: harness };
}

async function post(h: ProxyHarness, path: string, body: unknown) {
  const response = await fetch(`${h.url}/v1${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { response, json: (await response.json()) as any };
}

describe("POST /v1/responses/input_tokens", () => {
  test("on a chat upstream agentd counts with o200k_base, the conversation of previous_response_id included", async () => {
    const { up, h } = setup("chat");
    const text = "Count these words with the real tokenizer, please.";
    const { json } = await post(h, "/responses/input_tokens", { model: "gpt-test", instructions: "Be brief.", input: text });
    // system + user message: 3 framing tokens each, the role, the text; 3 to prime the answer.
    const expected = 3 + (3 + countTokens("system") + countTokens("Be brief.")) + (3 + countTokens("user") + countTokens(text));
    expect(json).toEqual({ object: "response.input_tokens", input_tokens: expected });
    expect(up.completionRequests()).toHaveLength(0);

    const first = await h.client.responses.create({ model: "gpt-test", input: text });
    const more = await post(h, "/responses/input_tokens", { model: "gpt-test", input: "and more", previous_response_id: first.id });
    expect(more.json.input_tokens).toBeGreaterThan(expected);
    const tools = await post(h, "/responses/input_tokens", {
      model: "gpt-test",
      input: text,
      tools: [{ type: "function", name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } }],
    });
    expect(tools.json.input_tokens).toBeGreaterThan(3 + 3 + countTokens("user") + countTokens(text) + 10);
  });

  test("on a Responses upstream the request passes through, with agentd's stored conversation inline", async () => {
    const { up, h } = setup("responses");
    const first = await h.client.responses.create({ model: "gpt-test", input: "one" });
    up.enqueue({ kind: "text", usage: { prompt_tokens: 1234, completion_tokens: 0 } });
    const { response, json } = await post(h, "/responses/input_tokens", {
      model: "gpt-test",
      input: "two",
      previous_response_id: first.id,
    });
    expect(json).toEqual({ object: "response.input_tokens", input_tokens: 1234 });
    expect(response.headers.get("x-agentd-provider")).toBe("responses");
    const sent = up.completionRequests().at(-1)!;
    expect(sent.path).toBe("/v1/responses/input_tokens");
    expect(sent.body.previous_response_id).toBeUndefined();
    expect(sent.body.input).toHaveLength(3);
  });
});

describe("POST /v1/responses/compact", () => {
  test("passes through to a Responses upstream", async () => {
    const { up, h } = setup("responses");
    const { response, json } = await post(h, "/responses/compact", { model: "gpt-test", input: [{ role: "user", content: "long story" }] });
    expect(response.status).toBe(200);
    expect(json.output[0]).toMatchObject({ type: "compaction", encrypted_content: "opaque-1" });
    expect(up.completionRequests()[0]!.path).toBe("/v1/responses/compact");
  });

  test("on a chat-only upstream it is refused, naming the way out", async () => {
    const { up, h } = setup("chat");
    const { response, json } = await post(h, "/responses/compact", { model: "gpt-test", input: "long story" });
    expect(response.status).toBe(400);
    expect(json.error).toMatchObject({ type: "invalid_request_error", code: "invalid_request" });
    expect(json.error.message).toContain("model_providers");
    expect(up.completionRequests()).toHaveLength(0);
  });
});
