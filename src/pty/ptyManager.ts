import { randomUUID } from "node:crypto";
import { statSync } from "node:fs";
import { join } from "node:path";
import { asDiskFull } from "../core/errors/index.ts";
import type { HealthCheck } from "../core/health/index.ts";
import { createLogger, type Logger } from "../core/log/index.ts";
import { redactText } from "../core/redaction/index.ts";
import { type CommandIdentity, runInBackground } from "../core/process/index.ts";
import type { CommandCgroups } from "../core/process/cgroups/index.ts";
import { EpollLoop } from "./epollLoop.ts";
import { chooseEviction } from "./evictionPolicy.ts";
import type { PtyConfig } from "../core/config/sections/ptyConfig.ts";
import { PtyError } from "./ptyErrors.ts";
import type { CloseSessionArgs, ExecCommandArgs, PtyCloseResult, PtyCommandResult, PtySessionInfo, WriteStdinArgs } from "./ptySchemas.ts";
import { PtySession } from "./ptySession.ts";
import { PtyProcess } from "./ptyProcess.ts";
import { renderOutput } from "./renderOutput.ts";
import {
  DEFAULT_COLS,
  DEFAULT_MAX_OUTPUT_TOKENS,
  DEFAULT_ROWS,
  EXEC_YIELD,
  STDIN_YIELD,
  childEnv,
  clampYield,
  resolveShell,
  shellArgv,
} from "./spawnRequest.ts";
import { ToolOutputStore } from "./toolOutputStore.ts";

import { PTY_GROUPS_DIR, PtyGroupRegistry } from "./ptyGroupRegistry.ts";
import { type CommandLauncher, type LaunchRequest, LocalLauncher } from "./commandLauncher.ts";
import { foregroundReader } from "./foregroundReader.ts";
import type { InputReader } from "../core/tools/toolDefinition.ts";

export interface PtyManagerOptions {
  dataDir: string;
  config: PtyConfig;
  logger?: Logger;
  /** Variables the config reads secrets from (`{env:NAME}`): never given to a command. */
  withheldEnv?: readonly string[];
  /** The umask commands run with (the operator's; agentd's own is 077). */
  childUmask?: number;
  /**
   * Who commands run as (resolveCommandIdentity). Without one they run as agentd's own user, as in
   * tests and `agentd doctor`'s scratch manager; the worker always passes the resolved one.
   */
  identity?: CommandIdentity;
  /** Each session's own cgroup; without it, rlimits stand in (commandLimits). */
  cgroups?: CommandCgroups;
  /** Who starts the commands; default: this process (LocalLauncher with `identity` and `cgroups`). */
  launcher?: CommandLauncher;
}

const UNGUARDED: CommandIdentity = { mode: "unguarded", problems: [] };

export interface ExecOptions {
  /** Approved in the sudo scope: started without no_new_privs, so setuid programs work. */
  privileged?: boolean;
  /** With `privileged`: the bare escalation's words, exec'd without a shell (privilegedSpawn). */
  argv?: readonly string[];
  /** With `argv`: the tool call a person approved, which a monitor reads again before it runs it. */
  call?: { recordId: string; sessionId: string };
  /** A person's privileged terminal: the API token the request carried. */
  credential?: string;
}

interface ReadOptions {
  max_output_tokens?: number;
  strip_ansi?: boolean;
}

const encoder = new TextEncoder();

/**
 * A sudo-approved call runs the command the person saw and nothing around it: the configured shell
 * (not one the model named), no login profile (files the agent can write), no extra environment
 * (PATH, BASH_ENV…): none of them is shown on the approval.
 */
function exactlyAsShown(args: ExecCommandArgs): ExecCommandArgs {
  const { shell: _shell, env: _env, ...shown } = args;
  return { ...shown, login: false };
}

/** Owns every PTY session of the daemon: starts, feeds, reads, limits, reaps and closes them. */
export class PtyManager {
  private readonly config: PtyConfig;
  private readonly log: Logger;
  private readonly outputStore: ToolOutputStore;
  private readonly sessions = new Map<string, PtySession>();
  // Closed sessions whose process outlived SIGKILL's grace (stuck in the kernel): reaped by the sweep.
  private readonly lingering = new Set<PtySession>();
  private readonly sweepTimer: ReturnType<typeof setInterval>;
  private epoll: EpollLoop | undefined;
  private closing = false;
  private readonly groups: PtyGroupRegistry;
  private readonly withheldEnv: readonly string[];
  private readonly childUmask: number | undefined;
  private readonly launcher: CommandLauncher;
  /**
   * Slots taken by opens that have not started their session yet (waiting for an evicted session to
   * end). Taken synchronously, before any await, so concurrent opens can never overshoot the limit.
   */
  private reservedSlots = 0;
  // Sessions started without no_new_privs: what is typed into them runs with raised privileges.
  private readonly privileged = new Set<string>();

