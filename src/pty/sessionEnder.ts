import type { Logger } from "../core/log/index.ts";
import { runInBackground } from "../core/process/index.ts";
import { redactText } from "../core/redaction/index.ts";
import type { PtyConfig } from "../core/config/sections/ptyConfig.ts";
import type { CommandLauncher } from "./commandLauncher.ts";
import type { PtyGroupRegistry } from "./ptyGroupRegistry.ts";
import type { PtySession } from "./ptySession.ts";
import type { ExitStatus } from "./waitStatus.ts";

export interface SessionEnderDeps {
  /** Read at each end: a reload changes its settings in place. */
  config: PtyConfig;
  launcher: CommandLauncher;
  groups: PtyGroupRegistry;
  log: Logger;
}

/**
 * How a session that left the table ends: terminated, its cgroup ended, its fds and its registry
 * entry released. One whose process outlives SIGKILL's grace (stuck in the kernel) lingers here
 * until a later poll finds it gone.
 */
export class SessionEnder {
  private readonly lingering = new Set<PtySession>();

  constructor(private readonly deps: SessionEnderDeps) {}

  /** Closed sessions whose process still runs. */
  get stuck(): Iterable<PtySession> {
    return this.lingering;
  }

  /** Terminates (SIGHUP → SIGTERM → SIGKILL on its group) and releases a session; closing it ends its whole cgroup. */
  async end(session: PtySession, reason: string, force: boolean): Promise<ExitStatus | undefined> {
    const { config, launcher, log } = this.deps;
    try {
      const status = await session.terminate(config.close_grace_ms, force);
      await launcher.endSession(session.id);
      log.info("pty.close", { session_id: session.id, reason, exit_code: status?.exitCode ?? null, signal: status?.signal });
      return status;
    } finally {
      // Released even when it could not be signalled (a split worker whose monitor is gone): its fds
      // close, so its terminal hangs up on what runs in it; what outlives that is the next start's
      // to end (pty.orphans_killed).
      this.release(session);
      if (session.running) this.lingering.add(session);
    }
  }

  /** Ends the session an open took the slot of (the session limit was reached); the open's warning says so. */
  async evict(victim: PtySession): Promise<string> {
    const max = this.deps.config.max_sessions;
    this.deps.log.warn("pty.limit_reached", { max_sessions: max, evicted: victim.id, evicted_cmd: redactText(victim.cmd) });
    await this.end(victim, "evicted", false);
    return `Session limit (${max}) reached: closed the least recently used session ${victim.id} (${victim.cmd})`;
  }

  /** A session nobody reads any more: its fds close and its group leaves the registry. */
  release(session: PtySession): void {
    const { launcher, groups, log } = this.deps;
    session.dispose();
    groups.remove(session.pid);
    // What a command started in the background ends with it (a fork bomb, a detached loop): a server
    // meant to outlive one call runs as a session of its own.
    runInBackground("pty.cgroup_kill", () => launcher.endSession(session.id), { session_id: session.id }, log);
  }

  /** Reaps the lingering processes that have ended since. */
  pollStuck(): void {
    for (const session of this.lingering) {
      session.pollExit();
      if (!session.running) this.lingering.delete(session);
    }
  }
}
