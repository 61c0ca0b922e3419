import { statSync } from "node:fs";
import { join } from "node:path";
import type { HealthCheck } from "../core/health/index.ts";
import { createLogger, type Logger } from "../core/log/index.ts";
import { redactText } from "../core/redaction/index.ts";
import { type CommandIdentity, runInBackground } from "../core/process/index.ts";
import type { CommandCgroups } from "../core/process/cgroups/index.ts";
import { EpollLoop } from "./epollLoop.ts";
import type { PtyConfig } from "../core/config/sections/ptyConfig.ts";
import { PtyError } from "./ptyErrors.ts";
import { sessionsHealth } from "./ptyHealth.ts";
import { closeResult, commandResult, sessionInfo } from "./ptyResults.ts";
import type { CloseSessionArgs, ExecCommandArgs, PtyCloseResult, PtyCommandResult, PtySessionInfo, WriteStdinArgs } from "./ptySchemas.ts";
import { PtySession } from "./ptySession.ts";
import { PtySessionTable } from "./ptySessionTable.ts";
import { SessionEnder } from "./sessionEnder.ts";
import { PtyProcess } from "./ptyProcess.ts";
import { renderOutput } from "./renderOutput.ts";
import {
  DEFAULT_COLS,
  DEFAULT_MAX_OUTPUT_TOKENS,
  DEFAULT_ROWS,
  EXEC_YIELD,
  type ExecOptions,
  STDIN_YIELD,
  clampYield,
  exactlyAsShown,
  launchRequest,
  resolveShell,
} from "./spawnRequest.ts";
import { type ReadOptions, readSessionOutput } from "./sessionOutputRead.ts";
import { ToolOutputStore } from "./toolOutputStore.ts";

import { PTY_GROUPS_DIR, PtyGroupRegistry } from "./ptyGroupRegistry.ts";
import { type CommandLauncher, LocalLauncher } from "./commandLauncher.ts";
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

const encoder = new TextEncoder();

/** Owns every PTY session of the daemon: starts, feeds, reads, limits, reaps and closes them. */
export class PtyManager {
  private readonly config: PtyConfig;
  private readonly log: Logger;
  private readonly outputStore: ToolOutputStore;
  private readonly sessions: PtySessionTable<PtySession>;
  private readonly ender: SessionEnder;
  private readonly groups: PtyGroupRegistry;
  private readonly sweepTimer: ReturnType<typeof setInterval>;
  private epoll: EpollLoop | undefined;
  private closing = false;
  private readonly withheldEnv: readonly string[];
  private readonly childUmask: number | undefined;
  private readonly launcher: CommandLauncher;

  constructor(options: PtyManagerOptions) {
    this.config = options.config;
    this.withheldEnv = options.withheldEnv ?? [];
    this.childUmask = options.childUmask;
    this.log = options.logger ?? createLogger("pty");
    this.sessions = new PtySessionTable(this.log);
    this.launcher =
      options.launcher ??
      new LocalLauncher({
        identity: options.identity ?? UNGUARDED,
        config: options.config,
        logger: this.log,
        ...(options.cgroups ? { cgroups: options.cgroups } : {}),
      });
    this.groups = new PtyGroupRegistry(join(options.dataDir, PTY_GROUPS_DIR));
    this.ender = new SessionEnder({ config: options.config, launcher: this.launcher, groups: this.groups, log: this.log });
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
    const { session, warning } = await this.start(args, shell, options);
    this.log.info("pty.open", {
      session_id: session.id,
      pid: session.pid,
      tty: session.ttyName,
      cmd: redactText(args.cmd),
      shell,
      no_new_privs: !session.privileged,
    });
    const yieldMs = clampYield(args.yield_time_ms, EXEC_YIELD);
    await session.waitUntil(() => !session.running, Date.now() + yieldMs, signal);
    return this.collect(session, args, started, warning);
  }

  async writeStdin(args: WriteStdinArgs, signal?: AbortSignal): Promise<PtyCommandResult> {
    this.assertOpen();
    const started = performance.now();
    const session = this.sessions.get(args.session_id);
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
    const session = this.sessions.find(sessionId);
    if (!session?.running) return undefined;
    const comm = foregroundReader(session.pid);
    return comm === undefined ? undefined : { comm, privileged: session.privileged, command: session.cmd };
  }

  list(): PtySessionInfo[] {
    const now = Date.now();
    return this.sessions.values().map((session) => sessionInfo(session, now));
  }

  async closeSession(args: CloseSessionArgs): Promise<PtyCloseResult> {
    const session = this.sessions.get(args.session_id);
    this.sessions.remove(session.id);
    const status = await this.ender.end(session, args.force ? "closed_forced" : "closed", args.force ?? false);
    const rendered = renderOutput(session.takeOutput().bytes, { maxOutputTokens: DEFAULT_MAX_OUTPUT_TOKENS, stripAnsi: false });
    return closeResult(session.id, status, rendered);
  }

