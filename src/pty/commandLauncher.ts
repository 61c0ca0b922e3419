import type { Logger } from "../core/log/index.ts";
import { type CommandCgroups, type CommandIdentity, nativeSpawn, runInBackground, type SessionCgroup } from "../core/process/index.ts";
import type { PtyConfig } from "../core/config/sections/ptyConfig.ts";
import { chooseLaunch } from "./commandLaunch.ts";
import { cgroupLimits, commandRlimits } from "./commandLimits.ts";
import { reapChild } from "./childReap.ts";
import { ESRCH, libc } from "./libcBindings.ts";
import type { ExitStatus } from "./waitStatus.ts";

/** What a session runs: the command user's command, a sudo-approved escalation, or a person's privileged terminal. */
export type LaunchKind = "command" | "escalation" | "terminal";

export interface LaunchRequest {
  sessionId: string;
  kind: LaunchKind;
  /** The shell's words (command, terminal) or the escalation's own words, exec'd without a shell. */
  words: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd?: string;
  /** The terminal's slave side: its fd here, its path for a monitor that opens it itself. */
  tty: { fd: number; path: string };
  umask?: number;
  /** An escalation's tool call, whose approval the monitor reads again before it runs anything. */
  call?: { recordId: string; sessionId: string };
  /** A privileged terminal's credential: the API token the person's request carried. */
  credential?: string;
}

/** Commands are the OOM killer's first choice, before agentd's own processes. */
export const COMMAND_OOM_SCORE_ADJ = 500;

/**
 * Who starts, signals and reaps a session's processes and owns its cgroup: this process
 * (LocalLauncher), or agentd's privileged monitor when the worker runs as a service user
 * (MonitorLauncher in the daemon), since only root may start a command as another user.
 */
export interface CommandLauncher {
  start(request: LaunchRequest): Promise<number>;
  /** Signals the process group the session's leader heads; false once no process is left in it. */
  signalGroup(pid: number, signal: number): Promise<boolean>;
  /** The leader's exit status once it has ended; undefined while it runs (or until it is known). */
  reap(pid: number): ExitStatus | undefined;
  /** Every process left in the session's cgroup is killed; resolves when it is empty or after a bounded wait. */
  endSession(sessionId: string): Promise<void>;
  /** For a launcher whose `reap` learns a status later: called with the pid once it is known. */
  watchExits?(listener: (pid: number) => void): void;
}

export interface LocalLauncherOptions {
  identity: CommandIdentity;
  config: PtyConfig;
  cgroups?: CommandCgroups;
  logger: Logger;
}

/** Starts commands from this process with the native spawner: as the command user when agentd is root. */
export class LocalLauncher implements CommandLauncher {
  readonly #sessions = new Map<string, SessionCgroup>();
  /** Replaced on reload: new sessions get the new limits. */
  config: PtyConfig;

  constructor(private readonly options: LocalLauncherOptions) {
    this.config = options.config;
  }

  async start(request: LaunchRequest): Promise<number> {
    const { identity, cgroups, logger } = this.options;
    const privileged = request.kind !== "command";
    const launch = chooseLaunch(
      request.words,
      request.env,
      request.cwd,
      identity,
      privileged,
      request.kind === "escalation" ? request.words : undefined,
    );
    const cgroup = cgroups?.create(request.sessionId, cgroupLimits(this.config.limits));
    try {
      const pid = nativeSpawn({
        ...launch,
        stdio: { tty: request.tty.fd },
        ...(cgroup ? { cgroupProcs: cgroup.procsPaths } : { limits: commandRlimits(this.config.limits, identity.mode) }),
        ...(request.umask === undefined ? {} : { umask: request.umask }),
        oomScoreAdj: COMMAND_OOM_SCORE_ADJ,
      });
      if (cgroup) this.#sessions.set(request.sessionId, cgroup);
      return pid;
    } catch (error) {
      if (cgroup) runInBackground("pty.cgroup_remove", () => cgroup.kill(), { session_id: request.sessionId }, logger);
      throw error;
    }
  }

  async signalGroup(pid: number, signal: number): Promise<boolean> {
    return signalProcessGroup(pid, signal);
  }

  reap(pid: number): ExitStatus | undefined {
    return reapChild(pid);
  }

  async endSession(sessionId: string): Promise<void> {
    const cgroup = this.#sessions.get(sessionId);
    if (!cgroup) return;
    this.#sessions.delete(sessionId);
    await cgroup.kill();
  }
}

/** kill(-pid, signal): false once no process is left in the group (ESRCH). */
export function signalProcessGroup(pid: number, signal: number): boolean {
  const c = libc();
  if (c.kill(-pid, signal) === 0) return true;
  return c.errno() !== ESRCH;
}
