import { LOCAL_TARGET, type ToolTarget } from "../core/tools/toolDefinition.ts";
import type { ModelClient } from "./modelClient.ts";
import { errorMessage } from "../core/errors/index.ts";
import type { Logger } from "../core/log/index.ts";
import type { AgentConfig } from "../core/config/sections/agentConfig.ts";
import type { ApprovalStore } from "./approvalStore.ts";
import type { CallSite } from "./callRecorder.ts";
import { modelStep } from "./modelStep.ts";
import { repeatedCall, repeatedCallMessage } from "./repeatedCall.ts";
import { runInBackground } from "../core/process/index.ts";
import type { SessionChannels } from "./sessionChannels.ts";
import type { AgentEventType, SessionEvents } from "./sessionEvents.ts";
import type { ChatMessage, SessionRecord, SessionStore } from "./sessionStore.ts";
import { argumentsByCallId } from "./toolArguments.ts";
import type { ToolCatalog } from "./toolCatalog.ts";
import type { ToolCallStore } from "./toolCallStore.ts";
import type { ToolCallPipeline } from "./toolCallPipeline.ts";
import type { AgentTelemetry } from "./agentTelemetry.ts";

export interface TurnEngineDeps {
  sessions: SessionStore;
  events: SessionEvents;
  toolCalls: ToolCallStore;
  approvals: ApprovalStore;
  catalog: ToolCatalog;
  target(name: string): ToolTarget;
  /** The agent's one model client. */
  client: ModelClient;
  channels: SessionChannels;
  agent: AgentConfig;
  logger: Logger;
  telemetry: AgentTelemetry;
  /** Judges, asks about, runs and records each call (shared with MCP's direct calls). */
  pipeline: ToolCallPipeline;
}

interface RunningTurn {
  turnId: string;
  controller: AbortController;
  done: Promise<void>;
}

type StepResult = "continue" | "paused";

class TurnCancelled extends Error {}

/**
 * Runs turns: model step, tool calls in the order the model listed them, pauses for approval,
 * and resumes a paused turn once its approvals are decided. One turn per session at a time.
 */
export class TurnEngine {
  readonly #running = new Map<string, RunningTurn>();
  /** Turns whose drive stopped without ending them (the store refused even the failure's record: a full disk), by session. */
  readonly #stranded = new Map<string, string>();

  constructor(private readonly deps: TurnEngineDeps) {}

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

