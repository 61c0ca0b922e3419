import { AgentdError, errorMessage } from "../core/errors/index.ts";
import type { Logger } from "../core/log/index.ts";
import { runInBackground } from "../core/process/index.ts";
import { redactSecrets } from "../core/redaction/index.ts";
import type { AgentConfig } from "../core/config/sections/agentConfig.ts";
import { LOCAL_TARGET, type ToolDefinition, type ToolTarget } from "../core/tools/toolDefinition.ts";
import { newId } from "./agentIds.ts";
import type { AgentTelemetry } from "./agentTelemetry.ts";
import type { ApprovalStore } from "./approvalStore.ts";
import type { CallSite } from "./callRecorder.ts";
import type { SessionChannels } from "./sessionChannels.ts";
import type { SessionEvents } from "./sessionEvents.ts";
import type { SessionRecord, SessionStore } from "./sessionStore.ts";
import { argumentsByCallId } from "./toolArguments.ts";
import type { ToolCatalog } from "./toolCatalog.ts";
import type { ToolCallRecord, ToolCallStore } from "./toolCallStore.ts";
import { resolveCallTarget } from "./directCallTarget.ts";
import { directCallAnswer } from "./directCallAnswer.ts";
import { CallNotFoundError, type DirectCallAnswer, type DirectCallRequest, UnknownToolError } from "./directCallTypes.ts";
import { CallWaiters } from "./directCallWaiters.ts";
import type { JudgedCall, ToolCallPipeline } from "./toolCallPipeline.ts";

export interface DirectCallsDeps {
  sessions: SessionStore;
  events: SessionEvents;
  toolCalls: ToolCallStore;
  approvals: ApprovalStore;
  catalog: ToolCatalog;
  local: ToolTarget;
  channels: SessionChannels;
  agent: AgentConfig;
  logger: Logger;
  telemetry: AgentTelemetry;
  /** Judges, asks about, runs and records each call (shared with the agent loop). */
  pipeline: ToolCallPipeline;
}

/**
 * Tool calls made directly by a client (MCP), each a turn of its own in a session of kind "mcp":
 * judged, asked about (so the page, the API and `agentd approve` decide them, exactly once), run,
 * recorded and traced by the agent's own ToolCallPipeline. What is left here is what differs from a
 * model's step: the call's own turn, the client waiting for its answer, progress while a decision is
 * awaited. A paused call survives a worker restart; its decision runs it, and its result stays
 * readable by call id. Unlike a turn, calls of one session may run side by side.
 */
export class DirectCalls {
  readonly #waiters = new CallWaiters();
  readonly #busy = new Map<string, number>();
  readonly #closing = new AbortController();
  readonly #inflight = new Set<Promise<void>>();

  constructor(private readonly deps: DirectCallsDeps) {}

  get tools(): readonly ToolDefinition[] {
    return [...this.deps.catalog.byName.values()];
  }

  openSession(client: { name: string; version: string }): SessionRecord {
    const label = `${client.name} ${client.version}`.trim();
    return this.deps.sessions.create({ model: "mcp", target: LOCAL_TARGET, policy: {}, kind: "mcp", client: label, title: `MCP ${label}` });
  }

  isDirect(sessionId: string): boolean {
    return this.deps.sessions.find(sessionId)?.kind === "mcp";
  }

