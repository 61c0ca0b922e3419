import { LOCAL_TARGET, type ToolDefinition, type ToolTarget } from "../core/tools/toolDefinition.ts";
import type OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { errorMessage } from "../core/errors/index.ts";
import type { Logger } from "../core/log/index.ts";
import type { AgentConfig } from "../core/config/sections/agentConfig.ts";
import type { ApprovalsConfig } from "../core/config/sections/approvalsConfig.ts";
import { TooManyPendingApprovalsError, type ApprovalRecord, type ApprovalStore } from "./approvalStore.ts";
import { callVerdict, deniedMessage, type CallVerdictContext } from "./callVerdict.ts";
import { callSummary, commandLineOf } from "./callSubject.ts";
import { streamModelStep } from "./modelStep.ts";
import { requestSummary } from "./sidecarFetch.ts";
import { redactSecrets } from "../core/redaction/index.ts";
import { runInBackground } from "../core/process/index.ts";
import { SESSION_HEADER, type SessionChannels } from "./sessionChannels.ts";
import type { AgentEventType, SessionEvents } from "./sessionEvents.ts";
import type { ChatMessage, SessionRecord, SessionStore } from "./sessionStore.ts";
import { argumentsByCallId, argumentValue, parseToolArguments } from "./toolArguments.ts";
import type { ToolCatalog } from "./toolCatalog.ts";
import type { ToolCallRecord, ToolCallStore } from "./toolCallStore.ts";
import { runToolCall, type TurnReporter } from "./toolRunner.ts";
import { clipToolResult } from "./toolResultText.ts";
import { CommandJudge, type WrittenFiles } from "./shell/commandJudge.ts";
import { AmbiguousCommandError } from "./shell/ambiguousText.ts";
import { approvalRequest } from "./approvalRequest.ts";
import { askPerson, type ApprovalQuestionDeps } from "./approvalQuestion.ts";
import { UnrunAnswers } from "./unrunAnswers.ts";
import type { AgentTelemetry } from "./agentTelemetry.ts";

export interface TurnEngineDeps {
  sessions: SessionStore;
  events: SessionEvents;
  toolCalls: ToolCallStore;
  approvals: ApprovalStore;
  /** What each session wrote, for the text check (kept across restarts). */
  writtenFiles?: WrittenFiles;
  catalog: ToolCatalog;
  target(name: string): ToolTarget;
  /** The agent's one model client. */
  client: OpenAI;
  channels: SessionChannels;
  agent: AgentConfig;
  approvalsConfig: ApprovalsConfig;
  logger: Logger;
  telemetry: AgentTelemetry;
}

interface RunningTurn {
  turnId: string;
  controller: AbortController;
  done: Promise<void>;
}

type StepResult = "continue" | "paused";

class TurnCancelled extends Error {}

/** A call the policy asks a person about, as judged. */
interface AskedCall {
  tool: ToolDefinition;
  args: unknown;
  raw: unknown;
  command: string | undefined;
  scope: string;
  reason: string;
  escalation: readonly string[] | undefined;
}

/**
 * Runs turns: model step, tool calls in the order the model listed them, pauses for approval,
 * and resumes a paused turn once its approvals are decided. One turn per session at a time.
 */
export class TurnEngine {
  readonly #running = new Map<string, RunningTurn>();
  readonly #judge: CommandJudge;
  readonly #answers: UnrunAnswers;

  constructor(private readonly deps: TurnEngineDeps) {
    this.#judge = new CommandJudge(deps.writtenFiles);
    this.#answers = new UnrunAnswers(deps);
  }

  get runningCount(): number {
    return this.#running.size;
  }

  isRunning(sessionId: string): boolean {
    return this.#running.has(sessionId);
  }

  /** Starts a turn for a user message; the session must already be claimed as running. */
  start(session: SessionRecord, content: string): string {
    const turn = this.deps.sessions.startTurn(session.id);
    this.deps.sessions.addMessage(session.id, turn.id, { role: "user", content });
    this.deps.sessions.setTitleIfEmpty(session.id, content.slice(0, 80));
    this.deps.telemetry.turnStarted(session.id, turn.id, session.model);
    this.#emit(session.id, turn.id, "turn.start", { content });
    this.#launch(session.id, turn.id, false);
    return turn.id;
  }

  /** Continues a paused turn whose approvals are all decided; the turn must already be claimed. */
  resume(sessionId: string, turnId: string): void {
    this.#launch(sessionId, turnId, true);
  }

  /** Stops a running turn: the model stream is aborted and a running tool is told to stop. */
  async cancel(sessionId: string, reason: string): Promise<boolean> {
    const running = this.#running.get(sessionId);
    if (!running) return false;
    running.controller.abort(new TurnCancelled(reason));
    await running.done;
    return true;
  }

