import type { Logger } from "../core/log/index.ts";
import type { AgentTelemetry } from "./agentTelemetry.ts";
import type { SessionChannels } from "./sessionChannels.ts";
import type { SessionEvents } from "./sessionEvents.ts";
import type { ChatMessage, SessionStore } from "./sessionStore.ts";
import type { ToolErrorBody } from "./toolArguments.ts";
import type { ToolCallOutcome, ToolCallRecord, ToolCallStore } from "./toolCallStore.ts";
import { errorContent } from "./toolRunner.ts";

export interface UnrunAnswersDeps {
  sessions: SessionStore;
  events: SessionEvents;
  toolCalls: ToolCallStore;
  channels: SessionChannels;
  telemetry: AgentTelemetry;
  logger: Logger;
}

/**
 * The answers a turn gives to calls it does not run (bad arguments, an unknown tool, a denial, a
 * turn cancelled midway), recorded like a run's, so the stored conversation stays valid for the model.
 */
export class UnrunAnswers {
  constructor(private readonly deps: UnrunAnswersDeps) {}

  /** Records and answers a call that is not run. */
  unrun(
    sessionId: string,
    turnId: string,
    record: ToolCallRecord,
    history: ChatMessage[],
    outcome: ToolCallOutcome,
    error: ToolErrorBody,
  ): void {
    if (!this.deps.toolCalls.start(record.id)) return;
    const content = this.#finish(record, outcome, error);
    const fields = { session: sessionId, tool: record.tool, call_id: record.call_id };
    this.deps.logger.info("tool.start", fields);
    this.deps.logger.warn("tool.end", { ...fields, outcome, duration_ms: 0, error: error.message, error_code: error.code });
    this.deps.events.append(sessionId, turnId, "tool.start", { call_id: record.call_id, tool: record.tool, arguments: record.arguments });
    this.deps.events.append(sessionId, turnId, "tool.end", { call_id: record.call_id, tool: record.tool, outcome, duration_ms: 0, error });
    this.deps.channels.get(sessionId).sidecar?.write("tool.end", { call_id: record.call_id, tool: record.tool, outcome, error });
    this.toolMessage(sessionId, turnId, history, record.call_id, content);
  }

  /** Gives every open call of the turn an answer. */
  remaining(sessionId: string, turnId: string, outcome: ToolCallOutcome, error: ToolErrorBody): void {
    const history: ChatMessage[] = [];
    for (const record of this.deps.toolCalls.unfinished(turnId)) {
      if (record.status !== "running") {
        this.unrun(sessionId, turnId, record, history, outcome, error);
        continue;
      }
      const content = this.#finish(record, outcome, error);
      this.deps.logger.warn("tool.end", { session: sessionId, tool: record.tool, call_id: record.call_id, outcome, error: error.message });
      this.toolMessage(sessionId, turnId, history, record.call_id, content);
    }
  }

  toolMessage(sessionId: string, turnId: string, history: ChatMessage[], callId: string, content: string): void {
    const message: ChatMessage = { role: "tool", tool_call_id: callId, content };
    this.deps.sessions.addMessage(sessionId, turnId, message);
    history.push(message);
  }

  #finish(record: ToolCallRecord, outcome: ToolCallOutcome, error: ToolErrorBody): string {
    const content = errorContent(error);
    this.deps.toolCalls.finish(record.id, {
      outcome,
      durationMs: 0,
      outputBytes: Buffer.byteLength(content),
      errorCode: error.code,
      errorMessage: error.message,
    });
    this.deps.telemetry.toolEnded(record.id, record.tool, outcome);
    return content;
  }
}