  isRunning(sessionId: string): boolean {
    return (this.#busy.get(sessionId) ?? 0) > 0;
  }

  /** Plans, judges and (when allowed) runs one call; resolves once it finished, or stays waiting for a decision. */
  call(request: DirectCallRequest): { callId: string; answer: Promise<DirectCallAnswer> } {
    const tool = this.deps.catalog.byName.get(request.tool);
    if (!tool) throw new UnknownToolError(request.tool, this.deps.catalog.byName.keys());
    const session = this.deps.sessions.get(request.sessionId);
    const callId = newId("mcp");
    const turn = this.deps.sessions.startTurn(session.id);
    this.deps.sessions.setTurnStatus(turn.id, "running", 1);
    const text = JSON.stringify(request.args);
    this.deps.sessions.addMessage(session.id, turn.id, {
      role: "assistant",
      content: null,
      tool_calls: [{ id: callId, type: "function", function: { name: tool.name, arguments: text } }],
    });
    this.deps.toolCalls.plan({
      sessionId: session.id,
      turnId: turn.id,
      step: 1,
      ordinal: 0,
      callId,
      tool: tool.name,
      scope: tool.scope,
      arguments: redactSecrets(request.args),
    });
    this.deps.pipeline.recorder.emit(session.id, turn.id, "turn.start", {
      via: "mcp",
      client: session.client,
      tool: tool.name,
      call_id: callId,
    });
    const answer = this.#waiters.add(turn.id, request);
    this.#settleInBackground(session.id, turn.id);
    return { callId, answer };
  }

  /** Continues a call whose approval was decided; ApprovalService has claimed its turn. */
  resume(sessionId: string, turnId: string): void {
    this.#settleInBackground(sessionId, turnId);
  }

  /** Where a call stands, by its id; `waitMs` waits that long for a call still in this worker to finish. */
  async result(callId: string, waitMs = 0): Promise<DirectCallAnswer> {
    const record = this.deps.toolCalls.findByCallId(callId);
    if (!record || !this.isDirect(record.session_id)) throw new CallNotFoundError(callId);
    const waiter = this.#waiters.get(record.turn_id);
    if (record.status === "finished" || waitMs <= 0 || !waiter) return this.#answer(record.id);
    return this.#waiters.next(waiter, waitMs, () => this.#answer(record.id));
  }

  /** Stops running calls; calls waiting for a decision stay pending in the store, their requests get their state. */
  async close(): Promise<void> {
    this.#closing.abort(new Error("agentd is stopping"));
    for (const [turnId, waiter] of this.#waiters.entries()) {
      const record = this.deps.toolCalls.unfinished(turnId)[0];
      if (record?.status === "awaiting_approval") this.#waiters.notify(turnId, this.#answer(record.id), waiter);
    }
    await Promise.all(this.#inflight);
  }

  #settleInBackground(sessionId: string, turnId: string): void {
    this.#busy.set(sessionId, (this.#busy.get(sessionId) ?? 0) + 1);
    const { done } = runInBackground(
      "mcp.call",
      () => this.#settle(sessionId, turnId),
      { session: sessionId, turn: turnId },
      this.deps.logger,
    );
    const settled = done.then(() => {
      this.#inflight.delete(settled);
      const left = (this.#busy.get(sessionId) ?? 1) - 1;
      if (left > 0) this.#busy.set(sessionId, left);
      else {
        this.#busy.delete(sessionId);
        this.deps.channels.release(sessionId);
        this.deps.events.forget(sessionId);
        this.deps.pipeline.forget(sessionId);
      }
      this.#refreshState(sessionId);
    });
    this.#inflight.add(settled);
  }

  async #settle(sessionId: string, turnId: string): Promise<void> {
    const record = this.deps.toolCalls.unfinished(turnId)[0];
    if (!record) return this.#finishTurn(sessionId, turnId, "stop");
    const waiter = this.#waiters.get(turnId);
    if (record.status === "awaiting_approval") waiter?.stopWaiting?.();
    try {
      await this.#judgeAndRun(sessionId, turnId, record, waiter?.request);
    } catch (error) {
      this.deps.logger.warn("mcp.call_failed", { session: sessionId, turn: turnId, error });
      const code = error instanceof AgentdError ? error.code : "call_failed";
      this.deps.pipeline.unrun(this.#site(sessionId, turnId, record), "error", { code, message: errorMessage(error) });
    }
    if (this.deps.toolCalls.get(record.id).status === "finished") this.#finishTurn(sessionId, turnId, "stop", record.id);
  }

  async #judgeAndRun(sessionId: string, turnId: string, record: ToolCallRecord, request?: DirectCallRequest): Promise<void> {
    const { pipeline } = this.deps;
    const site = this.#site(sessionId, turnId, record);
    // The call's own turn only: a long session's earlier messages are not read again per call.
    const text = argumentsByCallId(this.deps.sessions.turnMessages(turnId).map((m) => m.body)).get(record.call_id) ?? "{}";
    const call = await pipeline.judge(site, text, { targetInArguments: true });
    if (!call) return;
    const target = call.target ?? LOCAL_TARGET;
    const signal = request ? AbortSignal.any([request.signal, this.#closing.signal]) : this.#closing.signal;
    // An unknown hop is an error at once, not a question for the operator.
    const resolved =
      record.status === "awaiting_approval"
        ? undefined
        : await resolveCallTarget(this.deps.catalog, this.deps.local, target, sessionId, signal);
    if (call.verdict === "deny") return pipeline.deny(site, call);
    if (call.verdict === "ask") return this.#ask(site, call, request);
    if (signal.aborted) return pipeline.unrun(site, "cancelled", { code: "cancelled", message: "The call was cancelled before it ran" });
    const runOn = resolved ?? (await resolveCallTarget(this.deps.catalog, this.deps.local, target, sessionId, signal));
    await pipeline.run(site, call, request?.wrapTarget ? request.wrapTarget(runOn) : runOn, {
      signal,
      ...(request ? { progress: (message: string, data: Record<string, unknown>) => request.progress(message, data) } : {}),
    });
  }

  /** Asks a person about the call (unless it already waits), then waits for the decision. */
  async #ask(site: CallSite, call: JudgedCall, request?: DirectCallRequest): Promise<void> {
    const { record, sessionId, turnId } = site;
    let approvalId = record.approval_id;
    if (record.status !== "awaiting_approval" || !approvalId) {
      const client = this.deps.sessions.get(sessionId).client ?? "unknown";
      // Past the session's limit the call is answered with the error at once, and nothing is queued.
      const approval = await this.deps.pipeline.ask(site, call, `a call from MCP client ${client}`);
      if (!approval) return;
      approvalId = approval.id;
      this.deps.sessions.setTurnStatus(turnId, "awaiting_approval", 1);
      this.deps.pipeline.recorder.approvalRequired(sessionId, turnId, 1, [
        { approval_id: approval.id, call_id: record.call_id, tool: call.tool.name, scope: call.scope, summary: approval.summary },
      ]);
    }
    if (request) this.#waitForDecision(sessionId, turnId, record, approvalId, request);
  }

  /** Ticks progress while the decision is awaited; a cancel cancels the approval, if nobody decided first. */
  #waitForDecision(sessionId: string, turnId: string, record: ToolCallRecord, approvalId: string, request: DirectCallRequest): void {
    const started = Date.now();
    const tell = () =>
      request.progress(`call ${record.call_id} waits for approval ${approvalId} (agentd approve ${approvalId} once|session|deny)`, {
        approval_id: approvalId,
        call_id: record.call_id,
        waited_ms: Date.now() - started,
      });
    tell();
    const ticker = setInterval(tell, this.deps.agent.progress_interval_ms);
    const stop = () => {
      clearInterval(ticker);
      request.signal.removeEventListener("abort", onAbort);
      this.#closing.signal.removeEventListener("abort", stop);
    };
    const onAbort = () => {
      stop();
      if (!this.deps.approvals.decide(approvalId, "cancelled", "mcp")) return;
      const approval = this.deps.approvals.get(approvalId);
      this.deps.telemetry.approvalDecided(approvalId, "cancelled", "mcp", (approval.decided_at ?? Date.now()) - approval.created_at);
      // Claimed like a decision, so a decision racing this cancel cannot run the call as well.
      if (!this.deps.sessions.claimPausedTurn(turnId)) return;
      this.deps.pipeline.unrun(this.#site(sessionId, turnId, record), "cancelled", {
        code: "cancelled",
        message: "The client cancelled the call before it was decided",
      });
      this.#finishTurn(sessionId, turnId, "cancelled", record.id);
      this.#refreshState(sessionId);
    };
    request.signal.addEventListener("abort", onAbort, { once: true });
    this.#closing.signal.addEventListener("abort", stop, { once: true });
    const waiter = this.#waiters.get(turnId);
    if (waiter) waiter.stopWaiting = stop;
  }

