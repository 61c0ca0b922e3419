import type { Logger } from "../core/log/index.ts";
import { redactSecrets } from "../core/redaction/index.ts";
import type { AgentConfig } from "../core/config/sections/agentConfig.ts";
import type { ApprovalsConfig } from "../core/config/sections/approvalsConfig.ts";
import { LOCAL_TARGET, type ToolDefinition, type ToolTarget } from "../core/tools/toolDefinition.ts";
import type { AgentTelemetry } from "./agentTelemetry.ts";
import { decideCallPolicy } from "./approvalPolicy.ts";
import { askPerson } from "./approvalQuestion.ts";
import { approvalRequest } from "./approvalRequest.ts";
import { TooManyPendingApprovalsError, type ApprovalRecord, type ApprovalStore } from "./approvalStore.ts";
import { spanCall, type CallRecorder, type CallSite } from "./callRecorder.ts";
import { callSummary, commandLineOf } from "./callSubject.ts";
import { callVerdict, deniedMessage, type CallVerdict } from "./callVerdict.ts";
import { splitTarget } from "./directCallTarget.ts";
import type { SessionStore } from "./sessionStore.ts";
import { AmbiguousCommandError } from "./shell/ambiguousText.ts";
import { CommandJudge, type WrittenFiles } from "./shell/commandJudge.ts";
import { parseToolArguments, type ToolErrorBody } from "./toolArguments.ts";
import type { ToolCatalog } from "./toolCatalog.ts";
import type { ToolCallOutcome, ToolCallStore } from "./toolCallStore.ts";
import { runToolCall } from "./toolRunner.ts";

export interface ToolCallPipelineDeps {
  sessions: SessionStore;
  toolCalls: ToolCallStore;
  approvals: ApprovalStore;
  catalog: ToolCatalog;
  agent: AgentConfig;
  approvalsConfig: ApprovalsConfig;
  logger: Logger;
  telemetry: AgentTelemetry;
  recorder: CallRecorder;
  /** What each session wrote, for the text check (kept across restarts). */
  writtenFiles?: WrittenFiles;
}

/** A call as judged: what it would run and whether it may. */
export interface JudgedCall extends CallVerdict {
  tool: ToolDefinition;
  args: unknown;
  /** The arguments as given (unredacted, for the approval card). */
  raw: unknown;
  command: string | undefined;
  escalation: string[] | undefined;
  /** The host the call's own arguments name (a direct call's `target`); undefined: the session's host. */
  target: string | undefined;
  /** Allowed in the sudo scope: a bare escalation then starts without no_new_privs. */
  privileged: boolean;
}

/**
 * The one path of a tool call, for the agent loop and MCP's direct calls alike: judge (the tool,
 * its arguments, the text check, the policy) → ask a person → run → record, with the span, the
 * metric and every record written by the same code. Callers keep only what differs: where the
 * arguments come from, the order calls wait in, and how a call that waits is resumed.
 */
export class ToolCallPipeline {
  readonly #judge: CommandJudge;

  constructor(private readonly deps: ToolCallPipelineDeps) {
    this.#judge = new CommandJudge(deps.writtenFiles);
  }

  get recorder(): CallRecorder {
    return this.deps.recorder;
  }

  /**
   * Judges a planned call. Undefined when it was answered at once (unknown tool, invalid
   * arguments, a command bash could read otherwise than a card shows it). `targetInArguments`:
   * a host-bound tool's `target` argument names its host (direct calls), which the hop scope also judges.
   */
  async judge(site: CallSite, argumentText: string, options: { targetInArguments?: boolean } = {}): Promise<JudgedCall | undefined> {
    const { record } = site;
    const tool = this.deps.catalog.byName.get(record.tool);
    if (!tool) {
      const known = [...this.deps.catalog.byName.keys()].join(", ");
      this.unrun(site, "error", { code: "unknown_tool", message: `There is no tool named ${record.tool}; available: ${known}` });
      return undefined;
    }
    const split = options.targetInArguments ? splitTarget(tool, argumentText) : undefined;
    const parsed = parseToolArguments(tool, split ? split.rest : argumentText);
    if (!parsed.ok) {
      this.unrun(site, "error", parsed.error);
      return undefined;
    }
    const command = commandLineOf(tool, parsed.args);
    const waited = record.status === "awaiting_approval";
    // A call that already waited is judged by the user's answer; judging it again would re-read typed text.
    let escalation: string[] | undefined;
    try {
      escalation = waited ? undefined : await this.#judge.judge(site.sessionId, tool, parsed.args);
    } catch (error) {
      // Text bash would read otherwise than a card shows it: the caller is told why and may write it plainly.
      if (!(error instanceof AmbiguousCommandError)) throw error;
      this.unrun(site, "error", { code: error.code, message: error.message });
      return undefined;
    }
    const session = this.deps.sessions.get(site.sessionId);
    const policy = { ...this.deps.approvalsConfig.policy, ...session.policy };
    const grants = this.deps.approvals.grants(session.id);
    const context = { approvals: this.deps.approvals, approvalsConfig: this.deps.approvalsConfig, policy, grants };
    const decided = callVerdict(record, tool, command, context, escalation);
    const privileged = decided.verdict === "allow" && decided.scope === "sudo";
    const target = split?.target;
    // A call aimed at a hop must also pass the hop scope (the agent asks when its session switches).
    const verdict =
      target === undefined || target === LOCAL_TARGET || waited || decided.verdict !== "allow"
        ? decided
        : decideCallPolicy({ scope: "hop", policy, rules: [], grants });
    return { ...verdict, tool, args: parsed.args, raw: parsed.raw, command, escalation, target, privileged };
  }

