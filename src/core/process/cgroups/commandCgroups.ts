import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { AgentdError } from "../../errors/index.ts";
import { createLogger } from "../../log/index.ts";
import { errnoOf, readPids, removeCgroupDir, runOps } from "./execute.ts";
import { type KillTarget, killAndRemove, killAndRemoveSync, listPids } from "./kill.ts";
import type { CgroupLayout, Controller } from "./layout.ts";
import {
  type CgroupLimits,
  type CommandTree,
  DEFAULT_SUBTREE,
  instanceName,
  instancePid,
  planSession,
  planTree,
  type SessionPlan,
  type V2State,
} from "./plan.ts";

const log = createLogger("cgroups");

export interface SessionCgroup {
  /** Absolute paths of the `cgroup.procs` files a new process must join (one per hierarchy), in order. The spawner opens them before it forks and the child writes "0" to each. */
  readonly procsPaths: readonly string[];
  /** Every process in the cgroup killed (detached ones included); resolves when empty or after a bounded wait; then the dirs are removed. Returns whether it emptied. */
  kill(): Promise<boolean>;
  /** pids currently in it */
  pids(): number[];
}

export interface OpenOptions {
  /** The directory under agentd's cgroup for command cgroups: "commands" on v2, "agentd-commands" on hybrid hosts. */
  subtreeName?: string;
}

function unavailable(message: string, cause?: unknown): AgentdError {
  return new AgentdError("cgroup_unavailable", message, cause === undefined ? {} : { cause });
}

function readV2State(ownDir: string): V2State {
  let controllers: string;
  try {
    controllers = readFileSync(`${ownDir}/cgroup.controllers`, "utf8");
  } catch (error) {
    throw unavailable(`${ownDir} is not a cgroup2 directory agentd can read (${errnoOf(error) ?? String(error)})`, error);
  }
  return {
    available: controllers.trim().split(/\s+/),
    hasProcs: readPids(`${ownDir}/cgroup.procs`).length > 0,
    // Only the root lacks cgroup.type; a cgroup namespace's root has one and obeys the rule.
    realRoot: !existsSync(`${ownDir}/cgroup.type`),
  };
}

/** A kill target of the directory `dirOf` names in each hierarchy; the v2/unified one has the cgroup.kill for its whole subtree. */
function targetIn(tree: CommandTree, dirOf: (instanceDir: string) => string): KillTarget {
  const dirs = tree.hierarchies.map(({ instanceDir }) => dirOf(instanceDir));
  const killing = tree.hierarchies.findIndex(({ role }) => role === "v2" || role === "unified");
  return killing < 0 ? { dirs } : { dirs, killFile: `${dirs[killing]}/cgroup.kill` };
}

class Session implements SessionCgroup {
  readonly procsPaths: readonly string[];
  private readonly target: KillTarget;
  private killing: Promise<boolean> | undefined;

  constructor(
    plan: SessionPlan,
    private readonly onGone: () => void,
  ) {
    this.procsPaths = plan.procsPaths;
    this.target = plan.killFile === undefined ? { dirs: plan.dirs } : { dirs: plan.dirs, killFile: plan.killFile };
  }

  kill(): Promise<boolean> {
    this.killing ??= killAndRemove(this.target).then(
      (gone) => {
        if (gone) this.onGone();
        else this.killing = undefined; // Not emptied in time: a later kill (closeAll) tries again.
        return gone;
      },
      (error: unknown) => {
        this.killing = undefined;
        throw error;
      },
    );
    return this.killing;
  }

  pids(): number[] {
    return listPids(this.target).filter((pid) => pid > 0);
  }
}

/**
 * agentd's command cgroups: under its own cgroup, `<subtree>/p<pid>/s-<session>` in each hierarchy.
 * The per-agentd level lets several agentd share a cgroup (a hybrid host's root) and lets the next
 * agentd remove a dead one's leftovers, commands still running in them included.
 */
