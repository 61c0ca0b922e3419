import type { Logger } from "../core/log/index.ts";
import type { AgentConfig } from "../core/config/sections/agentConfig.ts";
import type { AgentTelemetry, CallOrigin, ToolSpanCall } from "./agentTelemetry.ts";
import type { SessionChannels } from "./sessionChannels.ts";
import type { AgentEventType, SessionEvents } from "./sessionEvents.ts";
import type { ChatMessage, SessionStore } from "./sessionStore.ts";
import type { ToolErrorBody } from "./toolArguments.ts";
import type { ToolCallOutcome, ToolCallRecord, ToolCallStore } from "./toolCallStore.ts";
import { clipToolResult } from "./toolResultText.ts";
import { errorContent, type ToolRunResult } from "./toolRunner.ts";
import { redactText } from "../core/redaction/index.ts";

export interface CallRecorderDeps {
  sessions: SessionStore;
  events: SessionEvents;
  toolCalls: ToolCallStore;
  channels: SessionChannels;
  telemetry: AgentTelemetry;
  agent: AgentConfig;
  logger: Logger;
}

/** Where one call is recorded: its session and turn, and the conversation its answer joins. */
export interface CallSite {
  sessionId: string;
  turnId: string;
  record: ToolCallRecord;
  /** The messages the turn is working with; the call's answer is appended (a direct call's is its own). */
  history: ChatMessage[];
  /** Who made the call: the agent's model, or an MCP client directly. */
  via: CallOrigin;
}

/**
 * Records every tool call the same way, for the agent loop and MCP's direct calls alike, at its
 * start and its end, run or not: the tool-call row and the session's events are the truth; the log
 * line, the sidecar record, the span and the metric are written here from the same fields at the
 * same moment, so the views of a call cannot drift apart.
 */
export class CallRecorder {
  constructor(private readonly deps: CallRecorderDeps) {}

  /**
   * A call starts running: marked in its row (false when it already ran, so nothing runs twice),
   * then logged, told to the session's listeners, written to the sidecar and traced.
   */
  started(site: CallSite, run: { target: string; shownArgs: unknown; timeoutMs: number }): boolean {
    const { sessionId, turnId, record } = site;
    if (!this.deps.toolCalls.start(record.id)) return false;
    this.deps.logger.info("tool.start", { session: sessionId, tool: record.tool, call_id: record.call_id, target: run.target });
    const fields = { call_id: record.call_id, tool: record.tool, arguments: run.shownArgs, target: run.target };
    this.emit(sessionId, turnId, "tool.start", fields);
    this.sidecar(sessionId, "tool.start", { ...fields, timeout_ms: run.timeoutMs });
    this.deps.telemetry.toolStarted(spanCall(site));
    return true;
  }

  progress(site: CallSite, message: string, fields: Record<string, unknown> & { elapsed_ms: number }): void {
    const { record } = site;
    this.emit(site.sessionId, site.turnId, "tool.progress", { call_id: record.call_id, tool: record.tool, message, ...fields });
  }

  /** A run ended: its row, log line, event, sidecar record, span, and the answer the model reads (clipped). */
  ended(site: CallSite, result: ToolRunResult): void {
    const { sessionId, turnId, record } = site;
    const { outcome, error, durationMs } = result;
    const outputBytes = Buffer.byteLength(result.content);
    const clipped = clipToolResult(result.content, this.deps.agent.tool_result_max_bytes).text;
    this.deps.toolCalls.finish(record.id, { outcome, durationMs, outputBytes, errorCode: error?.code, errorMessage: error?.message });
    const fields = {
      session: sessionId,
      tool: record.tool,
      call_id: record.call_id,
      outcome,
      duration_ms: durationMs,
      output_bytes: outputBytes,
    };
    if (outcome === "ok") this.deps.logger.info("tool.end", { ...fields, error: error?.message });
    else this.deps.logger.warn("tool.end", { ...fields, error: error?.message, error_code: error?.code });
    const ended = { call_id: record.call_id, tool: record.tool, outcome, duration_ms: durationMs, output_bytes: outputBytes };
    this.emit(sessionId, turnId, "tool.end", {
      ...ended,
      ...(error ? { error } : {}),
      preview: redactText(clipToolResult(result.content, 2000).text),
    });
    // At info level a result is kept to its start; full level keeps what the model got.
    const kept = this.deps.agent.debug.level === "full" ? clipped : clipToolResult(clipped, 2000).text;
    this.sidecar(sessionId, "tool.end", { ...ended, error, result: kept });
    this.deps.telemetry.toolEnded(record.id, record.tool, outcome, site.via);
    this.toolMessage(site, clipped);
  }

