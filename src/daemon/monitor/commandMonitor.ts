import { constants, fstatSync, lstatSync, openSync, closeSync, readFileSync } from "node:fs";
import type { PtyConfig } from "../../core/config/sections/ptyConfig.ts";
import type { ApprovalsConfig } from "../../core/config/sections/approvalsConfig.ts";
import { AgentdError, errorMessage } from "../../core/errors/index.ts";
import type { Logger } from "../../core/log/index.ts";
import { type CommandCgroups, type CommandIdentity, runCommand } from "../../core/process/index.ts";
import type { Database } from "../../core/store/index.ts";
import { sameToken } from "../../http/requestToken.ts";
import { privilegedArgvOf } from "../../agent/shell/privilegedArgv.ts";
import { LocalLauncher, signalProcessGroup } from "../../pty/commandLauncher.ts";
import { reapChild } from "../../pty/childReap.ts";
import { SIGKILL } from "../../pty/libcBindings.ts";
import { escalationRefusal, readEscalationFacts, recordedCommand } from "./escalationApproval.ts";
import { type MonitorReply, type MonitorRequest, parseEnvelope, type StartRequest } from "./monitorProtocol.ts";

export interface CommandMonitorOptions {
  identity: CommandIdentity;
  /** The worker's uid: the only owner of a terminal the monitor attaches a command to. */
  workerUid: number;
  pty: PtyConfig;
  approvals: ApprovalsConfig;
  cgroups?: CommandCgroups;
  db: Database;
  /** The config file the supervisor pinned at start; the worker reads it through the monitor. */
  configPath?: string;
  /** The API token: a privileged terminal needs a request that carried it. */
  token?: string;
  /** Why the gate does not hold, as of now (the data dir is restricted after start): what the worker reports. */
  gateProblems: () => readonly string[];
  /** agentd's own paths (data dir, config, binary, its processes): out of the file tools' reach. */
  ownPaths: () => readonly string[];
  /** The worker's reload request (`agentd reload`, /api/admin/reload): as SIGHUP to the supervisor. */
  reload: () => void;
  log: Logger;
}

const PTS = /^\/dev\/pts\/\d+$/;
const REAP_SWEEP_MS = 1000;

/**
 * The privileged half of agentd started as root (OpenSSH's monitor, in small): it starts, signals
 * and reaps the worker's commands as the command user, runs a sudo-approved call as its target user
 * only after reading the approval from the store itself, opens a root terminal only for a request
 * that carried the token, and does the file tools' and status commands' work as the command user.
 * It acts only on processes it started for the current worker.
 */
export class CommandMonitor {
  readonly #launcher: LocalLauncher;
  readonly #sessions = new Map<string, number>();
  readonly #pids = new Set<number>();
  readonly #escalated = new Set<string>();
  readonly #runs = new Map<string, AbortController>();
  readonly #unreaped = new Set<number>();
  #sweep: ReturnType<typeof setInterval> | undefined;
  #approvals: ApprovalsConfig;

