import { AgentdError, errorMessage } from "../core/errors/index.ts";
import type { Logger } from "../core/log/index.ts";
import { runInBackground } from "../core/process/index.ts";
import { redactSecrets } from "../core/redaction/index.ts";
import type { AgentConfig } from "../core/config/sections/agentConfig.ts";
import type { ApprovalsConfig } from "../core/config/sections/approvalsConfig.ts";
import { LOCAL_TARGET, type ToolDefinition, type ToolTarget } from "../core/tools/toolDefinition.ts";
import { newId } from "./agentIds.ts";
import { decideCallPolicy } from "./approvalPolicy.ts";
import type { ApprovalStore } from "./approvalStore.ts";
import { askPerson } from "./approvalQuestion.ts";
import { callSummary, commandLineOf } from "./callSubject.ts";
import { callVerdict, deniedMessage, type CallVerdict } from "./callVerdict.ts";
import type { SessionChannels } from "./sessionChannels.ts";
import type { AgentEventType, SessionEvents } from "./sessionEvents.ts";
import type { SessionRecord, SessionStore } from "./sessionStore.ts";
import { argumentsByCallId, parseToolArguments, type ToolErrorBody } from "./toolArguments.ts";
import type { ToolCatalog } from "./toolCatalog.ts";
import type { ToolCallOutcome, ToolCallRecord, ToolCallStore } from "./toolCallStore.ts";
import { clipToolResult } from "./toolResultText.ts";
import { resolveCallTarget, splitTarget } from "./directCallTarget.ts";
import { CallNotFoundError, type DirectCallAnswer, type DirectCallRequest, UnknownToolError, type Waiter } from "./directCallTypes.ts";
import { errorContent, runToolCall, type TurnReporter } from "./toolRunner.ts";
import { CommandJudge, type WrittenFiles } from "./shell/commandJudge.ts";
import { approvalRequest, type ApprovalRequest } from "./approvalRequest.ts";

export interface DirectCallsDeps {
  sessions: SessionStore;
  events: SessionEvents;
  toolCalls: ToolCallStore;
  approvals: ApprovalStore;
  catalog: ToolCatalog;
  local: ToolTarget;
  channels: SessionChannels;
  agent: AgentConfig;
  approvalsConfig: ApprovalsConfig;
  logger: Logger;
  /** What each session wrote, for the text check (kept across restarts). */
  writtenFiles?: WrittenFiles;
}

/**
 * Tool calls made directly by a client (MCP), each a turn of its own in a session of kind "mcp":
 * judged by the same policy, asking through the same approvals (so the page, the API and
 * `agentd approve` decide them, exactly once), run by the same runner, recorded in the same store
 * and sidecar. A paused call survives a worker restart; its decision runs it, and its result stays
 * readable by call id. Unlike a turn, calls of one session may run side by side.
 */
export class DirectCalls {
  readonly #waiters = new Map<string, Waiter>();
  readonly #busy = new Map<string, number>();
  readonly #closing = new AbortController();
  readonly #inflight = new Set<Promise<void>>();
  readonly #judge: CommandJudge;

  constructor(private readonly deps: DirectCallsDeps) {
    this.#judge = new CommandJudge(deps.writtenFiles);
  }

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
    this.#emit(session.id, turn.id, "turn.start", { via: "mcp", client: session.client, tool: tool.name, call_id: callId });
    const answer = new Promise<DirectCallAnswer>((resolve) => {
      this.#waiters.set(turn.id, { request, listeners: new Set([resolve]) });
    });
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
    let listener: ((answer: DirectCallAnswer) => void) | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      return await new Promise<DirectCallAnswer>((resolve) => {
        listener = resolve;
        waiter.listeners.add(resolve);
        timer = setTimeout(() => resolve(this.#answer(record.id)), waitMs);
      });
    } finally {
      clearTimeout(timer);
      if (listener) waiter.listeners.delete(listener);
    }
  }

  /** Counts of finished MCP calls by tool and outcome. */
  outcomeCounts(): Array<{ tool: string; outcome: ToolCallOutcome; n: number }> {
    return this.deps.toolCalls.outcomeCounts("mcp");
  }

  /** Stops running calls; calls waiting for a decision stay pending in the store, their requests get their state. */
  async close(): Promise<void> {
    this.#closing.abort(new Error("agentd is stopping"));
    for (const [turnId, waiter] of this.#waiters) {
      const record = this.deps.toolCalls.unfinished(turnId)[0];
      if (record?.status === "awaiting_approval") this.#notify(turnId, this.#answer(record.id), waiter);
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
      this.#answerUnrun(sessionId, turnId, record, "error", { code, message: errorMessage(error) });
    }
    if (this.deps.toolCalls.get(record.id).status === "finished") this.#finishTurn(sessionId, turnId, "stop", record.id);
  }

