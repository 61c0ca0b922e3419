import Anthropic from "@anthropic-ai/sdk";
import { afterEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { chatToResponsesRequest } from "../../src/proxy/translate/chatToResponsesRequest.ts";
import { missingResource } from "../../src/proxy/upstream/missingResource.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { startProxy, type ProxyHarness } from "./proxyHarness.ts";

/**
 * Thinking on a Responses upstream that, as OpenAI's, shows reasoning only as a summary asked
 * for; and an upstream 404 for an item id that stays "not found", not "no such model".
 */

let up: ScriptedUpstream | undefined;
let h: ProxyHarness | undefined;

afterEach(async () => {
  await h?.close();
  await up?.close();
  h = undefined;
  up = undefined;
});

function start(): { up: ScriptedUpstream; h: ProxyHarness } {
  up = startScriptedUpstream({ wires: ["responses"], strict: true });
  h = startProxy({ providers: [{ name: "oai", base_url: up.url, wire: "responses" }] });
  return { up, h };
}

const THINK = {
  model: "gpt-test",
  max_tokens: 20_000,
  thinking: { type: "enabled" as const, budget_tokens: 10_000 },
  messages: [{ role: "user" as const, content: "why?" }],
};

describe("thinking from a Responses upstream", () => {
  test("the summary is asked for only with an effort, and only when the caller wants it", () => {
    const chat = { model: "m", messages: [{ role: "user", content: "x" }], reasoning_effort: "medium" };
    expect(chatToResponsesRequest(chat, [], { reasoningSummary: true }).reasoning).toEqual({ effort: "medium", summary: "auto" });
    expect(chatToResponsesRequest(chat).reasoning).toEqual({ effort: "medium" });
    expect(chatToResponsesRequest({ model: "m", messages: [] }, [], { reasoningSummary: true }).reasoning).toBeUndefined();
  });

  test("the Anthropic SDK gets the summary as a thinking block", async () => {
    const { up, h } = start();
    up.enqueue({ kind: "text", text: "because", reasoning: "weighing the reasons" });
    const client = new Anthropic({ apiKey: "k", baseURL: h.url, maxRetries: 0 });
    const message = await client.messages.create(THINK);
    expect(up.completionRequests()[0]!.body.reasoning).toEqual({ effort: "medium", summary: "auto" });
    expect(message.content[0]).toMatchObject({ type: "thinking", thinking: "weighing the reasons" });
    expect(message.content[1]).toMatchObject({ type: "text", text: "because" });
  });

  test("streamed: thinking deltas before the text", async () => {
    const { up, h } = start();
    up.enqueue({ kind: "text", text: "because", reasoning: "weighing the reasons" });
    const client = new Anthropic({ apiKey: "k", baseURL: h.url, maxRetries: 0 });
    const message = await client.messages.stream(THINK).finalMessage();
    expect(message.content.map((block) => block.type)).toEqual(["thinking", "text"]);
    expect(message.content[0]).toMatchObject({ thinking: "weighing the reasons" });
  });

  test("without thinking asked for, no reasoning is requested", async () => {
    const { up, h } = start();
    const client = new Anthropic({ apiKey: "k", baseURL: h.url, maxRetries: 0 });
    await client.messages.create({ model: "gpt-test", max_tokens: 50, messages: [{ role: "user", content: "x" }] });
    expect(up.completionRequests()[0]!.body.reasoning).toBeUndefined();
  });
});

describe("an upstream 404 for an id", () => {
  test("what names an item, response or file, and what does not", () => {
    expect(missingResource(JSON.stringify({ error: { message: "Item with id 'rs_abc123' not found.", param: "input" } }))).toEqual({
      kind: "item",
      id: "rs_abc123",
      message: "Item with id 'rs_abc123' not found.",
    });
    expect(missingResource(JSON.stringify({ error: { message: "Previous response with id 'resp_9' not found." } }))?.kind).toBe(
      "previous response",
    );
    expect(missingResource(JSON.stringify({ error: { message: "No such File object: file-xyz" } }))).toMatchObject({
      kind: "file",
      id: "file-xyz",
    });
    const model = JSON.stringify({ error: { message: "The model `gpt-9` does not exist", code: "model_not_found" } });
    expect(missingResource(model)).toBeUndefined();
    expect(missingResource('{"error":{"message":"no route POST /v1/responses"}}')).toBeUndefined();
    expect(missingResource(undefined)).toBeUndefined();
  });

  test("reaches the openai SDK as NotFoundError not_found naming the id; Anthropic's as not_found_error", async () => {
    const { up, h } = start();
    const notFound = {
      kind: "http_error" as const,
      status: 404,
      body: JSON.stringify({
        error: { message: "Item with id 'rs_0d1e2f' not found.", type: "invalid_request_error", param: "input", code: null },
      }),
    };
    up.enqueue(notFound, notFound);
    const openai = new OpenAI({ apiKey: "k", baseURL: `${h.url}/v1`, maxRetries: 0 });
    const error = (await openai.responses
      .create({ model: "gpt-test", input: [{ type: "item_reference", id: "rs_0d1e2f" }] as never })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.NotFoundError>;
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error.code).toBe("not_found");
    expect(error.message).toContain("rs_0d1e2f");
    expect(error.message).not.toContain("model");
    const anthropic = new Anthropic({ apiKey: "k", baseURL: h.url, maxRetries: 0 });
    const missing = (await anthropic.messages
      .create({ model: "gpt-test", max_tokens: 5, messages: [{ role: "user", content: "x" }] })
      .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.NotFoundError>;
    expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
    expect(missing.error).toMatchObject({ error: { type: "not_found_error" } });
    expect(missing.message).toContain("rs_0d1e2f");
  });

  test("a 404 that names no id is still a missing model", async () => {
    const { up, h } = start();
    up.enqueue({ kind: "http_error", status: 404, message: "The model `gpt-test` does not exist" });
    const openai = new OpenAI({ apiKey: "k", baseURL: `${h.url}/v1`, maxRetries: 0 });
    const error = (await openai.responses.create({ model: "gpt-test", input: "x" }).catch((e: unknown) => e)) as { code: string };
    expect(error.code).toBe("model_not_found");
  });
});