  /**
   * Ends a turn whose drive stopped without ending it (the store refused even the failure's record,
   * as on a full disk): its open calls are answered as failed and the session is idle again. While
   * the store still refuses, its error (507 disk_full) goes to the caller. True when one was ended.
   */
  settleStranded(sessionId: string): boolean {
    const turnId = this.#stranded.get(sessionId);
    if (turnId === undefined || this.#running.has(sessionId)) return false;
    const step = this.deps.sessions.getTurn(turnId).steps;
    this.deps.pipeline.recorder.remaining(sessionId, turnId, "error", {
      code: "turn_failed",
      message: "The turn failed before this call ran",
    });
    const message = "The turn failed while the store refused writes (a full disk); it is ended now";
    this.#emit(sessionId, turnId, "error", { code: "turn_failed", message });
    this.#end(sessionId, turnId, step, "error", { error: message });
    this.#stranded.delete(sessionId);
    return true;
  }

  /** Closes a paused turn without running its calls (cancel while waiting for a decision). */
  closePaused(sessionId: string, turnId: string, decidedBy: string): void {
    for (const approval of this.deps.approvals.forTurn(turnId)) {
      if (this.deps.approvals.decide(approval.id, "cancelled", decidedBy))
        this.deps.telemetry.approvalDecided(approval.id, "cancelled", decidedBy, Date.now() - approval.created_at);
    }
    const step = this.deps.sessions.getTurn(turnId).steps;
    this.deps.pipeline.recorder.remaining(sessionId, turnId, "cancelled", {
      code: "cancelled",
      message: "The user cancelled the turn before this call ran",
    });
    this.#end(sessionId, turnId, step, "cancelled");
  }

  /** Turns a previous worker left running: their open calls are answered as interrupted and the turn ends. */
  recoverInterrupted(): void {
    for (const turn of this.deps.sessions.runningTurns()) {
      this.deps.pipeline.recorder.remaining(turn.session_id, turn.id, "interrupted", {
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
      // Still "running" in the store with nothing driving it: ended by settleStranded once the store takes writes.
      if (this.deps.sessions.getTurn(turnId).status === "running") this.#stranded.set(sessionId, turnId);
      // Ended or paused: the session's sidecar is written out and nothing of it stays open.
      this.deps.channels.release(sessionId);
      this.deps.events.forget(sessionId);
      this.deps.pipeline.forget(sessionId);
    });
  }

  async #drive(sessionId: string, turnId: string, resuming: boolean, signal: AbortSignal): Promise<void> {
    let step = 0;
    try {
      const session = this.deps.sessions.get(sessionId);
      const stored = this.deps.sessions.messages(sessionId);
      const history = stored.map((m) => m.body);
      // The turn's own messages start here (history grows as the turn goes on).
      const turnStart = Math.max(
        0,
        stored.findIndex((m) => m.turn_id === turnId),
      );
      step = this.deps.sessions.getTurn(turnId).steps;
      if (resuming && (await this.#runCalls(session, turnId, step, history, signal)) === "paused") return;
      for (;;) {
        const repeat = repeatedCall(history.slice(turnStart), this.deps.agent.max_repeated_calls);
        if (repeat) {
          // The model is looping: another step would most likely make the same call again.
          this.deps.logger.warn("turn.repeated_call", { session: sessionId, turn: turnId, tool: repeat.tool, times: repeat.times });
          return this.#end(sessionId, turnId, step, "repeated_call", { error: repeatedCallMessage(repeat), tool: repeat.tool });
        }
        if (step >= this.deps.agent.max_steps) return this.#end(sessionId, turnId, step, "max_steps");
        step++;
        this.deps.sessions.setTurnStatus(turnId, "running", step);
        const answer = await modelStep(this.deps, session, turnId, step, history, signal);
        if (answer.tool_calls === undefined) return this.#end(sessionId, turnId, step, "stop", { content: answer.content ?? "" });
        if ((await this.#runCalls(session, turnId, step, history, signal)) === "paused") return;
      }
    } catch (error) {
      if (signal.aborted) {
        const reason = signal.reason instanceof TurnCancelled ? signal.reason.message : "cancelled";
        this.deps.pipeline.recorder.remaining(sessionId, turnId, "cancelled", {
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
      this.deps.pipeline.recorder.remaining(sessionId, turnId, "error", {
        code: "turn_failed",
        message: "The turn failed before this call ran",
      });
      this.#end(sessionId, turnId, step, "error", { error: errorMessage(error) });
    }
  }

  /** Runs the step's calls still open, in order; stops at calls that need a decision. */
  async #runCalls(session: SessionRecord, turnId: string, step: number, history: ChatMessage[], signal: AbortSignal): Promise<StepResult> {
    const { pipeline } = this.deps;
    const argumentText = argumentsByCallId(history);
    const task = history.findLast((message) => message.role === "user")?.content;
    let waiting = false;
    for (const record of this.deps.toolCalls.unfinished(turnId)) {
      if (signal.aborted) throw signal.reason;
      const site: CallSite = { sessionId: session.id, turnId, record, history, via: "agent" };
      const call = await pipeline.judge(site, argumentText.get(record.call_id) ?? "");
      if (!call) continue;
      if (waiting || call.verdict === "ask") {
        // Once one call waits, later calls wait too, so the model's order is kept.
        const question = call.verdict === "ask" && record.status !== "awaiting_approval";
        if (!question || (await pipeline.ask(site, call, typeof task === "string" ? task : ""))) waiting = true;
        continue;
      }
      if (call.verdict === "deny") {
        pipeline.deny(site, call);
        continue;
      }
      // Read per call, not from `session`: a hop earlier in this turn may have switched the host.
      const targetName = call.tool.hostBound ? this.deps.sessions.get(session.id).target : LOCAL_TARGET;
      const approvedFor = record.approval_id ? this.deps.approvals.get(record.approval_id).target : null;
      if (call.tool.hostBound && approvedFor !== null && approvedFor !== targetName) {
        // The person allowed it on the host the card named; it runs there or not at all.
        pipeline.unrun(site, "error", {
          code: "target_changed",
          message: `${call.tool.name} was approved to run on ${approvedFor}, but the session now runs on ${targetName}: it was not run; call it again to ask`,
        });
        continue;
      }
      await pipeline.run(site, call, this.deps.target(targetName), { signal });
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
    pipeline.recorder.approvalRequired(session.id, turnId, step, approvals);
    return "paused";
  }

  #end(sessionId: string, turnId: string, steps: number, reason: string, extra: Record<string, unknown> = {}): void {
    this.deps.sessions.endTurn(turnId, reason, steps, typeof extra.error === "string" ? extra.error : undefined);
    this.deps.telemetry.turnEnded(turnId, reason, steps);
    this.deps.sessions.setState(sessionId, "idle");
    this.#emit(sessionId, turnId, "turn.end", { reason, steps, ...extra });
    this.deps.channels.get(sessionId).sidecar?.write("turn.end", { turn: turnId, reason, steps, ...extra });
    // Idle sessions hold no file open: a worker with thousands of sessions must not run out of fds.
    if (!this.#running.has(sessionId)) {
      this.deps.channels.release(sessionId);
      this.deps.pipeline.forget(sessionId);
    }
    this.deps.logger.info("turn.end", { session: sessionId, turn: turnId, reason, steps });
  }

  #emit(sessionId: string, turnId: string, type: AgentEventType, data: Record<string, unknown>): void {
    this.deps.events.append(sessionId, turnId, type, data);
  }
}
