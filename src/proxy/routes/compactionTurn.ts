import type { ProxyCore } from "../state/proxyCore.ts";
import type { ProviderRuntime } from "../upstream/providerRuntime.ts";
import type { Route } from "../upstream/providerRouter.ts";
import type { WirePayload } from "../upstream/dispatcher.ts";
import { ProxyError } from "../upstream/proxyError.ts";
import { passedResponseHeaders } from "../upstream/upstreamHeaders.ts";
import { anthropicToChatCompletion } from "../translate/anthropicToChatAnswer.ts";
import { chatToAnthropic } from "../translate/chatToAnthropic.ts";
import { frameResponsesEvent, type ResponsesEvent } from "../translate/chatStreamToResponsesEvents.ts";
import { compactionInput, compactionItem } from "../translate/compaction.ts";
import { buildResponse, newShell, usageFromChat } from "../translate/responseObject.ts";
import { responsesToChat } from "../translate/responsesToChat.ts";
import { agentdHeaders } from "./requestBody.ts";
import { fullyResolved, type ResponsesInput } from "./responsesInput.ts";
import { finishTurn } from "./responsesTurn.ts";

type Json = Record<string, unknown>;

/**
 * A `compaction_trigger` for a model with no Responses provider: the chat model summarises the
 * conversation (tools shown but not callable), and the answer is the one `compaction` item the
 * Responses API would give, streamed as its events when the client asked for a stream. Routing,
 * failover, records and the response store are those of any POST /v1/responses.
 */
export async function compactThroughChat(
  request: Request,
  core: ProxyCore,
  body: Json,
  read: ResponsesInput & { model: string },
  routes: Route<ProviderRuntime>[],
  t0: number,
): Promise<Response> {
  const { model } = read;
  const dropped: string[] = [];
  const asked = { ...body, input: compactionInput(fullyResolved(core, read)), stream: false, tool_choice: "none" };
  const chat = responsesToChat(asked, read.earlier, dropped);
  const payloads: { chat?: WirePayload; anthropic?: WirePayload } = { chat: { object: chat, dropped } };
  if (routes.some((r) => r.provider.config.wire === "anthropic")) {
    const viaChat = [...dropped];
    payloads.anthropic = { object: chatToAnthropic(chat, viaChat), dropped: viaChat };
  }
  const committed = await core.dispatch(
    { routes, stream: false, payloads, clientHeaders: request.headers, client: request, route: "/v1/responses" },
    model,
    t0,
  );
  if (committed.kind !== "json") throw new Error("a request sent without stream was answered as a stream");
  const turn = { core, model, t0, history: [...read.earlier, ...read.resolved], store: body.store !== false };
  const completion = committed.wire === "anthropic" ? anthropicToChatCompletion(committed.body, model) : committed.body;
  const summary = answerText(completion);
  if (!summary.trim()) {
    finishTurn(turn, committed, undefined, undefined, "error");
    throw new ProxyError("upstream_error", `The model wrote no summary to compact the conversation with`, {
      provider: committed.provider.name,
    });
  }
  const shell = newShell(body);
  const item = compactionItem(summary);
  const response = buildResponse(shell, { status: "completed", output: [item], usage: usageFromChat(completion.usage) });
  finishTurn(turn, committed, response, undefined);
  const headers: Record<string, string> = {};
  passedResponseHeaders(committed.response.headers, headers);
  core.reportDropped(committed, headers, model);
  agentdHeaders(committed.provider.name, committed.sentAt - t0, headers);
  if (body.stream !== true) return Response.json(response, { headers });
  const events: ResponsesEvent[] = [
    { type: "response.created", sequence_number: 0, response: buildResponse(shell, { status: "in_progress", output: [] }) },
    { type: "response.output_item.added", sequence_number: 1, output_index: 0, item },
    { type: "response.output_item.done", sequence_number: 2, output_index: 0, item },
    { type: "response.completed", sequence_number: 3, response },
  ];
  headers["content-type"] = "text/event-stream";
  headers["cache-control"] = "no-cache";
  return new Response(events.map(frameResponsesEvent).join(""), { status: 200, headers });
}

/** The text of a chat completion's first choice (a string, or text parts). */
function answerText(completion: Json): string {
  const message = (completion.choices as Json[] | undefined)?.[0]?.message as Json | undefined;
  const content = message?.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content.map((part) => (typeof (part as Json)?.text === "string" ? ((part as Json).text as string) : "")).join("");
  return "";
}
