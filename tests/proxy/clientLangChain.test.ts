import { afterEach, describe, expect, test } from "bun:test";
import { ChatOpenAI } from "@langchain/openai";
import { type ClientPath, startPath, WIRES } from "./clientPaths.ts";

/** LangChain JS's ChatOpenAI through agentd, over Chat Completions and with useResponsesApi, with `stop`. */

let path: ClientPath | undefined;

afterEach(async () => {
  await path?.close();
  path = undefined;
});

for (const wire of WIRES) {
  describe(`LangChain ChatOpenAI, ${wire} upstream`, () => {
    for (const useResponsesApi of [false, true]) {
      const api = useResponsesApi ? "useResponsesApi" : "chat";
      test(`${api}: invoke, stream, tools, and stop`, async () => {
        path = startPath(wire);
        const llm = new ChatOpenAI({
          model: "gpt-test",
          apiKey: "client-key",
          configuration: { baseURL: path.baseURL },
          useResponsesApi,
          maxRetries: 0,
        });
        path.up.enqueue(
          { kind: "text", text: "hello" },
          { kind: "text", chunks: ["str", "eamed"] },
          { kind: "text", toolCalls: [{ name: "weather", arguments: '{"city":"Oslo"}' }] },
          { kind: "text", chunks: ["one two ", "STOP three"] },
        );
        expect((await llm.invoke("hi")).text).toBe("hello");
        let streamed = "";
        for await (const chunk of await llm.stream("hi")) streamed += chunk.text;
        expect(streamed).toBe("streamed");
        const withTools = llm.bindTools([
          {
            type: "function",
            function: { name: "weather", description: "w", parameters: { type: "object", properties: { city: { type: "string" } } } },
          },
        ]);
        const called = await withTools.invoke("weather in Oslo?");
        expect(called.tool_calls?.map((call) => [call.name, call.args])).toEqual([["weather", { city: "Oslo" }]]);

        const stopped = await llm.invoke("count", { stop: ["STOP"] });
        const sent = path.up.completionRequests().at(-1)!.body;
        if (wire === "chat" && !useResponsesApi) {
          // Chat to chat: `stop` reaches the upstream, which honours it (the scripted one does not, so the text is whole).
          expect(sent.stop).toEqual(["STOP"]);
        } else if (wire === "responses" && !useResponsesApi) {
          // The Responses API has no stop: agentd cuts the answer at it instead of refusing the request.
          expect(stopped.text).toBe("one two ");
          expect(sent.stop).toBeUndefined();
        } else {
          // With useResponsesApi LangChain itself leaves `stop` out (the Responses API has none); the call still succeeds.
          expect(sent.stop).toBeUndefined();
          expect(stopped.text).toBe("one two STOP three");
        }
      });
    }
  });
}