  constructor(private readonly options: CommandMonitorOptions) {
    this.#approvals = options.approvals;
    this.#launcher = new LocalLauncher({
      identity: options.identity,
      config: options.pty,
      logger: options.log,
      ...(options.cgroups ? { cgroups: options.cgroups } : {}),
    });
  }

  /** A reload: new sessions get the new limits, escalations follow the new sudo policy. */
  reload(pty: PtyConfig, approvals: ApprovalsConfig): void {
    this.#launcher.config = pty;
    this.#approvals = approvals;
  }

  /** One message from the worker, answered; never throws. */
  async handle(message: unknown): Promise<MonitorReply | undefined> {
    const envelope = parseEnvelope(message);
    if ("invalid" in envelope) {
      this.options.log.warn("monitor.request_invalid", { problem: envelope.invalid });
      return envelope.id === undefined ? undefined : failure(envelope.id, "monitor_bad_request", envelope.invalid);
    }
    try {
      return { id: envelope.id, ok: true, value: await this.#serve(envelope.request) };
    } catch (error) {
      if (error instanceof AgentdError) return failure(envelope.id, error.code, error.message, error.details);
      this.options.log.error("monitor.request_failed", { op: envelope.request.op, error });
      return failure(envelope.id, "monitor_failed", `The monitor could not ${envelope.request.op}: ${errorMessage(error)}`);
    }
  }

  /** The worker is gone: what it started ends with it, as its terminals would have. Returns the process groups ended. */
  async workerGone(): Promise<number[]> {
    for (const run of this.#runs.values()) run.abort();
    this.#runs.clear();
    const sessions = [...this.#sessions];
    this.#sessions.clear();
    await Promise.all(
      sessions.map(async ([sessionId, pid]) => {
        signalProcessGroup(pid, SIGKILL);
        await this.#launcher.endSession(sessionId);
        this.#forget(pid);
      }),
    );
    return sessions.map(([, pid]) => pid);
  }

  /** agentd stops: whatever a command left running ends with it, as a unit's leftovers do under systemd. */
  async close(): Promise<void> {
    clearInterval(this.#sweep);
    await this.options.cgroups?.closeAll();
  }

  async #serve(request: MonitorRequest): Promise<unknown> {
    switch (request.op) {
      case "hello":
        return { identity: { ...this.options.identity, problems: this.options.gateProblems() } };
      case "config":
        return this.options.configPath ? { path: this.options.configPath, text: readFileSync(this.options.configPath, "utf8") } : {};
      case "reload":
        this.options.reload();
        return {};
      case "start":
        return { pid: await this.#start(request) };
      case "signal":
        return { alive: signalProcessGroup(this.#own(request.pid), request.signal) };
      case "reap": {
        // The pid stays the session's until it ends: its group may outlive its leader.
        const status = reapChild(this.#own(request.pid));
        return status ? { status } : {};
      }
      case "end_session": {
        const pid = this.#sessions.get(request.sessionId);
        await this.#launcher.endSession(request.sessionId);
        this.#sessions.delete(request.sessionId);
        if (pid !== undefined) this.#forget(pid);
        return {};
      }
      case "file_read":
        return (await import("./monitorFiles.ts")).readAsCommandUser(request.args, this.options.ownPaths(), this.options.identity);
      case "file_write":
        return (await import("./monitorFiles.ts")).writeAsCommandUser(request.args, this.options.ownPaths(), this.options.identity);
      case "run":
        return this.#run(request);
      case "cancel_run":
        this.#runs.get(request.runId)?.abort();
        return {};
    }
  }

  async #start(request: StartRequest): Promise<number> {
    if (this.#sessions.has(request.sessionId))
      throw new AgentdError("monitor_refused", `Cannot start session ${request.sessionId}: it is running already`);
    if (request.kind === "escalation") await this.#checkEscalation(request);
    if (request.kind === "terminal" && !(this.options.token && request.credential && sameToken(request.credential, this.options.token))) {
      this.options.log.warn("monitor.refused", { kind: "terminal", session_id: request.sessionId, reason: "no token" });
      throw new AgentdError("terminal_needs_token", "A privileged terminal needs a request that carries the API token");
    }
    const fd = this.#openTerminal(request.tty);
    try {
      const pid = await this.#launcher.start({ ...request, tty: { fd, path: request.tty } });
      this.#sessions.set(request.sessionId, pid);
      this.#pids.add(pid);
      if (request.call && request.kind === "escalation") this.#escalated.add(request.call.recordId);
      this.options.log.info("monitor.start", { session_id: request.sessionId, kind: request.kind, pid, record_id: request.call?.recordId });
      return pid;
    } finally {
      closeSync(fd);
    }
  }

  async #checkEscalation(request: StartRequest): Promise<void> {
    const call = request.call;
    const refuse = (reason: string) => {
      this.options.log.warn("monitor.refused", { kind: "escalation", session_id: request.sessionId, record_id: call?.recordId, reason });
      return new AgentdError("escalation_not_approved", `Cannot run this privileged call: ${reason}; nothing was run`);
    };
    if (!call) throw refuse("it names no tool call");
    if (this.#escalated.has(call.recordId)) throw refuse(`tool call ${call.recordId} has run already`);
    const facts = readEscalationFacts(this.options.db, call.recordId, call.sessionId);
    const { cmd } = recordedCommand(facts);
    const recomputed = cmd === undefined ? undefined : await privilegedArgvOf(cmd);
    const reason = escalationRefusal(
      facts,
      { ...call, words: request.words, ...(request.cwd === undefined ? {} : { cwd: request.cwd }) },
      recomputed,
      this.#approvals.policy.sudo,
    );
    if (reason) throw refuse(reason);
  }

  /** The worker's terminal, opened again here: a pty of the worker's own, never anyone else's terminal. */
  #openTerminal(path: string): number {
    if (!PTS.test(path)) throw new AgentdError("monitor_refused", `Cannot attach a command to ${path}: not a /dev/pts terminal`);
    const before = lstatSync(path);
    if (!before.isCharacterDevice() || before.uid !== this.options.workerUid)
      throw new AgentdError("monitor_refused", `Cannot attach a command to ${path}: it is not the worker's terminal (uid ${before.uid})`);
    // Node's openSync sets O_CLOEXEC itself: no other child inherits the terminal.
    const fd = openSync(path, constants.O_RDWR | constants.O_NOCTTY);
    const after = fstatSync(fd);
    if (after.rdev !== before.rdev || after.uid !== this.options.workerUid) {
      closeSync(fd);
      throw new AgentdError("monitor_refused", `Cannot attach a command to ${path}: it changed while it was opened`);
    }
    return fd;
  }

  #own(pid: number): number {
    if (!this.#pids.has(pid) && !this.#unreaped.has(pid))
      throw new AgentdError("monitor_refused", `Process ${pid} is not one the monitor started for this worker`);
    return pid;
  }

  /** A session's leader not reaped yet is reaped by a sweep, so no zombie is left behind. */
  #forget(pid: number): void {
    if (!this.#pids.delete(pid)) return;
    if (reapChild(pid)) return;
    this.#unreaped.add(pid);
    this.#sweep ??= setInterval(() => {
      for (const left of this.#unreaped) if (reapChild(left)) this.#unreaped.delete(left);
      if (this.#unreaped.size === 0) {
        clearInterval(this.#sweep);
        this.#sweep = undefined;
      }
    }, REAP_SWEEP_MS);
  }

  async #run(request: Extract<MonitorRequest, { op: "run" }>) {
    const controller = new AbortController();
    this.#runs.set(request.runId, controller);
    try {
      return await runCommand({
        argv: request.argv,
        timeoutMs: request.timeoutMs,
        signal: controller.signal,
        confined: true,
        ...(request.maxOutputBytes === undefined ? {} : { maxOutputBytes: request.maxOutputBytes }),
      });
    } finally {
      this.#runs.delete(request.runId);
    }
  }
}

function failure(id: number, code: string, message: string, details?: Record<string, unknown>): MonitorReply {
  return { id, ok: false, error: { code, message, ...(details ? { details } : {}) } };
}