  healthChecks(): HealthCheck[] {
    return [sessionsHealth(this.sessions.size, this.config.max_sessions)];
  }

  /** Ends every session (SIGHUP → SIGTERM → SIGKILL on each group) and releases every fd. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    clearInterval(this.sweepTimer);
    const open = this.sessions.takeAll();
    // One session that cannot be ended (its monitor is gone) stops neither the others nor the shutdown.
    await Promise.all(
      open.map((session) =>
        this.ender
          .end(session, "shutdown", false)
          .catch((error: unknown) => this.log.error("pty.error", { op: "close", session_id: session.id, error })),
      ),
    );
    this.ender.pollStuck();
    this.epoll?.close();
  }

  private async collect(
    session: PtySession,
    options: ReadOptions,
    started: number,
    warning: string | undefined,
  ): Promise<PtyCommandResult> {
    session.touch();
    const { taken, rendered, outputFile, saveWarning } = await readSessionOutput(session, options, this.outputStore, this.log);
    const status = session.exitStatus;
    if (status && this.sessions.holds(session)) {
      // Its exit code has now been reported: the session is gone, even if a daemon it started still holds the terminal.
      this.sessions.remove(session.id);
      this.ender.release(session);
      this.log.info("pty.close", { session_id: session.id, reason: "exited", exit_code: status.exitCode });
    }
    const warnings = [warning, saveWarning].filter(Boolean).join("; ") || undefined;
    return commandResult({
      sessionId: session.id,
      taken,
      rendered,
      status,
      outputFile,
      wallMs: performance.now() - started,
      warning: warnings,
    });
  }

  /** Takes a slot, makes room if it must, and starts the command; the slot is given back on failure. */
  private async start(args: ExecCommandArgs, shell: string, options: ExecOptions): Promise<{ session: PtySession; warning?: string }> {
    const slot = this.sessions.reserveSlot(this.config.max_sessions);
    try {
      const warning = slot.victim ? await this.ender.evict(slot.victim) : undefined;
      this.assertOpen();
      const id = this.sessions.newId();
      // Bookkeeping first: a command whose group cannot be recorded is not started at all.
      const reservation = this.groups.reserve(id);
      let session: PtySession;
      try {
        session = await this.spawn(id, args, shell, options);
      } catch (error) {
        reservation.cancel();
        throw error;
      }
      this.sessions.add(session);
      try {
        reservation.commit(session.pid);
      } catch (error) {
        // The command runs: failing the call now would make a client run it again.
        this.log.error("pty.error", { op: "record_group", session_id: id, pid: session.pid, error });
      }
      return { session, warning };
    } finally {
      this.sessions.releaseSlot();
    }
  }

  private async spawn(id: string, args: ExecCommandArgs, shell: string, options: ExecOptions): Promise<PtySession> {
    const request = launchRequest(id, args, shell, options, process.env, {
      passEnv: this.config.pass_env,
      withheldEnv: this.withheldEnv,
      loginShell: this.config.login_shell,
      umask: this.childUmask,
    });
    const spawned = await PtyProcess.spawn({ ...request, cols: args.cols ?? DEFAULT_COLS, rows: args.rows ?? DEFAULT_ROWS }, this.launcher);
    return new PtySession({
      id,
      cmd: args.cmd,
      process: spawned,
      privileged: options.privileged,
      bufferBytes: this.config.buffer_bytes,
      loop: this.loop(),
      onExit: (ended, status) =>
        this.log.info("pty.exit", { session_id: ended.id, pid: ended.pid, exit_code: status.exitCode, signal: status.signal }),
    });
  }

  /** The launcher learnt that `pid` ended (a monitor's reply): its session takes the status now. */
  processEnded(pid: number): void {
    for (const session of [...this.sessions.values(), ...this.ender.stuck]) if (session.pid === pid) session.pollExit();
  }

  private async sweep(): Promise<void> {
    const now = Date.now();
    const idleMs = this.config.idle_timeout_s * 1000;
    for (const session of this.sessions.values()) {
      session.pollExit();
      if (session.waiting || now - session.lastUsedAt <= idleMs) continue;
      this.sessions.remove(session.id);
      this.log.info("pty.reaped", {
        session_id: session.id,
        reason: "idle_timeout",
        idle_s: Math.floor((now - session.lastUsedAt) / 1000),
      });
      await this.ender
        .end(session, "idle_timeout", false)
        .catch((error: unknown) => this.log.error("pty.error", { op: "reap", session_id: session.id, error }));
    }
    this.ender.pollStuck();
  }

  private loop(): EpollLoop {
    this.epoll ??= new EpollLoop((error) => this.log.error("pty.error", { op: "poll", error }));
    return this.epoll;
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
