import type { Context } from "hono";
import { countChatInputTokens } from "../translate/inputTokens.ts";
import { responsesToChat } from "../translate/responsesToChat.ts";
import type { ProxyCore } from "../state/proxyCore.ts";
import { type PassthroughEndpoint, WIRES } from "../upstream/dispatcher.ts";
import { invalidRequest } from "../upstream/proxyError.ts";
import { passThrough } from "./passthroughRoute.ts";
import { readJsonObject } from "./requestBody.ts";
import { fullyResolved, inlineConversation, readResponsesInput } from "./responsesInput.ts";

const INPUT_TOKENS: PassthroughEndpoint = { path: "/responses/input_tokens", field: "input_tokens", scalar: true };
const COMPACT: PassthroughEndpoint = { path: "/responses/compact", field: "output" };

/**
 * POST /v1/responses/input_tokens: when the model's first provider speaks Responses the request
 * goes there (with failover among the Responses providers); when it speaks Chat Completions there
 * is no such endpoint, so agentd counts what it would send, with the o200k_base tokenizer.
 */
export async function handleInputTokens(c: Context, core: ProxyCore): Promise<Response> {
  const t0 = performance.now();
  const { raw, body } = await readJsonObject(c.req.raw, core.config.max_body_bytes);
  const read = readResponsesInput(core, body);
  const routes = core.routes(read.model, WIRES.any);
  if (routes[0]!.provider.config.wire === "responses") {
    const inline = inlineConversation(body, read);
    const onResponses = routes.filter((r) => r.provider.config.wire === "responses");
    return passThrough(c, core, INPUT_TOKENS, inline ? { object: inline } : { object: body, raw }, onResponses, t0);
  }
  // Counting needs no answer, only the request's shape: fields the chat wire would drop are dropped here too.
  const { stream: _stream, ...request } = body;
  const chat = responsesToChat({ ...request, input: fullyResolved(core, read) }, read.earlier, []);
  return c.json({ object: "response.input_tokens", input_tokens: await countChatInputTokens(chat) });
}

/**
 * POST /v1/responses/compact: passed through to the model's Responses providers. A chat-only
 * provider has nothing that can write OpenAI's opaque compaction item, so the request is refused
 * with the way out: a Codex custom model provider compacts on its own, through /v1/responses.
 */
export async function handleCompact(c: Context, core: ProxyCore): Promise<Response> {
  const t0 = performance.now();
  const { raw, body } = await readJsonObject(c.req.raw, core.config.max_body_bytes);
  const read = readResponsesInput(core, body);
  const routes = core.routes(read.model, WIRES.openAi).filter((r) => r.provider.config.wire === "responses");
  if (routes.length === 0)
    throw invalidRequest(
      `Remote compaction needs a provider that speaks the Responses API, and '${read.model}' has none; a Codex custom model provider (model_providers.<name> in config.toml) compacts on its own through /v1/responses`,
    );
  const inline = inlineConversation(body, read);
  return passThrough(c, core, COMPACT, inline ? { object: inline } : { object: body, raw }, routes, t0);
}
