import Anthropic from "@anthropic-ai/sdk";
import { afterEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { openAiIdentifiers } from "../../src/proxy/translate/anthropicUserId.ts";
import { detectRejectedParam } from "../../src/proxy/upstream/quirkRules.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { startProxy, type ProxyHarness } from "./proxyHarness.ts";

/**
 * Identifiers that fit the target: Claude Code's ~150-character `metadata.user_id` against
 * upstreams that refuse a `user` over 64 characters as OpenAI does, and a refused identifier
 * the client sent itself, dropped, retried once and remembered.
 */

const SESSION = "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b";
const CLAUDE_CODE_USER_ID = JSON.stringify({
  device_id: "a3f9c2e1b7d04e8f9a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f",
  account_uuid: "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0",
  session_id: SESSION,
});
const LEGACY_USER_ID = `user_${"ab".repeat(32)}_account_0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0_session_${SESSION}`;

let upstream: ScriptedUpstream | undefined;
let harness: ProxyHarness | undefined;

afterEach(async () => {
  await harness?.close();
  await upstream?.close();
  harness = undefined;
  upstream = undefined;
});

function setup(wire: "chat" | "responses"): { up: ScriptedUpstream; h: ProxyHarness } {
  upstream = startScriptedUpstream({ wires: [wire], strict: true });
  harness = startProxy({ providers: [{ name: wire, base_url: upstream.url, wire, aliases: { "claude-*": "gpt-test" } }] });
  return { up: upstream, h: harness };
}

describe("openAiIdentifiers", () => {
  test("Claude Code's JSON id: a digest of device and account within 64 characters, the session as cache key", () => {
    expect(CLAUDE_CODE_USER_ID.length).toBeGreaterThan(140);
    const ids = openAiIdentifiers(CLAUDE_CODE_USER_ID);
    expect(ids.reshaped).toBe(true);
    expect(ids.user.length).toBeLessThanOrEqual(64);
    expect(ids.user).not.toContain(SESSION);
    expect(ids.promptCacheKey).toBe(SESSION);
    // Stable for one person, whatever the session; different for another device.
    const otherSession = JSON.stringify({ ...JSON.parse(CLAUDE_CODE_USER_ID), session_id: "other" });
    expect(openAiIdentifiers(otherSession).user).toBe(ids.user);
    const otherDevice = JSON.stringify({ ...JSON.parse(CLAUDE_CODE_USER_ID), device_id: "f".repeat(64) });
    expect(openAiIdentifiers(otherDevice).user).not.toBe(ids.user);
  });

  test("the older user_…_account_…_session_… form, and a short id kept as it is", () => {
    const legacy = openAiIdentifiers(LEGACY_USER_ID);
    expect(legacy).toMatchObject({ reshaped: true, promptCacheKey: SESSION });
    expect(legacy.user.length).toBeLessThanOrEqual(64);
    expect(openAiIdentifiers("u-1")).toEqual({ user: "u-1", promptCacheKey: undefined, reshaped: false });
  });

  test("OpenAI's length refusal names the parameter to drop; a refusal of something else names none", () => {
    const tooLong = JSON.stringify({
      error: {
        message: "Invalid 'user': string too long. Expected a string with maximum length 64, but got a string with length 150 instead.",
        type: "invalid_request_error",
        param: "user",
        code: "string_above_max_length",
      },
    });
    expect(detectRejectedParam(400, tooLong, { user: "x".repeat(150) })).toBe("user");
    expect(detectRejectedParam(400, tooLong, { model: "m" })).toBeUndefined();
    const messages = JSON.stringify({ error: { message: "Invalid 'messages[0].content': string too long.", param: "messages" } });
    expect(detectRejectedParam(400, messages, { user: "u", messages: [] })).toBeUndefined();
  });
});

for (const wire of ["chat", "responses"] as const) {
  describe(`Claude Code's metadata.user_id, ${wire} upstream that refuses a long user`, () => {
    test("the Anthropic SDK gets its answer; the upstream sees a user within 64 characters and the session as cache key", async () => {
      const { up, h } = setup(wire);
      up.enqueue({ kind: "text", text: "fits" });
      const client = new Anthropic({ apiKey: "k", baseURL: h.url, maxRetries: 0 });
      const { data, response } = await client.messages
        .create({
          model: "claude-x",
          max_tokens: 100,
          messages: [{ role: "user", content: "hi" }],
          metadata: { user_id: CLAUDE_CODE_USER_ID },
        })
        .withResponse();
      expect(data.content).toEqual([{ type: "text", text: "fits" }] as never);
      const sent = up.completionRequests();
      expect(sent).toHaveLength(1);
      expect(sent[0]!.body.user.length).toBeLessThanOrEqual(64);
      expect(sent[0]!.body.prompt_cache_key).toBe(SESSION);
      expect(response.headers.get("x-agentd-dropped")?.split(",")).toContain("metadata.user_id");
    });
  });

  describe(`a long user the client sent itself, strict ${wire} upstream`, () => {
    test("the 400 is handled by agentd: user dropped, retried once, remembered, reported in x-agentd-dropped", async () => {
      const { up, h } = setup(wire);
      const openai = new OpenAI({ apiKey: "k", baseURL: `${h.url}/v1`, maxRetries: 0 });
      const long = "u".repeat(100);
      const ask = () =>
        wire === "chat"
          ? openai.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "x" }], user: long }).withResponse()
          : openai.responses.create({ model: "gpt-test", input: "x", user: long }).withResponse();
      const first = await ask();
      expect(first.response.status).toBe(200);
      expect(first.response.headers.get("x-agentd-dropped")?.split(",")).toContain("user");
      const [refused, retried] = up.completionRequests();
      expect(refused!.body.user).toBe(long);
      expect(retried!.body.user).toBeUndefined();
      expect(h.proxy.status()[0]!.quirks).toEqual(["user"]);
      expect(h.events("proxy.quirk_learned")[0]).toMatchObject({ provider: wire, param: "user" });
      expect(h.events("upstream.error")).toHaveLength(0);
      // Remembered: the next request goes without it at once.
      const second = await ask();
      expect(second.response.headers.get("x-agentd-dropped")?.split(",")).toContain("user");
      expect(up.completionRequests()).toHaveLength(3);
      expect(up.completionRequests()[2]!.body.user).toBeUndefined();
    });

    test("a refusal about the client's own content still reaches the client as its 400", async () => {
      const { h } = setup(wire);
      const openai = new OpenAI({ apiKey: "k", baseURL: `${h.url}/v1`, maxRetries: 0 });
      const error = await (wire === "chat"
        ? openai.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "x" }], bogus: 1 } as never)
        : openai.responses.create({ model: "gpt-test", input: "x", bogus: 1 } as never)
      ).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    });
  });
}