  /**
   * Asks a person about a judged call. Undefined when the session already has as many calls
   * waiting as allowed: the call is then answered at once with the error, and nothing is queued.
   */
  async ask(site: CallSite, call: JudgedCall, task: string): Promise<ApprovalRecord | undefined> {
    const { tool, command, scope, escalation } = call;
    const target = call.target ?? this.deps.sessions.get(site.sessionId).target;
    // Shown on the card word by word: a bare escalation allowed in the sudo scope is exec'd as these words.
    const argv = scope === "sudo" ? await this.#judge.privilegedArgv(tool, call.args) : undefined;
    const request = approvalRequest({ command, raw: call.raw, target, task, reasons: escalation, argv });
    const summary = callSummary(tool, redactSecrets(call.raw), command);
    const { approvals, toolCalls, logger } = this.deps;
    let approval: ApprovalRecord;
    try {
      approval = askPerson(
        { approvals, toolCalls, logger, maxPending: this.deps.approvalsConfig.max_pending_per_session },
        {
          sessionId: site.sessionId,
          turnId: site.turnId,
          record: site.record,
          tool: tool.name,
          scope,
          // A direct call names its host; the agent's calls run where their session is.
          summary: call.target === undefined || call.target === LOCAL_TARGET ? summary : `${summary} on ${target}`,
          request,
          target,
          reason: call.reason,
          ...(escalation ? { escalation } : {}),
        },
      );
    } catch (error) {
      if (!(error instanceof TooManyPendingApprovalsError)) throw error;
      this.unrun(site, "error", { code: error.code, message: error.message });
      return undefined;
    }
    this.deps.telemetry.approvalRequested(spanCall(site), approval.id, scope);
    return approval;
  }

  /** Answers a refused call. */
  deny(site: CallSite, call: JudgedCall): void {
    this.unrun(site, "denied", { code: "denied", message: deniedMessage(call.tool, call.reason) });
  }

  /** Runs an allowed call on its target, unless it already ran (nothing runs twice). */
  async run(
    site: CallSite,
    call: JudgedCall,
    target: ToolTarget,
    options: { signal: AbortSignal; progress?: (message: string, data: Record<string, unknown>) => void },
  ): Promise<void> {
    const { record } = site;
    const { recorder } = this.deps;
    // Only a bare sudo call allowed in the sudo scope starts without no_new_privs.
    const privilegedArgv = call.privileged ? await this.#judge.privilegedArgv(call.tool, call.args) : undefined;
    if (!recorder.started(site, { target: target.name, shownArgs: redactSecrets(call.raw), timeoutMs: call.tool.timeoutMs })) return;
    const result = await runToolCall(
      {
        // agentd's monitor re-reads a privileged call's approval by this id.
        recordId: record.id,
        callId: record.call_id,
        sessionId: site.sessionId,
        tool: call.tool,
        args: call.args,
        target,
        signal: options.signal,
        ...(privilegedArgv ? { privilegedArgv } : {}),
      },
      {
        progressIntervalMs: this.deps.agent.progress_interval_ms,
        progress: (message, fields) => {
          recorder.progress(site, message, fields);
          options.progress?.(message, { call_id: record.call_id, tool: record.tool, message, ...fields });
        },
      },
    );
    recorder.ended(site, result);
  }

  /** Records and answers a call that is not run. */
  unrun(site: CallSite, outcome: ToolCallOutcome, error: ToolErrorBody): void {
    this.deps.recorder.unrun(site, outcome, error);
  }

  /** The session is idle: the text check drops what it keeps for it (see CommandJudge.forget). */
  forget(sessionId: string): void {
    this.#judge.forget(sessionId);
  }

  /** Sessions whose text-check state is held in memory (for tests and the worker's size checks). */
  get judgedSessions(): number {
    return this.#judge.size;
  }
}
