import { afterEach, describe, expect, test } from "bun:test";
import type OpenAI from "openai";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { startProxy, type ProxyHarness } from "./proxyHarness.ts";

let upstream: ScriptedUpstream;
let harness: ProxyHarness;

afterEach(async () => {
  await harness?.close();
  await upstream?.close();
});

function setup() {
  upstream = startScriptedUpstream();
  harness = startProxy({ providers: [{ name: "up", base_url: upstream.url }] });
}

function reasoningOf(response: OpenAI.Responses.Response): string[] {
  return response.output
    .filter((item) => item.type === "reasoning")
    .map((item) => (item as OpenAI.Responses.ResponseReasoningItem).content?.map((part) => part.text).join("") ?? "");
}

describe("reasoning from a chat upstream, seen by a Responses client", () => {
  test("non-streaming: reasoning_content (or reasoning) is a reasoning item before the message", async () => {
    setup();
    upstream.enqueue(
      { kind: "text", text: "42", reasoning: "six times seven" },
      { kind: "text", text: "42", reasoning: "by OpenRouter", reasoningField: "reasoning" },
    );
    const first = await harness.client.responses.create({ model: "gpt-test", input: "?" });
    expect(first.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    expect(reasoningOf(first)).toEqual(["six times seven"]);
    expect(first.output_text).toBe("42");
    const second = await harness.client.responses.create({ model: "gpt-test", input: "?" });
    expect(reasoningOf(second)).toEqual(["by OpenRouter"]);
  });

  test("streaming: reasoning_text deltas the SDK assembles, and the next turn drops the reasoning for the chat upstream", async () => {
    setup();
    upstream.enqueue({ kind: "text", chunks: ["4", "2"], reasoning: "six times seven" }, { kind: "text", text: "yes" });
    const stream = harness.client.responses.stream({ model: "gpt-test", input: "?" });
    let deltas = "";
    stream.on("response.reasoning_text.delta", (event) => (deltas += event.delta));
    const final = await stream.finalResponse();
    expect(deltas).toBe("six times seven");
    expect(reasoningOf(final)).toEqual(["six times seven"]);
    expect(final.output_text).toBe("42");
    const next = await harness.client.responses.create({ model: "gpt-test", input: "sure?", previous_response_id: final.id });
    expect(next.output_text).toBe("yes");
    expect(upstream.completionRequests()[1]!.body.messages).toEqual([
      { role: "user", content: "?" },
      { role: "assistant", content: "42" },
      { role: "user", content: "sure?" },
    ]);
  });
});