  #finishTurn(sessionId: string, turnId: string, reason: string, recordId?: string): void {
    if (this.deps.sessions.getTurn(turnId).status !== "done") {
      this.deps.sessions.endTurn(turnId, reason, 1);
      this.deps.pipeline.recorder.emit(sessionId, turnId, "turn.end", { reason, steps: 1 });
      this.deps.pipeline.recorder.sidecar(sessionId, "turn.end", { turn: turnId, reason, steps: 1 });
    }
    const waiter = this.#waiters.get(turnId);
    if (!waiter) return;
    waiter.stopWaiting?.();
    const id = recordId ?? this.deps.toolCalls.forTurn(turnId)[0]?.id;
    if (id) this.#waiters.notify(turnId, this.#answer(id), waiter);
  }

  #answer(recordId: string): DirectCallAnswer {
    const record = this.deps.toolCalls.get(recordId);
    return directCallAnswer(record, () => this.deps.sessions.turnMessages(record.turn_id));
  }

  /** Pending approvals first, then running calls: what the sessions list shows for an MCP session. */
  #refreshState(sessionId: string): void {
    const state = this.deps.approvals.pending(sessionId).length > 0 ? "awaiting_approval" : this.isRunning(sessionId) ? "running" : "idle";
    this.deps.sessions.setState(sessionId, state);
  }

  #site(sessionId: string, turnId: string, record: ToolCallRecord): CallSite {
    return { sessionId, turnId, record, history: [], via: "mcp" };
  }
}
