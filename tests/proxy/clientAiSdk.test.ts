import { afterEach, describe, expect, test } from "bun:test";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, isStepCount, type LanguageModel, streamText, tool } from "ai";
import { z } from "zod";
import { type ClientPath, startPath, WIRES } from "./clientPaths.ts";

/**
 * The Vercel AI SDK through agentd: multi-step tool loops with `store` at its default, through the
 * default OpenAI provider (Responses), its `.chat` provider and the openai-compatible provider.
 */

let path: ClientPath | undefined;

afterEach(async () => {
  await path?.close();
  path = undefined;
});

const tools = {
  weather: tool({
    description: "The weather in a city",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => `sunny in ${city}`,
  }),
};

/** Two parallel calls after reasoning, one more call after reasoning again, then the answer. */
function scriptLoop(p: ClientPath) {
  p.up.enqueue(
    {
      kind: "text",
      reasoning: "Two cities: ask for both.",
      toolCalls: [
        { name: "weather", arguments: '{"city":"Paris"}' },
        { name: "weather", arguments: '{"city":"Rome"}' },
      ],
    },
    { kind: "text", reasoning: "One more.", toolCalls: [{ name: "weather", arguments: '{"city":"Oslo"}' }] },
    { kind: "text", chunks: ["All ", "sunny."] },
  );
}

/** What the client sent to agentd, to show which shapes it used (item references, stored ids). */
function recordingFetch(sent: unknown[]): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    if (typeof init?.body === "string") sent.push(JSON.parse(init.body));
    return fetch(input, init);
  }) as typeof fetch;
}

type Provider = "responses" | "chat" | "compatible";

function model(p: ClientPath, provider: Provider, sent: unknown[]): LanguageModel {
  const options = { baseURL: p.baseURL, apiKey: "client-key", fetch: recordingFetch(sent) };
  if (provider === "compatible") return createOpenAICompatible({ name: "agentd", ...options })("gpt-test");
  const openai = createOpenAI(options);
  return provider === "chat" ? openai.chat("gpt-test") : openai("gpt-test");
}

function upstreamSawAllResults(p: ClientPath): void {
  const last = JSON.stringify(p.up.completionRequests().at(-1)!.body);
  for (const city of ["Paris", "Rome", "Oslo"]) expect(last).toContain(`sunny in ${city}`);
}

for (const wire of WIRES) {
  describe(`AI SDK, ${wire} upstream`, () => {
    for (const provider of ["responses", "chat", "compatible"] as const) {
      test(`${provider} provider: generateText runs the tool loop to the answer`, async () => {
        path = startPath(wire);
        scriptLoop(path);
        const sent: unknown[] = [];
        const result = await generateText({
          model: model(path, provider, sent),
          tools,
          stopWhen: isStepCount(5),
          prompt: "Weather in Paris, Rome and Oslo?",
          maxRetries: 0,
        });
        expect(result.text).toBe("All sunny.");
        expect(result.steps).toHaveLength(3);
        expect(result.steps[0]!.toolCalls.map((call) => call.input)).toEqual([{ city: "Paris" }, { city: "Rome" }]);
        upstreamSawAllResults(path);
        if (provider === "responses") {
          // store is on by default: the SDK refers to agentd's stored reasoning instead of resending it.
          expect(JSON.stringify(sent.at(-1))).toContain('"type":"item_reference"');
        }
      });

      test(`${provider} provider: streamText runs the tool loop to the answer`, async () => {
        path = startPath(wire);
        scriptLoop(path);
        const sent: unknown[] = [];
        const result = streamText({
          model: model(path, provider, sent),
          tools,
          stopWhen: isStepCount(5),
          prompt: "Weather in Paris, Rome and Oslo?",
          maxRetries: 0,
        });
        let text = "";
        for await (const delta of result.textStream) text += delta;
        expect(text).toBe("All sunny.");
        expect(await result.steps).toHaveLength(3);
        upstreamSawAllResults(path);
        if (provider === "responses") expect(JSON.stringify(sent.at(-1))).toContain('"type":"item_reference"');
      });
    }
  });
}