  constructor(options: PtyManagerOptions) {
    this.config = options.config;
    this.withheldEnv = options.withheldEnv ?? [];
    this.childUmask = options.childUmask;
    this.log = options.logger ?? createLogger("pty");
    this.launcher =
      options.launcher ??
      new LocalLauncher({
        identity: options.identity ?? UNGUARDED,
        config: options.config,
        logger: this.log,
        ...(options.cgroups ? { cgroups: options.cgroups } : {}),
      });
    this.groups = new PtyGroupRegistry(join(options.dataDir, PTY_GROUPS_DIR));
    this.outputStore = new ToolOutputStore(join(options.dataDir, "tool-output"), {
      maxBytes: options.config.tool_output_max_bytes,
      maxAgeMs: options.config.tool_output_max_age_s * 1000,
    });
    this.launcher.watchExits?.((pid) => this.processEnded(pid));
    const sweepMs = Math.min(1000, options.config.idle_timeout_s * 250);
    this.sweepTimer = setInterval(() => runInBackground("pty.sweep", () => this.sweep(), {}, this.log), sweepMs);
    this.sweepTimer.unref();
    runInBackground("pty.prune_output", () => this.outputStore.prune(), {}, this.log);
  }

  async exec(requested: ExecCommandArgs, signal?: AbortSignal, options: ExecOptions = {}): Promise<PtyCommandResult> {
    this.assertOpen();
    const started = performance.now();
    const args = options.privileged ? exactlyAsShown(requested) : requested;
    if (args.workdir !== undefined && !isDirectory(args.workdir)) {
      throw new PtyError("pty_bad_workdir", `Working directory ${args.workdir} does not exist or is not a directory`);
    }
    const shell = resolveShell(args.shell, this.config.shell, process.env.SHELL);
    const privileged = options.privileged ?? false;
    const { session, warning } = await this.start(args, shell, options);
    if (privileged) this.privileged.add(session.id);
    this.log.info("pty.open", {
      session_id: session.id,
      pid: session.pid,
      tty: session.ttyName,
      cmd: redactText(args.cmd),
      shell,
      no_new_privs: !privileged,
    });
    const yieldMs = clampYield(args.yield_time_ms, EXEC_YIELD);
    await session.waitUntil(() => !session.running, Date.now() + yieldMs, signal);
    return this.collect(session, args, started, warning);
  }

  async writeStdin(args: WriteStdinArgs, signal?: AbortSignal): Promise<PtyCommandResult> {
    this.assertOpen();
    const started = performance.now();
    const session = this.get(args.session_id);
    session.touch();
    if (args.cols !== undefined || args.rows !== undefined) session.resize(args.cols ?? DEFAULT_COLS, args.rows ?? DEFAULT_ROWS);
    let warning: string | undefined;
    const chars = args.chars ?? "";
    if (chars.length > 0) {
      if (session.running && !session.outputEnded) session.write(encoder.encode(chars));
      else warning = "The process has exited; the input was not sent";
    }
    const yieldMs = clampYield(args.yield_time_ms, STDIN_YIELD);
    await session.waitUntil(() => !session.running, Date.now() + yieldMs, signal);
    return this.collect(session, args, started, warning);
  }

  /** Who reads what write_stdin types into a session: its terminal's foreground program; undefined when unknown. */
  inputReader(sessionId: string): InputReader | undefined {
    const session = this.sessions.get(sessionId);
    if (!session?.running) return undefined;
    const comm = foregroundReader(session.pid);
    return comm === undefined ? undefined : { comm, privileged: this.privileged.has(sessionId), command: session.cmd };
  }

  list(): PtySessionInfo[] {
    const now = Date.now();
    return [...this.sessions.values()].map((session) => ({
      id: session.id,
      cmd: session.cmd,
      pid: session.pid,
      started: session.startedAt.toISOString(),
      running: session.running,
      exit_code: session.exitStatus?.exitCode ?? null,
      idle_s: Math.floor((now - session.lastUsedAt) / 1000),
      bytes_out: session.bytesOut,
      last_output_at: session.lastOutputAt === undefined ? null : new Date(session.lastOutputAt).toISOString(),
    }));
  }

  async closeSession(args: CloseSessionArgs): Promise<PtyCloseResult> {
    const session = this.get(args.session_id);
    this.sessions.delete(session.id);
    const status = await this.end(session, args.force ? "closed_forced" : "closed", args.force ?? false);
    const rendered = renderOutput(session.takeOutput().bytes, { maxOutputTokens: DEFAULT_MAX_OUTPUT_TOKENS, stripAnsi: false });
    return {
      session_id: session.id,
      exit_code: status?.exitCode ?? null,
      ...(status?.signal ? { signal: status.signal } : {}),
      output: rendered.output,
      truncated: rendered.truncated,
    };
  }

