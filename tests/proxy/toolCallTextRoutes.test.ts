/**
 * Tool calls written as text, through the proxy: a loopback chat upstream answers with each
 * case's raw text, streamed in 3-character pieces (so markers are split) and not, and the real
 * openai and Anthropic SDKs on /v1/chat/completions, /v1/responses and /v1/messages must get
 * structured calls (or, for a negative control, the text exactly as written).
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { startProxy, type ProxyHarness } from "./proxyHarness.ts";
import { CASE_TOOLS, CASES, type TextCallCase } from "./toolCallTextCases.ts";

let upstream: ScriptedUpstream;
let harness: ProxyHarness;
let anthropic: Anthropic;

beforeAll(() => {
  upstream = startScriptedUpstream({ wires: ["chat"] });
  harness = startProxy({ providers: [{ name: "up", base_url: upstream.url }] });
  anthropic = new Anthropic({ apiKey: "client-key", baseURL: harness.url, maxRetries: 0 });
});

afterAll(async () => {
  await harness.close();
  await upstream.close();
});

type Outcome = { text: string; calls: { name: string; arguments: unknown }[]; finish: string | null | undefined };

function enqueue(c: TextCallCase): void {
  const chunks: string[] = [];
  for (let at = 0; at < c.text.length; at += 3) chunks.push(c.text.slice(at, at + 3));
  upstream.enqueue({ kind: "text", text: c.text, chunks });
}

const responsesTools = CASE_TOOLS.map((t) => ({
  type: "function" as const,
  name: t.function.name,
  parameters: t.function.parameters,
  strict: false,
}));
const anthropicTools = CASE_TOOLS.map((t) => ({
  name: t.function.name,
  input_schema: t.function.parameters as Anthropic.Tool.InputSchema,
}));

async function chat(stream: boolean): Promise<Outcome> {
  const request = { model: "gpt-test", messages: [{ role: "user" as const, content: "go" }], tools: CASE_TOOLS };
  if (!stream) {
    const answer = await harness.client.chat.completions.create(request);
    const choice = answer.choices[0]!;
    return {
      text: choice.message.content ?? "",
      calls: (choice.message.tool_calls ?? []).flatMap((call) => (call.type === "function" ? [named(call.function)] : [])),
      finish: choice.finish_reason,
    };
  }
  const out: Outcome = { text: "", calls: [], finish: undefined };
  const parts: { name: string; arguments: string }[] = [];
  for await (const chunk of await harness.client.chat.completions.create({ ...request, stream: true })) {
    const choice = chunk.choices[0];
    if (!choice) continue;
    out.text += choice.delta.content ?? "";
    for (const call of choice.delta.tool_calls ?? []) {
      parts[call.index] ??= { name: "", arguments: "" };
      parts[call.index]!.name += call.function?.name ?? "";
      parts[call.index]!.arguments += call.function?.arguments ?? "";
    }
    if (choice.finish_reason) out.finish = choice.finish_reason;
  }
  out.calls = parts.map(named);
  return out;
}

async function responses(stream: boolean): Promise<Outcome> {
  const request = { model: "gpt-test", input: "go", tools: responsesTools };
  const response = stream ? await harness.client.responses.stream(request).finalResponse() : await harness.client.responses.create(request);
  const calls = response.output.flatMap((item) => (item.type === "function_call" ? [named(item)] : []));
  return { text: response.output_text, calls, finish: calls.length > 0 ? "function_call" : response.status };
}

async function messages(stream: boolean): Promise<Outcome> {
  const request = { model: "gpt-test", max_tokens: 100, messages: [{ role: "user" as const, content: "go" }], tools: anthropicTools };
  const message = stream ? await anthropic.messages.stream(request).finalMessage() : await anthropic.messages.create(request);
  let text = "";
  const calls: Outcome["calls"] = [];
  for (const block of message.content) {
    if (block.type === "text") text += block.text;
    if (block.type === "tool_use") calls.push({ name: block.name, arguments: block.input });
  }
  return { text, calls, finish: message.stop_reason };
}

function named(call: { name: string; arguments: string }) {
  return { name: call.name, arguments: JSON.parse(call.arguments) as unknown };
}

const ROUTES = { chat, responses, messages } as const;
const FINISH = {
  chat: { call: "tool_calls", none: "stop" },
  responses: { call: "function_call", none: "completed" },
  messages: { call: "tool_use", none: "end_turn" },
} as const;

for (const [route, ask] of Object.entries(ROUTES) as [keyof typeof ROUTES, (stream: boolean) => Promise<Outcome>][]) {
  for (const stream of [false, true]) {
    describe(`${route}, ${stream ? "streamed" : "not streamed"}`, () => {
      for (const c of CASES) {
        test(`${c.family}: ${c.label}`, async () => {
          enqueue(c);
          const out = await ask(stream);
          expect(out.calls).toEqual(c.calls);
          expect(out.text).toBe(c.rest.trim() === "" && !stream && route === "chat" ? "" : c.rest);
          expect(out.finish).toBe(FINISH[route][c.calls.length > 0 ? "call" : "none"]);
        });
      }
    });
  }
}
