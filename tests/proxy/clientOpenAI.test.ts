import { afterEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { zodResponseFormat, zodTextFormat } from "openai/helpers/zod";
import { z } from "zod";
import { type ClientPath, startPath, WIRES } from "./clientPaths.ts";

/** The official openai SDK through agentd, on a chat-only and on a Responses-only upstream. */

let path: ClientPath | undefined;

afterEach(async () => {
  await path?.close();
  path = undefined;
});

const Weather = z.object({ city: z.string(), celsius: z.number() });
const weatherTool = {
  type: "function" as const,
  name: "weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
  strict: true,
};

for (const wire of WIRES) {
  describe(`openai SDK, ${wire} upstream`, () => {
    function client() {
      path = startPath(wire);
      return { p: path, openai: new OpenAI({ apiKey: "client-key", baseURL: path.baseURL, maxRetries: 0 }) };
    }

    test("chat: create, stream, parse, and a tool round trip", async () => {
      const { p, openai } = client();
      p.up.enqueue(
        { kind: "text", text: "plain" },
        { kind: "text", chunks: ["str", "eamed"] },
        { kind: "text", text: '{"city":"Oslo","celsius":4}' },
        { kind: "text", toolCalls: [{ name: "weather", arguments: '{"city":"Oslo"}' }] },
        { kind: "text", text: "4 degrees" },
      );
      const ask = { model: "gpt-test", messages: [{ role: "user" as const, content: "hi" }] };
      expect((await openai.chat.completions.create(ask)).choices[0]!.message.content).toBe("plain");
      let streamed = "";
      for await (const chunk of await openai.chat.completions.create({ ...ask, stream: true }))
        streamed += chunk.choices[0]?.delta.content ?? "";
      expect(streamed).toBe("streamed");
      const parsed = await openai.chat.completions.parse({ ...ask, response_format: zodResponseFormat(Weather, "weather") });
      expect(parsed.choices[0]!.message.parsed).toEqual({ city: "Oslo", celsius: 4 });

      const { type: _type, ...definition } = weatherTool;
      const tools = [{ type: "function" as const, function: definition }];
      const first = await openai.chat.completions.create({ ...ask, tools });
      const call = first.choices[0]!.message.tool_calls![0]! as { id: string; function: { name: string; arguments: string } };
      expect(call.function).toEqual({ name: "weather", arguments: '{"city":"Oslo"}' });
      const second = await openai.chat.completions.create({
        ...ask,
        tools,
        messages: [...ask.messages, first.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "4" }],
      });
      expect(second.choices[0]!.message.content).toBe("4 degrees");
    });

    test("responses: create, stream, parse, tools with previous_response_id", async () => {
      const { p, openai } = client();
      p.up.enqueue(
        { kind: "text", text: "plain" },
        { kind: "text", chunks: ["str", "eamed"] },
        { kind: "text", text: '{"city":"Rome","celsius":21}' },
        { kind: "text", toolCalls: [{ name: "weather", arguments: '{"city":"Rome"}' }] },
        { kind: "text", text: "21 degrees" },
      );
      expect((await openai.responses.create({ model: "gpt-test", input: "hi" })).output_text).toBe("plain");
      const final = await openai.responses.stream({ model: "gpt-test", input: "hi" }).finalResponse();
      expect(final.output_text).toBe("streamed");
      const parsed = await openai.responses.parse({ model: "gpt-test", input: "hi", text: { format: zodTextFormat(Weather, "weather") } });
      expect(parsed.output_parsed).toEqual({ city: "Rome", celsius: 21 });

      const first = await openai.responses.create({ model: "gpt-test", input: "weather in Rome?", tools: [weatherTool] });
      const call = first.output.find((item) => item.type === "function_call")!;
      expect(call).toMatchObject({ name: "weather", arguments: '{"city":"Rome"}' });
      const second = await openai.responses.create({
        model: "gpt-test",
        previous_response_id: first.id,
        tools: [weatherTool],
        input: [{ type: "function_call_output", call_id: (call as { call_id: string }).call_id, output: "21" }],
      });
      expect(second.output_text).toBe("21 degrees");
      const sent = p.up.completionRequests().at(-1)!.body;
      // The upstream saw the whole conversation: agentd resolved previous_response_id on both paths.
      expect(JSON.stringify(sent)).toContain("weather in Rome?");
    });

    test("models.retrieve and embeddings", async () => {
      const { openai } = client();
      expect(await openai.models.retrieve("gpt-test")).toMatchObject({ id: "gpt-test", object: "model" });
      const embedded = await openai.embeddings.create({ model: "gpt-test", input: ["a", "b"] });
      expect(embedded.data.map((d) => d.index)).toEqual([0, 1]);
    });
  });
}