export class CommandCgroups {
  readonly kind: "v2" | "hybrid";
  /** What limits each session; on v2 only those agentd's parent cgroup delegates. */
  readonly controllers: readonly Controller[];
  private readonly sessions = new Map<string, Session>();
  private closed = false;

  private constructor(private readonly tree: CommandTree) {
    this.kind = tree.kind;
    this.controllers = tree.controllers;
  }

  /** Sets up agentd's command subtree (moving agentd to a leaf on pure v2). Throws a typed AgentdError (code "cgroup_unavailable") with a clear message if it cannot. */
  static open(layout: CgroupLayout, options: OpenOptions = {}): CommandCgroups {
    if (layout.kind === "none") throw unavailable(`no cgroups for commands: ${layout.why}`);
    const subtree = options.subtreeName ?? DEFAULT_SUBTREE[layout.kind];
    if (!/^[A-Za-z0-9_.-]+$/.test(subtree) || subtree === "." || subtree === "..") {
      throw new AgentdError("internal_error", `${JSON.stringify(subtree)} cannot name a cgroup`);
    }
    const v2State = layout.kind === "v2" ? readV2State(layout.ownDir) : undefined;
    const { ops, tree } = planTree(layout, { subtree, instance: instanceName(process.pid) }, v2State);
    runOps(ops);
    const cgroups = new CommandCgroups(tree);
    cgroups.removeDeadInstances();
    return cgroups;
  }

  /** Creates the session's cgroup(s) with limits. */
  create(sessionId: string, limits: CgroupLimits): SessionCgroup {
    if (this.closed) throw unavailable("command cgroups are closed (agentd is stopping)");
    if (this.sessions.has(sessionId)) throw new AgentdError("internal_error", `session ${sessionId} already has a cgroup`);
    const plan = planSession(this.tree, sessionId, limits);
    const created: string[] = [];
    try {
      runOps(plan.ops, created);
    } catch (error) {
      // Undo what was made; nothing ran in it yet. The error thrown says what failed, so a failed rmdir here adds nothing.
      for (const dir of created.reverse()) {
        try {
          removeCgroupDir(dir);
        } catch {
          // See above.
        }
      }
      throw error;
    }
    const session = new Session(plan, () => {
      if (this.sessions.get(sessionId) === session) this.sessions.delete(sessionId);
    });
    this.sessions.set(sessionId, session);
    return session;
  }

  /** Kills and removes every session cgroup (agentd stopping). */
  async closeAll(): Promise<void> {
    this.closed = true;
    // The instance as one target: cgroup.kill there ends every session at once, and any session not known (a failed create) goes too.
    const instance = targetIn(this.tree, (dir) => dir);
    const gone = await killAndRemove(instance);
    this.sessions.clear();
    if (!gone) {
      log.warn("cgroups.close_incomplete", { dirs: instance.dirs, pids: listPids(instance) });
      return;
    }
    // The subtree may hold another agentd's instance (busy): then it stays.
    for (const { instanceDir } of this.tree.hierarchies) removeCgroupDir(dirname(instanceDir));
  }

  /** Kills and removes the instances of agentd processes that are gone (crashed, or a restarted worker's predecessor). */
  private removeDeadInstances(): void {
    const dead = new Set<string>();
    for (const { instanceDir } of this.tree.hierarchies) {
      let names: string[];
      try {
        names = readdirSync(dirname(instanceDir));
      } catch (error) {
        throw unavailable(`cannot list ${dirname(instanceDir)}: ${errnoOf(error) ?? String(error)}`, error);
      }
      for (const name of names) {
        const pid = instancePid(name);
        if (pid !== undefined && pid !== process.pid && !existsSync(`/proc/${pid}`)) dead.add(name);
      }
    }
    for (const name of dead) {
      const target = targetIn(this.tree, (dir) => `${dirname(dir)}/${name}`);
      if (killAndRemoveSync(target)) log.info("cgroups.dead_instance_removed", { instance: name });
      else log.warn("cgroups.dead_instance_left", { instance: name, pids: listPids(target) });
    }
  }
}