  async #judgeAndRun(sessionId: string, turnId: string, record: ToolCallRecord, request?: DirectCallRequest): Promise<void> {
    const tool = this.deps.catalog.byName.get(record.tool);
    if (!tool) return this.#answerUnrun(sessionId, turnId, record, "error", { code: "unknown_tool", message: `No tool ${record.tool}` });
    const session = this.deps.sessions.get(sessionId);
    const history = this.deps.sessions
      .messages(sessionId)
      .filter((m) => m.turn_id === turnId)
      .map((m) => m.body);
    const { target, rest } = splitTarget(tool, argumentsByCallId(history).get(record.call_id) ?? "{}");
    const parsed = parseToolArguments(tool, rest);
    if (!parsed.ok) return this.#answerUnrun(sessionId, turnId, record, "error", parsed.error);
    const command = commandLineOf(tool, parsed.args);
    const signal = request ? AbortSignal.any([request.signal, this.#closing.signal]) : this.#closing.signal;
    // An unknown hop is an error at once, not a question for the operator.
    const resolved =
      record.status === "awaiting_approval"
        ? undefined
        : await resolveCallTarget(this.deps.catalog, this.deps.local, target, sessionId, signal);
    // The same text check as the agent's: a command that could raise privileges is judged (and asked) in the sudo scope.
    const escalation = record.status === "awaiting_approval" ? undefined : await this.#judge.judge(sessionId, tool, parsed.args);
    const judged = this.#verdict(session, record, tool, command, target, escalation);
    if (judged.verdict === "deny")
      return this.#answerUnrun(sessionId, turnId, record, "denied", { code: "denied", message: deniedMessage(tool, judged.reason) });
    if (judged.verdict === "ask") {
      // Shown on the card word by word: a bare escalation allowed in the sudo scope is exec'd as these words.
      const argv = judged.scope === "sudo" ? await this.#judge.privilegedArgv(tool, parsed.args) : undefined;
      const shown = approvalRequest({
        command,
        raw: parsed.raw,
        target,
        task: `a call from MCP client ${session.client ?? "unknown"}`,
        reasons: escalation,
        argv,
      });
      return this.#ask(session, turnId, record, tool, shown, judged, request);
    }
    if (signal.aborted)
      return this.#answerUnrun(sessionId, turnId, record, "cancelled", {
        code: "cancelled",
        message: "The call was cancelled before it ran",
      });
    const runOn = resolved ?? (await resolveCallTarget(this.deps.catalog, this.deps.local, target, sessionId, signal));
    const result = await runToolCall(
      {
        recordId: record.id,
        callId: record.call_id,
        sessionId,
        tool,
        args: parsed.args,
        shownArgs: redactSecrets(parsed.raw),
        target: request?.wrapTarget ? request.wrapTarget(runOn) : runOn,
        signal,
        // Only a bare sudo call allowed in the sudo scope starts without no_new_privs.
        ...(judged.privileged ? { privilegedArgv: await this.#judge.privilegedArgv(tool, parsed.args) } : {}),
      },
      {
        store: this.deps.toolCalls,
        logger: this.deps.logger,
        progressIntervalMs: this.deps.agent.progress_interval_ms,
        resultMaxBytes: this.deps.agent.tool_result_max_bytes,
      },
      this.#reporter(sessionId, turnId, request),
    );
    if (result) this.#addToolMessage(sessionId, turnId, record.call_id, result.content);
  }

  /** The policy's verdict; a call aimed at a hop must also pass the hop scope (the agent asks when it switches). */
  #verdict(
    session: SessionRecord,
    record: ToolCallRecord,
    tool: ToolDefinition,
    command: string | undefined,
    target: string,
    escalation?: readonly string[],
  ): CallVerdict & { privileged: boolean } {
    const policy = { ...this.deps.approvalsConfig.policy, ...session.policy };
    const grants = this.deps.approvals.grants(session.id);
    const judged = callVerdict(
      record,
      tool,
      command,
      { approvals: this.deps.approvals, approvalsConfig: this.deps.approvalsConfig, policy, grants },
      escalation,
    );
    const privileged = judged.verdict === "allow" && judged.scope === "sudo";
    if (target === LOCAL_TARGET || record.status === "awaiting_approval" || judged.verdict !== "allow") return { ...judged, privileged };
    return { ...decideCallPolicy({ scope: "hop", policy, rules: [], grants }), privileged };
  }

