import type { Context } from "hono";
import type { ProxyCore } from "../state/proxyCore.ts";
import { type PassthroughEndpoint, WIRES, type WirePayload } from "../upstream/dispatcher.ts";
import type { Route } from "../upstream/providerRouter.ts";
import type { ProviderRuntime } from "../upstream/providerRuntime.ts";
import { invalidRequest } from "../upstream/proxyError.ts";
import { relayStream } from "../upstream/relayStream.ts";
import { passedResponseHeaders } from "../upstream/upstreamHeaders.ts";
import { chatShape, record } from "./chatCompletionsRoute.ts";
import { agentdHeaders, readJsonObject } from "./requestBody.ts";

export const EMBEDDINGS: PassthroughEndpoint = { path: "/embeddings", field: "data" };
export const COMPLETIONS: PassthroughEndpoint = { path: "/completions", field: "choices" };

type Usage = { prompt_tokens?: number; completion_tokens?: number } | undefined;

/**
 * POST /v1/embeddings and POST /v1/completions: the body goes as it came to the providers that
 * serve the model, whatever their wire, with the same routing, retries, failover and breakers as
 * chat; the answer comes back as it is (a legacy completions stream is relayed chunk by chunk).
 */
export async function handlePassthrough(c: Context, core: ProxyCore, endpoint: PassthroughEndpoint): Promise<Response> {
  const t0 = performance.now();
  const { raw, body } = await readJsonObject(c.req.raw, core.config.max_body_bytes);
  const model = body.model;
  if (typeof model !== "string" || !model) throw invalidRequest("'model' is required", "model");
  return passThrough(c, core, endpoint, { object: body, raw }, core.routes(model, WIRES.openAi), t0);
}

/** Sends `payload` as it is to `endpoint` of the providers in `routes`, and relays the answer. */
export async function passThrough(
  c: Context,
  core: ProxyCore,
  endpoint: PassthroughEndpoint,
  payload: WirePayload,
  routes: Route<ProviderRuntime>[],
  t0: number,
): Promise<Response> {
  const model = String(payload.object.model);
  const stream = endpoint === COMPLETIONS && payload.object.stream === true;
  const committed = await core.dispatch(
    {
      routes,
      stream,
      payloads: { chat: payload, responses: payload, anthropic: payload },
      endpoint,
      clientHeaders: c.req.raw.headers,
      client: c.req.raw,
    },
    model,
    t0,
  );
  const committedAt = performance.now();
  const headers: Record<string, string> = {};
  passedResponseHeaders(committed.response.headers, headers);
  const overhead = () => committed.sentAt - t0 + (performance.now() - committedAt);
  if (committed.kind === "json") {
    record(core, committed, model, t0, "ok", undefined, committed.body.usage as Usage);
    headers["content-type"] = "application/json";
    return new Response(committed.text, { status: 200, headers: agentdHeaders(committed.provider.name, overhead(), headers) });
  }
  headers["content-type"] = "text/event-stream";
  headers["cache-control"] = "no-cache";
  const shape = chatShape(core, committed, model, t0, committedAt - t0, undefined);
  const body$ = relayStream(committed, shape, (failure) =>
    core.noteFailure(committed.provider, failure, committed.upstreamModel, committed.attempts),
  );
  return new Response(body$, { status: 200, headers: agentdHeaders(committed.provider.name, overhead(), headers) });
}