  async cancelAll(reason: string): Promise<void> {
    await Promise.all([...this.#running.keys()].map((id) => this.cancel(id, reason)));
  }

  /** Closes a paused turn without running its calls (cancel while waiting for a decision). */
  closePaused(sessionId: string, turnId: string, decidedBy: string): void {
    for (const approval of this.deps.approvals.forTurn(turnId)) {
      if (this.deps.approvals.decide(approval.id, "cancelled", decidedBy))
        this.deps.telemetry.approvalDecided(approval.id, "cancelled", decidedBy, Date.now() - approval.created_at);
    }
    const step = this.deps.sessions.getTurn(turnId).steps;
    this.#answers.remaining(sessionId, turnId, "cancelled", {
      code: "cancelled",
      message: "The user cancelled the turn before this call ran",
    });
    this.#end(sessionId, turnId, step, "cancelled");
  }

  /** Turns a previous worker left running: their open calls are answered as interrupted and the turn ends. */
  recoverInterrupted(): void {
    for (const turn of this.deps.sessions.runningTurns()) {
      this.#answers.remaining(turn.session_id, turn.id, "interrupted", {
        code: "interrupted",
        message: "agentd restarted while this call was pending",
      });
      this.#emit(turn.session_id, turn.id, "error", { code: "turn_interrupted", message: "The worker stopped during this turn" });
      this.#end(turn.session_id, turn.id, turn.steps, "interrupted");
    }
  }

  #launch(sessionId: string, turnId: string, resuming: boolean): void {
    const controller = new AbortController();
    const entry: RunningTurn = { turnId, controller, done: Promise.resolve() };
    this.#running.set(sessionId, entry);
    // A turn that fails past its own error handling (the store refusing even the failure's record)
    // is logged and counted; the turn stays "running" in the store and the next start recovers it.
    const fields = { session: sessionId, turn: turnId };
    entry.done = runInBackground(
      "agent.turn",
      () => this.#drive(sessionId, turnId, resuming, controller.signal),
      fields,
      this.deps.logger,
    ).done.then(() => {
      if (this.#running.get(sessionId) !== entry) return;
      this.#running.delete(sessionId);
      // Ended or paused: the session's sidecar is written out and nothing of it stays open.
      this.deps.channels.release(sessionId);
      this.deps.events.forget(sessionId);
    });
  }

  async #drive(sessionId: string, turnId: string, resuming: boolean, signal: AbortSignal): Promise<void> {
    let step = 0;
    try {
      const session = this.deps.sessions.get(sessionId);
      const history = this.deps.sessions.messages(sessionId).map((m) => m.body);
      step = this.deps.sessions.getTurn(turnId).steps;
      if (resuming && (await this.#runCalls(session, turnId, step, history, signal)) === "paused") return;
      for (;;) {
        if (step >= this.deps.agent.max_steps) return this.#end(sessionId, turnId, step, "max_steps");
        step++;
        this.deps.sessions.setTurnStatus(turnId, "running", step);
        const answer = await this.#modelStep(session, turnId, step, history, signal);
        if (answer.tool_calls === undefined) return this.#end(sessionId, turnId, step, "stop", { content: answer.content ?? "" });
        if ((await this.#runCalls(session, turnId, step, history, signal)) === "paused") return;
      }
    } catch (error) {
      if (signal.aborted) {
        const reason = signal.reason instanceof TurnCancelled ? signal.reason.message : "cancelled";
        this.#answers.remaining(sessionId, turnId, "cancelled", {
          code: "cancelled",
          message: "The turn was cancelled before this call ran",
        });
        return this.#end(sessionId, turnId, step, "cancelled", { cause: reason });
      }
      const status = (error as { status?: number }).status;
      this.deps.logger.warn("turn.failed", { session: sessionId, turn: turnId, step, error });
      this.#emit(sessionId, turnId, "error", {
        code: status ? "model_error" : "turn_failed",
        message: errorMessage(error),
        ...(status ? { status } : {}),
      });
      this.deps.channels.get(sessionId).sidecar?.write("error", { turn: turnId, step, error: errorMessage(error), status });
      this.#answers.remaining(sessionId, turnId, "error", { code: "turn_failed", message: "The turn failed before this call ran" });
      this.#end(sessionId, turnId, step, "error", { error: errorMessage(error) });
    }
  }

  async #modelStep(
    session: SessionRecord,
    turnId: string,
    step: number,
    history: ChatMessage[],
    signal: AbortSignal,
  ): Promise<ChatMessage> {
    const channel = this.deps.channels.get(session.id);
    const messages = [{ role: "system", content: this.deps.agent.system_prompt }, ...history] as ChatCompletionMessageParam[];
    const request = { model: session.model, messages, tools: this.deps.catalog.forModel, temperature: this.deps.agent.temperature };
    if (channel.sidecar) channel.note = requestSummary(request as never, this.deps.agent.debug.level);
    const traceparent = this.deps.telemetry.traceparent(turnId);
    const gathered = await streamModelStep(
      this.deps.client,
      request,
      {
        signal,
        headers: { ...(channel.sidecar ? { [SESSION_HEADER]: session.id } : {}), ...(traceparent ? { traceparent } : {}) },
      },
      (delta) => this.#emit(session.id, turnId, "text.delta", { step, delta }),
    );
    const message: ChatMessage = { role: "assistant", content: gathered.content || null };
    if (gathered.toolCalls.length > 0) {
      message.tool_calls = gathered.toolCalls.map((call) => ({
        id: call.id,
        type: "function",
        function: { name: call.name, arguments: call.arguments },
      }));
    }
    this.deps.sessions.addMessage(session.id, turnId, message);
    history.push(message);
    gathered.toolCalls.forEach((call, ordinal) => {
      const tool = this.deps.catalog.byName.get(call.name);
      this.deps.toolCalls.plan({
        sessionId: session.id,
        turnId,
        step,
        ordinal,
        callId: call.id,
        tool: call.name,
        scope: tool?.scope ?? null,
        arguments: redactSecrets(argumentValue(call.arguments)),
      });
    });
    return message;
  }

  /** Runs the step's calls still open, in order; stops at calls that need a decision. */
  async #runCalls(session: SessionRecord, turnId: string, step: number, history: ChatMessage[], signal: AbortSignal): Promise<StepResult> {
    const open = this.deps.toolCalls.unfinished(turnId);
    const argumentText = argumentsByCallId(history);
    const verdictContext: CallVerdictContext = {
      approvals: this.deps.approvals,
      approvalsConfig: this.deps.approvalsConfig,
      policy: { ...this.deps.approvalsConfig.policy, ...session.policy },
      grants: this.deps.approvals.grants(session.id),
    };
    const waiting: ToolCallRecord[] = [];
    for (const record of open) {
      if (signal.aborted) throw signal.reason;
      const tool = this.deps.catalog.byName.get(record.tool);
      if (!tool) {
        this.#answers.unrun(session.id, turnId, record, history, "error", {
          code: "unknown_tool",
          message: `There is no tool named ${record.tool}; available: ${[...this.deps.catalog.byName.keys()].join(", ")}`,
        });
        continue;
      }
      const parsed = parseToolArguments(tool, argumentText.get(record.call_id) ?? "");
      if (!parsed.ok) {
        this.#answers.unrun(session.id, turnId, record, history, "error", parsed.error);
        continue;
      }
      const command = commandLineOf(tool, parsed.args);
      // A call that already waited is judged by the user's answer; judging it again would re-read typed text.
      let escalation: string[] | undefined;
      try {
        escalation = record.status === "awaiting_approval" ? undefined : await this.#judge.judge(session.id, tool, parsed.args);
      } catch (error) {
        // Text bash would read otherwise than a card shows it: the model is told why and may write it plainly.
        if (!(error instanceof AmbiguousCommandError)) throw error;
        this.#answers.unrun(session.id, turnId, record, history, "error", { code: error.code, message: error.message });
        continue;
      }
      const { verdict, scope, reason } = callVerdict(record, tool, command, verdictContext, escalation);
      if (waiting.length > 0 || verdict === "ask") {
        // Once one call waits, later calls wait too, so the model's order is kept.
        const call = { tool, args: parsed.args, raw: parsed.raw, command, scope, reason, escalation };
        if (verdict === "ask" && record.status !== "awaiting_approval" && !(await this.#ask(session.id, turnId, record, history, call)))
          continue;
        waiting.push(record);
        continue;
      }
      if (verdict === "deny") {
        this.#answers.unrun(session.id, turnId, record, history, "denied", { code: "denied", message: deniedMessage(tool, reason) });
        continue;
      }
      // Read per call, not from `session`: a hop earlier in this turn may have switched the host.
      const targetName = tool.hostBound ? this.deps.sessions.get(session.id).target : LOCAL_TARGET;
      const approvedFor = record.approval_id ? this.deps.approvals.get(record.approval_id).target : null;
      if (tool.hostBound && approvedFor !== null && approvedFor !== targetName) {
        // The person allowed it on the host the card named; it runs there or not at all.
        this.#answers.unrun(session.id, turnId, record, history, "error", {
          code: "target_changed",
          message: `${tool.name} was approved to run on ${approvedFor}, but the session now runs on ${targetName}: it was not run; call it again to ask`,
        });
        continue;
      }
      const target = this.deps.target(targetName);
      this.deps.telemetry.toolStarted(turnId, record.id, tool.name, record.call_id);
      const result = await runToolCall(
        {
          recordId: record.id,
          callId: record.call_id,
          sessionId: session.id,
          tool,
          args: parsed.args,
          shownArgs: redactSecrets(parsed.raw),
          target,
          signal,
          // Only a bare sudo call allowed in the sudo scope starts without no_new_privs.
          ...(scope === "sudo" ? { privilegedArgv: await this.#judge.privilegedArgv(tool, parsed.args) } : {}),
        },
        {
          store: this.deps.toolCalls,
          logger: this.deps.logger,
          progressIntervalMs: this.deps.agent.progress_interval_ms,
          resultMaxBytes: this.deps.agent.tool_result_max_bytes,
        },
        this.#reporter(session.id, turnId),
      );
      if (result) {
        this.deps.telemetry.toolEnded(record.id, tool.name, result.outcome);
        this.#answers.toolMessage(session.id, turnId, history, record.call_id, result.content);
      }
      if (signal.aborted) throw signal.reason;
    }
    const pending = this.deps.approvals.forTurn(turnId).filter((a) => a.status === "pending");
    if (pending.length === 0) return "continue";
    this.deps.sessions.setTurnStatus(turnId, "awaiting_approval", step);
    this.deps.sessions.setState(session.id, "awaiting_approval");
    const approvals = pending.map((a) => ({
      approval_id: a.id,
      call_id: this.deps.toolCalls.get(a.tool_call_id).call_id,
      tool: a.tool,
      scope: a.scope,
      summary: a.summary,
    }));
    this.#emit(session.id, turnId, "approval_required", { step, approvals, decisions: ["allow_once", "allow_session", "deny"] });
    this.deps.channels.get(session.id).sidecar?.write("approval.required", { turn: turnId, step, approvals });
    return "paused";
  }

  /**
   * Records the question for a person. False when the session already has as many calls waiting as
   * allowed: the call is then answered at once with the error, and nothing is queued.
   */
  async #ask(sessionId: string, turnId: string, record: ToolCallRecord, history: ChatMessage[], call: AskedCall): Promise<boolean> {
    const { tool, command, scope, escalation } = call;
    const target = this.deps.sessions.get(sessionId).target;
    // Shown on the card word by word: a bare escalation allowed in the sudo scope is exec'd as these words.
    const argv = scope === "sudo" ? await this.#judge.privilegedArgv(tool, call.args) : undefined;
    const task = history.findLast((message) => message.role === "user")?.content;
    const request = approvalRequest({
      command,
      raw: call.raw,
      target,
      task: typeof task === "string" ? task : "",
      reasons: escalation,
      argv,
    });
    let approval: ApprovalRecord;
    try {
      approval = askPerson(this.#questions(), {
        sessionId,
        turnId,
        record,
        tool: tool.name,
        scope,
        summary: callSummary(tool, redactSecrets(call.raw), command),
        request,
        target,
        reason: call.reason,
        ...(escalation ? { escalation } : {}),
      });
    } catch (error) {
      if (!(error instanceof TooManyPendingApprovalsError)) throw error;
      this.#answers.unrun(sessionId, turnId, record, history, "error", { code: error.code, message: error.message });
      return false;
    }
    this.deps.telemetry.approvalRequested(turnId, record.id, tool.name, record.call_id, approval.id, scope);
    return true;
  }

  #questions(): ApprovalQuestionDeps {
    const { approvals, toolCalls, logger } = this.deps;
    return { approvals, toolCalls, logger, maxPending: this.deps.approvalsConfig.max_pending_per_session };
  }

  #end(sessionId: string, turnId: string, steps: number, reason: string, extra: Record<string, unknown> = {}): void {
    this.deps.sessions.endTurn(turnId, reason, steps, typeof extra.error === "string" ? extra.error : undefined);
    this.deps.telemetry.turnEnded(turnId, reason, steps);
    this.deps.sessions.setState(sessionId, "idle");
    this.#emit(sessionId, turnId, "turn.end", { reason, steps, ...extra });
    this.deps.channels.get(sessionId).sidecar?.write("turn.end", { turn: turnId, reason, steps, ...extra });
    // Idle sessions hold no file open: a worker with thousands of sessions must not run out of fds.
    if (!this.#running.has(sessionId)) this.deps.channels.release(sessionId);
    this.deps.logger.info("turn.end", { session: sessionId, turn: turnId, reason, steps });
  }

  #emit(sessionId: string, turnId: string, type: AgentEventType, data: Record<string, unknown>): void {
    this.deps.events.append(sessionId, turnId, type, data);
  }

  #reporter(sessionId: string, turnId: string): TurnReporter {
    return {
      event: (type, data) => this.#emit(sessionId, turnId, type, data),
      // At info level a result is kept to its start; full level keeps what the model got.
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