  healthChecks(): HealthCheck[] {
    const count = this.sessions.size;
    const nearLimit = count >= Math.ceil(this.config.max_sessions * 0.9);
    return [
      {
        key: "pty:sessions",
        status: nearLimit ? "warn" : "pass",
        observedValue: count,
        observedUnit: "sessions",
        ...(nearLimit ? { output: `${count} of at most ${this.config.max_sessions} PTY sessions are open` } : {}),
      },
    ];
  }

  /** Ends every session (SIGHUP → SIGTERM → SIGKILL on each group) and releases every fd. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    clearInterval(this.sweepTimer);
    const open = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(open.map((session) => this.end(session, "shutdown", false)));
    for (const session of this.lingering) session.pollExit();
    this.epoll?.close();
  }

  private async collect(
    session: PtySession,
    options: ReadOptions,
    started: number,
    warning: string | undefined,
  ): Promise<PtyCommandResult> {
    session.touch();
    const taken = session.takeOutput();
    const rendered = renderOutput(taken.bytes, {
      maxOutputTokens: options.max_output_tokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
      stripAnsi: options.strip_ansi ?? false,
    });
    let outputFile: string | undefined;
    if (rendered.truncated) {
      try {
        outputFile = await this.outputStore.save(session.id, taken.bytes);
      } catch (error) {
        // The command has run: its output is answered without the full copy rather than as a failure.
        const full = asDiskFull(error, this.outputStore.directory);
        this.log.warn("pty.error", { op: "save_output", session_id: session.id, error: full ?? error });
        warning = [warning, `The full output could not be saved: ${full?.message ?? (error as Error).message}`].filter(Boolean).join("; ");
      }
    }
    const status = session.exitStatus;
    if (status && this.sessions.get(session.id) === session) {
      // Its exit code has now been reported: the session is gone, even if a daemon it started still holds the terminal.
      this.sessions.delete(session.id);
      this.release(session);
      this.log.info("pty.close", { session_id: session.id, reason: "exited", exit_code: status.exitCode });
    }
    return {
      session_id: status ? null : session.id,
      output: rendered.output,
      running: status === undefined,
      exit_code: status?.exitCode ?? null,
      ...(status?.signal ? { signal: status.signal } : {}),
      truncated: rendered.truncated,
      original_bytes: rendered.originalBytes,
      ...(taken.droppedBytes > 0 ? { dropped_bytes: taken.droppedBytes } : {}),
      ...(outputFile ? { output_file: outputFile } : {}),
      wall_ms: Math.round(performance.now() - started),
      ...(warning ? { warning } : {}),
    };
  }

  /** Takes a slot, makes room if it must, and starts the command; the slot is given back on failure. */
  private async start(args: ExecCommandArgs, shell: string, options: ExecOptions): Promise<{ session: PtySession; warning?: string }> {
    const slot = this.reserveSlot();
    try {
      const warning = slot.victim ? await this.evict(slot.victim) : undefined;
      this.assertOpen();
      const id = this.newId();
      // Bookkeeping first: a command whose group cannot be recorded is not started at all.
      const reservation = this.groups.reserve(id);
      let session: PtySession;
      try {
        session = await this.spawn(id, args, shell, options);
      } catch (error) {
        reservation.cancel();
        throw error;
      }
      this.sessions.set(id, session);
      try {
        reservation.commit(session.pid);
      } catch (error) {
        // The command runs: failing the call now would make a client run it again.
        this.log.error("pty.error", { op: "record_group", session_id: id, pid: session.pid, error });
      }
      return { session, warning };
    } finally {
      this.reservedSlots--;
    }
  }

  /**
   * Takes a slot for a new session, synchronously: a free one, or the least recently used session's
   * (never one of the most recent), which the caller then ends before starting its own.
   */
  private reserveSlot(): { victim?: PtySession } {
    const max = this.config.max_sessions;
    if (this.sessions.size + this.reservedSlots < max) {
      this.reservedSlots++;
      return {};
    }
    const victimId = chooseEviction([...this.sessions.values()].map((s) => ({ id: s.id, lastUsedAt: s.lastUsedAt, running: s.running })));
    const victim = victimId === undefined ? undefined : this.sessions.get(victimId);
    if (!victim) {
      this.log.warn("pty.limit_reached", { max_sessions: max, evicted: null, starting: this.reservedSlots });
      if (this.reservedSlots > 0)
        throw new PtyError("pty_slots_busy", `All ${max} PTY session slots are taken by sessions still starting; try again shortly`, {
          max_sessions: max,
        });
      throw new PtyError("pty_limit_reached", `All ${max} PTY sessions are in recent use; close one with close_session first`);
    }
    this.sessions.delete(victim.id);
    this.reservedSlots++;
    return { victim };
  }

