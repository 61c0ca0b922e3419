import { describe, expect, test } from "bun:test";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { ChatOpenAI } from "@langchain/openai";
import { APICallError, generateText, type LanguageModel, RetryError, streamText } from "ai";
import OpenAI from "openai";
import type { Reply } from "../support/scriptedUpstream.ts";
import { type ClientPath, startPath, WIRES } from "./clientPaths.ts";

/**
 * Each real client against each upstream fault, on both paths: it raises its own rate-limit or
 * server-error type (never a parse error), and its retries are bounded: every client is given
 * maxRetries 1, agentd max_attempts 2, so the upstream sees at most 2 × 2 attempts. Each case
 * has its own upstream and proxy, so the cases run side by side.
 */

type Fault = "429" | "500" | "cut";
const FAULTS: Record<Fault, Reply> = {
  "429": { kind: "http_error", status: 429 },
  "500": { kind: "http_error", status: 500 },
  cut: { kind: "reset_mid_stream", afterEvents: 3, reply: { kind: "text", chunks: ["one", "two", "three"], chunkDelayMs: 20 } },
};
const MAX_UPSTREAM_ATTEMPTS = 4;

/** Runs one call (streamed for a cut, since a cut is something only a stream can meet) and returns what it threw. */
type Client = (baseURL: string, stream: boolean) => Promise<unknown>;

const ask = { model: "gpt-test", messages: [{ role: "user" as const, content: "x" }] };

function aiSdk(model: (baseURL: string) => LanguageModel): Client {
  return async (baseURL, stream) => {
    if (!stream) return generateText({ model: model(baseURL), prompt: "x", maxRetries: 1 });
    const result = streamText({ model: model(baseURL), prompt: "x", maxRetries: 1, onError: () => {} });
    for await (const part of result.fullStream) if (part.type === "error") throw part.error;
  };
}

function langChain(useResponsesApi: boolean): Client {
  return async (baseURL, stream) => {
    const llm = new ChatOpenAI({ model: "gpt-test", apiKey: "k", configuration: { baseURL }, maxRetries: 1, useResponsesApi });
    if (!stream) return llm.invoke("x");
    for await (const _chunk of await llm.stream("x"));
  };
}

const CLIENTS: Record<string, Client> = {
  "openai chat": async (baseURL, stream) => {
    const openai = new OpenAI({ apiKey: "k", baseURL, maxRetries: 1 });
    if (!stream) return openai.chat.completions.create(ask);
    for await (const _chunk of await openai.chat.completions.create({ ...ask, stream: true }));
  },
  "openai responses": async (baseURL, stream) => {
    const openai = new OpenAI({ apiKey: "k", baseURL, maxRetries: 1 });
    if (!stream) return openai.responses.create({ model: "gpt-test", input: "x" });
    for await (const _event of await openai.responses.create({ model: "gpt-test", input: "x", stream: true }));
  },
  "AI SDK responses": aiSdk((baseURL) => createOpenAI({ baseURL, apiKey: "k" })("gpt-test")),
  "AI SDK chat": aiSdk((baseURL) => createOpenAI({ baseURL, apiKey: "k" }).chat("gpt-test")),
  "AI SDK openai-compatible": aiSdk((baseURL) => createOpenAICompatible({ name: "agentd", baseURL, apiKey: "k" })("gpt-test")),
  "LangChain chat": langChain(false),
  "LangChain useResponsesApi": langChain(true),
};

/**
 * The status the client's own error type carries: the AI SDK's APICallError (inside its RetryError),
 * or the openai SDK's APIError, which LangChain rethrows from its own copy of the openai package.
 */
function statusOf(error: unknown): number | undefined {
  const last = RetryError.isInstance(error) ? error.lastError : error;
  if (APICallError.isInstance(last)) return last.statusCode;
  return (last as { status?: number }).status;
}

function expectClientType(client: string, fault: Fault, error: unknown): void {
  expect(error).toBeInstanceOf(Error);
  expect(error).not.toBeInstanceOf(SyntaxError);
  const message = (error as Error).message;
  if (fault === "cut") {
    expect(message).toContain("The upstream stream failed after it began");
    return;
  }
  const status = fault === "429" ? 429 : 502;
  expect(statusOf(error)).toBe(status);
  const openaiType = fault === "429" ? OpenAI.RateLimitError : OpenAI.InternalServerError;
  if (client.startsWith("openai")) expect(error).toBeInstanceOf(openaiType);
  if (client.startsWith("LangChain")) expect((error as Error).constructor.name).toBe(openaiType.name);
}

for (const wire of WIRES) {
  describe.concurrent(`client faults, ${wire} upstream`, () => {
    for (const [client, run] of Object.entries(CLIENTS)) {
      for (const fault of ["429", "500", "cut"] as const) {
        test(`${client}: upstream ${fault}`, async () => {
          const path: ClientPath = startPath(wire);
          try {
            path.up.setDefault(FAULTS[fault]);
            const error = await run(path.baseURL, fault === "cut").then(
              () => undefined,
              (e: unknown) => e,
            );
            expectClientType(client, fault, error);
            const attempts = path.up.completionRequests().length;
            expect(attempts).toBeGreaterThanOrEqual(1);
            expect(attempts).toBeLessThanOrEqual(fault === "cut" ? 2 : MAX_UPSTREAM_ATTEMPTS);
          } finally {
            await path.close();
          }
        });
      }
    }
  });
}