  /** Asks a person about the call (unless it already waits), then waits for the decision; throws TooManyPendingApprovalsError. */
  #ask(
    session: SessionRecord,
    turnId: string,
    record: ToolCallRecord,
    tool: ToolDefinition,
    shownRequest: ApprovalRequest,
    judged: CallVerdict,
    request?: DirectCallRequest,
  ): void {
    let approvalId = record.approval_id;
    if (record.status !== "awaiting_approval" || !approvalId) {
      const { target } = shownRequest;
      const summary = callSummary(tool, redactSecrets(shownRequest.arguments), shownRequest.command);
      const shown = target === LOCAL_TARGET ? summary : `${summary} on ${target}`;
      // Past the limit this throws: #settle answers the call with the error, and nothing is queued.
      const { approvals: store, toolCalls, logger } = this.deps;
      const approval = askPerson(
        { approvals: store, toolCalls, logger, maxPending: this.deps.approvalsConfig.max_pending_per_session },
        {
          sessionId: session.id,
          turnId,
          record,
          tool: tool.name,
          scope: judged.scope,
          summary: shown,
          request: shownRequest,
          target,
          reason: judged.reason,
        },
      );
      approvalId = approval.id;
      this.deps.sessions.setTurnStatus(turnId, "awaiting_approval", 1);
      const approvals = [{ approval_id: approval.id, call_id: record.call_id, tool: tool.name, scope: judged.scope, summary: shown }];
      this.#emit(session.id, turnId, "approval_required", { step: 1, approvals, decisions: ["allow_once", "allow_session", "deny"] });
      this.deps.channels.get(session.id).sidecar?.write("approval.required", { turn: turnId, step: 1, approvals });
    }
    if (request) this.#waitForDecision(session.id, turnId, record, approvalId, request);
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
      // Claimed like a decision, so a decision racing this cancel cannot run the call as well.
      if (!this.deps.sessions.claimPausedTurn(turnId)) return;
      this.#answerUnrun(sessionId, turnId, record, "cancelled", {
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

  #answerUnrun(sessionId: string, turnId: string, record: ToolCallRecord, outcome: ToolCallOutcome, error: ToolErrorBody): void {
    const current = this.deps.toolCalls.get(record.id);
    if (current.status === "finished") return;
    if (current.status !== "running" && !this.deps.toolCalls.start(record.id)) return;
    const content = errorContent(error);
    this.deps.toolCalls.finish(record.id, {
      outcome,
      durationMs: 0,
      outputBytes: Buffer.byteLength(content),
      errorCode: error.code,
      errorMessage: error.message,
    });
    const fields = { session: sessionId, tool: record.tool, call_id: record.call_id };
    this.deps.logger.warn("tool.end", { ...fields, outcome, duration_ms: 0, error: error.message, error_code: error.code });
    this.#emit(sessionId, turnId, "tool.end", { call_id: record.call_id, tool: record.tool, outcome, duration_ms: 0, error });
    this.deps.channels.get(sessionId).sidecar?.write("tool.end", { call_id: record.call_id, tool: record.tool, outcome, error });
    this.#addToolMessage(sessionId, turnId, record.call_id, content);
  }

  #addToolMessage(sessionId: string, turnId: string, callId: string, content: string): void {
    this.deps.sessions.addMessage(sessionId, turnId, { role: "tool", tool_call_id: callId, content });
  }

  #finishTurn(sessionId: string, turnId: string, reason: string, recordId?: string): void {
    if (this.deps.sessions.getTurn(turnId).status !== "done") {
      this.deps.sessions.endTurn(turnId, reason, 1);
      this.#emit(sessionId, turnId, "turn.end", { reason, steps: 1 });
      this.deps.channels.get(sessionId).sidecar?.write("turn.end", { turn: turnId, reason, steps: 1 });
    }
    const waiter = this.#waiters.get(turnId);
    if (!waiter) return;
    waiter.stopWaiting?.();
    const id = recordId ?? this.deps.toolCalls.forSession(sessionId).find((r) => r.turn_id === turnId)?.id;
    if (id) this.#notify(turnId, this.#answer(id), waiter);
  }

  #notify(turnId: string, answer: DirectCallAnswer, waiter: Waiter): void {
    if (answer.status === "finished") this.#waiters.delete(turnId);
    for (const listener of [...waiter.listeners]) listener(answer);
  }

  #answer(recordId: string): DirectCallAnswer {
    const record = this.deps.toolCalls.get(recordId);
    const content =
      record.status === "finished"
        ? this.deps.sessions
            .messages(record.session_id)
            .find((m) => m.turn_id === record.turn_id && m.role === "tool" && m.body.tool_call_id === record.call_id)?.body.content
        : undefined;
    return {
      call_id: record.call_id,
      tool: record.tool,
      status: record.status,
      outcome: record.outcome,
      ...(typeof content === "string" ? { content } : {}),
      approval_id: record.approval_id,
    };
  }

  /** Pending approvals first, then running calls: what the sessions list shows for an MCP session. */
  #refreshState(sessionId: string): void {
    const state = this.deps.approvals.pending(sessionId).length > 0 ? "awaiting_approval" : this.isRunning(sessionId) ? "running" : "idle";
    this.deps.sessions.setState(sessionId, state);
  }

  #emit(sessionId: string, turnId: string, type: AgentEventType, data: Record<string, unknown>): void {
    this.deps.events.append(sessionId, turnId, type, data);
  }

  #reporter(sessionId: string, turnId: string, request?: DirectCallRequest): TurnReporter {
    return {
      event: (type, data) => {
        this.#emit(sessionId, turnId, type, data);
        if (type === "tool.progress") request?.progress(String(data.message ?? "running"), data);
      },
      sidecar: (kind, fields) =>
        this.deps.channels
          .get(sessionId)
          .sidecar?.write(
            kind,
            this.deps.agent.debug.level === "full" || typeof fields.result !== "string"
              ? fields
              : { ...fields, result: clipToolResult(fields.result, 2000).text },
          ),
    };
  }
}
