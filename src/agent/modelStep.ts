import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import { ChatChunkAccumulator, type GatheredMessage } from "./chatChunkAccumulator.ts";
import type { ModelClient } from "./modelClient.ts";
import type { AgentConfig } from "../core/config/sections/agentConfig.ts";
import { redactSecrets } from "../core/redaction/index.ts";
import type { AgentTelemetry } from "./agentTelemetry.ts";
import { DeltaBatch } from "./deltaBatch.ts";
import { SESSION_HEADER, type SessionChannels } from "./sessionChannels.ts";
import type { SessionEvents } from "./sessionEvents.ts";
import type { ChatMessage, SessionRecord, SessionStore } from "./sessionStore.ts";
import { requestSummary } from "./sidecarFetch.ts";
import { argumentValue } from "./toolArguments.ts";
import type { ToolCatalog } from "./toolCatalog.ts";
import type { ToolCallStore } from "./toolCallStore.ts";

export interface ModelStepRequest {
  model: string;
  messages: ChatCompletionMessageParam[];
  tools: ChatCompletionTool[];
  temperature?: number;
}

/** One streamed model call: hands each text delta on as it arrives and returns the whole message. */
export async function streamModelStep(
  client: ModelClient,
  request: ModelStepRequest,
  { signal, headers }: { signal: AbortSignal; headers: Record<string, string> },
  onDelta: (text: string) => void,
): Promise<GatheredMessage> {
  const stream = await (await client()).chat.completions.create(
    {
      model: request.model,
      messages: request.messages,
      stream: true,
      stream_options: { include_usage: true },
      ...(request.tools.length ? { tools: request.tools } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    },
    { signal, headers },
  );
  const accumulator = new ChatChunkAccumulator();
  for await (const chunk of stream) {
    const text = accumulator.add(chunk);
    if (text) onDelta(text);
  }
  // The SDK ends the iteration quietly when aborted; a cut-off answer must not pass as complete.
  if (signal.aborted) throw signal.reason ?? new Error("aborted");
  return accumulator.result();
}

export interface ModelStepDeps {
  client: ModelClient;
  agent: AgentConfig;
  catalog: ToolCatalog;
  channels: SessionChannels;
  events: SessionEvents;
  sessions: SessionStore;
  toolCalls: ToolCallStore;
  telemetry: AgentTelemetry;
}

/**
 * One step of the agent's turn: the model is asked with the history, its text streams out as
 * events, and its answer is stored with the calls it made planned (in the order it listed them).
 */
export async function modelStep(
  deps: ModelStepDeps,
  session: SessionRecord,
  turnId: string,
  step: number,
  history: ChatMessage[],
  signal: AbortSignal,
): Promise<ChatMessage> {
  const channel = deps.channels.get(session.id);
  const messages = [{ role: "system", content: deps.agent.system_prompt }, ...history] as ChatCompletionMessageParam[];
  const request = { model: session.model, messages, tools: deps.catalog.forModel, temperature: deps.agent.temperature };
  if (channel.sidecar) channel.note = requestSummary(request as never, deps.agent.debug.level);
  const traceparent = deps.telemetry.traceparent(turnId);
  // Deltas are joined into a few events per step, not one stored row per streamed chunk.
  const deltas = new DeltaBatch((delta) => deps.events.append(session.id, turnId, "text.delta", { step, delta }));
  let gathered: GatheredMessage;
  try {
    gathered = await streamModelStep(
      deps.client,
      request,
      {
        signal,
        headers: { ...(channel.sidecar ? { [SESSION_HEADER]: session.id } : {}), ...(traceparent ? { traceparent } : {}) },
      },
      (delta) => deltas.add(delta),
    );
  } finally {
    deltas.flush();
  }
  const message: ChatMessage = { role: "assistant", content: gathered.content || null };
  if (gathered.toolCalls.length > 0) {
    message.tool_calls = gathered.toolCalls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  deps.sessions.addMessage(session.id, turnId, message);
  history.push(message);
  gathered.toolCalls.forEach((call, ordinal) => {
    deps.toolCalls.plan({
      sessionId: session.id,
      turnId,
      step,
      ordinal,
      callId: call.id,
      tool: call.name,
      scope: deps.catalog.byName.get(call.name)?.scope ?? null,
      arguments: redactSecrets(argumentValue(call.arguments)),
    });
  });
  return message;
}