  /** Records and answers a call that is not run (bad arguments, a denial, a cancel before it ran). */
  unrun(site: CallSite, outcome: ToolCallOutcome, error: ToolErrorBody): void {
    const { sessionId, turnId, record } = site;
    const current = this.deps.toolCalls.get(record.id).status;
    if (current === "finished") return;
    const fields = { session: sessionId, tool: record.tool, call_id: record.call_id };
    // A call that started (its run failed past the runner) is only finished; any other is started first, once.
    if (current !== "running") {
      if (!this.deps.toolCalls.start(record.id)) return;
      this.deps.logger.info("tool.start", fields);
      this.emit(sessionId, turnId, "tool.start", { call_id: record.call_id, tool: record.tool, arguments: record.arguments });
    }
    const content = this.#finish(site, outcome, error);
    this.deps.logger.warn("tool.end", { ...fields, outcome, duration_ms: 0, error: error.message, error_code: error.code });
    this.emit(sessionId, turnId, "tool.end", { call_id: record.call_id, tool: record.tool, outcome, duration_ms: 0, error });
    this.sidecar(sessionId, "tool.end", { call_id: record.call_id, tool: record.tool, outcome, error });
    this.toolMessage(site, content);
  }

  /** Gives every open call of the turn an answer (a cancel, a failed model step, a restart). */
  remaining(sessionId: string, turnId: string, outcome: ToolCallOutcome, error: ToolErrorBody): void {
    const history: ChatMessage[] = [];
    for (const record of this.deps.toolCalls.unfinished(turnId)) {
      const site: CallSite = { sessionId, turnId, record, history, via: "agent" };
      if (record.status !== "running") {
        this.unrun(site, outcome, error);
        continue;
      }
      // Left running by a worker that stopped: no run of this worker will finish it.
      const content = this.#finish(site, outcome, error);
      this.deps.logger.warn("tool.end", { session: sessionId, tool: record.tool, call_id: record.call_id, outcome, error: error.message });
      this.toolMessage(site, content);
    }
  }

  /** The call's answer as the model reads it, stored and appended to the turn's history. */
  toolMessage(site: CallSite, content: string): void {
    const message: ChatMessage = { role: "tool", tool_call_id: site.record.call_id, content };
    this.deps.sessions.addMessage(site.sessionId, site.turnId, message);
    site.history.push(message);
  }

  /** Calls now waiting for a person: one event and one sidecar record for the step. */
  approvalRequired(sessionId: string, turnId: string, step: number, approvals: Array<Record<string, unknown>>): void {
    this.emit(sessionId, turnId, "approval_required", { step, approvals, decisions: ["allow_once", "allow_session", "deny"] });
    this.sidecar(sessionId, "approval.required", { turn: turnId, step, approvals });
  }

  emit(sessionId: string, turnId: string, type: AgentEventType, data: Record<string, unknown>): void {
    this.deps.events.append(sessionId, turnId, type, data);
  }

  sidecar(sessionId: string, kind: string, fields: Record<string, unknown>): void {
    this.deps.channels.get(sessionId).sidecar?.write(kind, fields);
  }

  #finish({ record, via }: CallSite, outcome: ToolCallOutcome, error: ToolErrorBody): string {
    const content = errorContent(error);
    this.deps.toolCalls.finish(record.id, {
      outcome,
      durationMs: 0,
      outputBytes: Buffer.byteLength(content),
      errorCode: error.code,
      errorMessage: error.message,
    });
    this.deps.telemetry.toolEnded(record.id, record.tool, outcome, via);
    return content;
  }
}

/** The call a tool span is about. */
export function spanCall(site: CallSite): ToolSpanCall {
  const { record } = site;
  return { sessionId: site.sessionId, turnId: site.turnId, recordId: record.id, tool: record.tool, callId: record.call_id, via: site.via };
}