  private async evict(victim: PtySession): Promise<string> {
    const max = this.config.max_sessions;
    const cmd = redactText(victim.cmd);
    this.log.warn("pty.limit_reached", { max_sessions: max, evicted: victim.id, evicted_cmd: cmd });
    await this.end(victim, "evicted", false);
    return `Session limit (${max}) reached: closed the least recently used session ${victim.id} (${victim.cmd})`;
  }

  private async spawn(id: string, args: ExecCommandArgs, shell: string, options: ExecOptions): Promise<PtySession> {
    const env = childEnv(process.env, args.env, { pass: this.config.pass_env, withheld: this.withheldEnv });
    const request: Omit<LaunchRequest, "tty"> = {
      sessionId: id,
      kind: options.privileged ? (options.argv ? "escalation" : "terminal") : "command",
      words: options.privileged && options.argv ? options.argv : shellArgv(shell, args.login ?? this.config.login_shell, args.cmd),
      env,
      ...(args.workdir === undefined ? {} : { cwd: args.workdir }),
      ...(this.childUmask === undefined ? {} : { umask: this.childUmask }),
      ...(options.call ? { call: options.call } : {}),
      ...(options.credential ? { credential: options.credential } : {}),
    };
    const spawned = await PtyProcess.spawn({ ...request, cols: args.cols ?? DEFAULT_COLS, rows: args.rows ?? DEFAULT_ROWS }, this.launcher);
    return new PtySession({
      id,
      cmd: args.cmd,
      process: spawned,
      bufferBytes: this.config.buffer_bytes,
      loop: this.loop(),
      onExit: (ended, status) =>
        this.log.info("pty.exit", { session_id: ended.id, pid: ended.pid, exit_code: status.exitCode, signal: status.signal }),
    });
  }

  /** The launcher learnt that `pid` ended (a monitor's reply): its session takes the status now. */
  processEnded(pid: number): void {
    for (const session of [...this.sessions.values(), ...this.lingering]) if (session.pid === pid) session.pollExit();
  }

  /** A session nobody reads any more: its fds close and its group leaves the registry. */
  private release(session: PtySession): void {
    this.privileged.delete(session.id);
    session.dispose();
    this.groups.remove(session.pid);
    // What a command started in the background ends with it (a fork bomb, a detached loop): a server
    // meant to outlive one call runs as a session of its own.
    runInBackground("pty.cgroup_kill", () => this.launcher.endSession(session.id), { session_id: session.id }, this.log);
  }

  /** Terminates and disposes a session already removed from the map; closing it ends its whole cgroup. */
  private async end(session: PtySession, reason: string, force: boolean) {
    const status = await session.terminate(this.config.close_grace_ms, force);
    await this.launcher.endSession(session.id);
    this.release(session);
    if (session.running) this.lingering.add(session);
    this.log.info("pty.close", { session_id: session.id, reason, exit_code: status?.exitCode ?? null, signal: status?.signal });
    return status;
  }

  private async sweep(): Promise<void> {
    const now = Date.now();
    const idleMs = this.config.idle_timeout_s * 1000;
    for (const session of [...this.sessions.values()]) {
      session.pollExit();
      if (session.waiting || now - session.lastUsedAt <= idleMs) continue;
      this.sessions.delete(session.id);
      this.log.info("pty.reaped", {
        session_id: session.id,
        reason: "idle_timeout",
        idle_s: Math.floor((now - session.lastUsedAt) / 1000),
      });
      await this.end(session, "idle_timeout", false).catch((error: unknown) =>
        this.log.error("pty.error", { op: "reap", session_id: session.id, error }),
      );
    }
    for (const session of this.lingering) {
      session.pollExit();
      if (!session.running) this.lingering.delete(session);
    }
  }

  private get(id: string): PtySession {
    const session = this.sessions.get(id);
    if (!session) {
      throw new PtyError("pty_session_not_found", `No PTY session ${JSON.stringify(id)}; list_sessions shows the open ones`, {
        session_id: id,
      });
    }
    return session;
  }

  private loop(): EpollLoop {
    this.epoll ??= new EpollLoop((error) => this.log.error("pty.error", { op: "poll", error }));
    return this.epoll;
  }

  private newId(): string {
    for (;;) {
      const id = randomUUID().slice(0, 8);
      if (!this.sessions.has(id)) return id;
    }
  }

  private assertOpen(): void {
    if (this.closing) throw new PtyError("pty_closed", "The PTY manager is shutting down");
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
