import { AgentdError } from "../../errors/index.ts";
import { type CgroupLayout, type Controller, CONTROLLERS, DAEMON_LEAF } from "./layout.ts";

export interface CgroupLimits {
  pidsMax: number;
  memoryMaxBytes: number;
  /** cgroup v2 cpu.weight, 1–10000 (100 is a normal process); v1 gets the matching cpu.shares. */
  cpuWeight: number;
}

/** One step of setting cgroups up; the executor runs them in order. */
export type CgroupOp =
  /** `existingOk`: a directory a previous open left is reused (not a session's: its id must be new). */
  | { op: "mkdir"; path: string; existingOk?: true }
  /** `ifExists`: skipped when the file is absent (the kernel lacks the feature); `tolerate`: error codes ignored. */
  | { op: "write"; path: string; value: string; ifExists?: true; tolerate?: readonly string[] }
  /** Every process listed in `from` (a cgroup.procs) written to `to`, again for any that appear meanwhile. */
  | { op: "moveProcs"; from: string; to: string };

/** "v2": the one cgroup2 hierarchy; "unified": hybrid's controller-less cgroup2, for cgroup.kill. */
export type HierarchyRole = "v2" | "unified" | Controller;

/** What open set up: per hierarchy, this agentd's directory its sessions go under. */
export interface CommandTree {
  kind: "v2" | "hybrid";
  /** The killing hierarchy (v2 or unified) first, then pids, memory, cpu: the order processes join in. */
  hierarchies: readonly { role: HierarchyRole; instanceDir: string }[];
  /** The controllers that limit each session. */
  controllers: readonly Controller[];
}

/** What open needs to know of agentd's own v2 cgroup, read before planning. */
export interface V2State {
  /** cgroup.controllers: what the parent delegates. */
  available: readonly string[];
  /** cgroup.procs lists anyone: they must move to a leaf before controllers can be enabled. */
  hasProcs: boolean;
  /** The hierarchy's real root (no cgroup.type file), exempt from the no-internal-processes rule. */
  realRoot: boolean;
}

export interface TreeNames {
  /** The directory under agentd's cgroup holding the command cgroups. */
  subtree: string;
  /** This agentd's directory under it (several agentd may share a hybrid host's root cgroup). */
  instance: string;
}

export const DEFAULT_SUBTREE = { v2: "commands", hybrid: "agentd-commands" } as const;

/** This agentd's directory in the subtree: `p<pid>`, so a later agentd can tell a dead one's leftovers. */
export function instanceName(pid: number): string {
  return `p${pid}`;
}

/** The pid an instance directory was named after, or undefined for any other name. */
export function instancePid(name: string): number | undefined {
  const match = /^p([1-9][0-9]*)$/.exec(name);
  return match ? Number(match[1]) : undefined;
}

export function enabledControllers(available: readonly string[]): Controller[] {
  return CONTROLLERS.filter((controller) => available.includes(controller));
}

/** "+pids +memory +cpu" for cgroup.subtree_control. */
function enableLine(controllers: readonly Controller[]): string {
  return controllers.map((controller) => `+${controller}`).join(" ");
}

/**
 * The steps that set up agentd's command subtree and the tree they give. On v2, agentd's processes
 * first move to a leaf (controllers cannot be enabled in a cgroup holding processes), then each
 * level down to the instance directory enables the controllers for the one below. Pure.
 */
export function planTree(
  layout: Exclude<CgroupLayout, { kind: "none" }>,
  names: TreeNames,
  v2State?: V2State,
): { ops: CgroupOp[]; tree: CommandTree } {
  const ops: CgroupOp[] = [];
  if (layout.kind === "v2") {
    if (!v2State) throw new AgentdError("internal_error", "planning a v2 command subtree needs the state of agentd's own cgroup");
    const own = layout.ownDir;
    const controllers = enabledControllers(v2State.available);
    if (v2State.hasProcs && !v2State.realRoot) {
      ops.push({ op: "mkdir", path: `${own}/${DAEMON_LEAF}`, existingOk: true });
      ops.push({ op: "moveProcs", from: `${own}/cgroup.procs`, to: `${own}/${DAEMON_LEAF}/cgroup.procs` });
    }
    const subtree = `${own}/${names.subtree}`;
    const instance = `${subtree}/${names.instance}`;
    const enable = (dir: string) => {
      if (controllers.length > 0) ops.push({ op: "write", path: `${dir}/cgroup.subtree_control`, value: enableLine(controllers) });
    };
    enable(own);
    ops.push({ op: "mkdir", path: subtree, existingOk: true });
    enable(subtree);
    ops.push({ op: "mkdir", path: instance, existingOk: true });
    // The instance directory holds sessions, never processes, so it passes the controllers on too.
    enable(instance);
    return { ops, tree: { kind: "v2", hierarchies: [{ role: "v2", instanceDir: instance }], controllers } };
  }
  const hierarchies: { role: HierarchyRole; instanceDir: string }[] = [];
  const add = (role: HierarchyRole, ownDir: string) => {
    const subtree = `${ownDir}/${names.subtree}`;
    const instance = `${subtree}/${names.instance}`;
    ops.push({ op: "mkdir", path: subtree, existingOk: true }, { op: "mkdir", path: instance, existingOk: true });
    hierarchies.push({ role, instanceDir: instance });
  };
  if (layout.unified) add("unified", layout.unified.ownDir);
  for (const hierarchy of layout.v1) add(hierarchy.controller, hierarchy.ownDir);
  return { ops, tree: { kind: "hybrid", hierarchies, controllers: layout.v1.map((hierarchy) => hierarchy.controller) } };
}

/** v2 cpu.weight (1–10000, 100 normal) as v1 cpu.shares (2–262144, 1024 normal). */
export function cpuShares(weight: number): number {
  return Math.min(262_144, Math.max(2, Math.round((weight * 1024) / 100)));
}

const SESSION_ID = /^[A-Za-z0-9_.-]{1,64}$/;

export function sessionDirName(sessionId: string): string {
  if (!SESSION_ID.test(sessionId)) {
    throw new AgentdError("internal_error", `session id ${JSON.stringify(sessionId)} cannot name a cgroup (letters, digits, _ . - only)`);
  }
  return `s-${sessionId}`;
}

function checkLimits(limits: CgroupLimits): void {
  const { pidsMax, memoryMaxBytes, cpuWeight } = limits;
  const ok =
    Number.isSafeInteger(pidsMax) &&
    pidsMax >= 1 &&
    Number.isSafeInteger(memoryMaxBytes) &&
    memoryMaxBytes >= 1 &&
    Number.isInteger(cpuWeight) &&
    cpuWeight >= 1 &&
    cpuWeight <= 10_000;
  if (!ok) throw new AgentdError("internal_error", `cgroup limits out of range: ${JSON.stringify(limits)}`);
}

export interface SessionPlan {
  ops: CgroupOp[];
  /** The session's directory in each hierarchy, in the tree's order. */
  dirs: string[];
  procsPaths: string[];
  /** cgroup.kill of the v2 or unified directory (present from Linux 5.14), when there is one. */
  killFile?: string;
}

/** The steps creating one session's cgroups with its limits. Pure. */
export function planSession(tree: CommandTree, sessionId: string, limits: CgroupLimits): SessionPlan {
  const name = sessionDirName(sessionId);
  checkLimits(limits);
  const plan: SessionPlan = { ops: [], dirs: [], procsPaths: [] };
  const has = (controller: Controller) => tree.controllers.includes(controller);
  for (const { role, instanceDir } of tree.hierarchies) {
    const dir = `${instanceDir}/${name}`;
    plan.dirs.push(dir);
    plan.procsPaths.push(`${dir}/cgroup.procs`);
    plan.ops.push({ op: "mkdir", path: dir });
    const write = (file: string, value: number, extra: Partial<Extract<CgroupOp, { op: "write" }>> = {}) =>
      plan.ops.push({ op: "write", path: `${dir}/${file}`, value: String(value), ...extra });
    switch (role) {
      case "v2":
        plan.killFile = `${dir}/cgroup.kill`;
        if (has("pids")) write("pids.max", limits.pidsMax);
        if (has("memory")) {
          write("memory.max", limits.memoryMaxBytes);
          // Without it, a session over memory.max would swap instead of being held to it.
          write("memory.swap.max", 0, { ifExists: true });
        }
        if (has("cpu")) write("cpu.weight", limits.cpuWeight);
        break;
      case "unified":
        plan.killFile = `${dir}/cgroup.kill`;
        break;
      case "pids":
        write("pids.max", limits.pidsMax);
        break;
      case "memory":
        write("memory.limit_in_bytes", limits.memoryMaxBytes);
        // memory+swap equal to memory: no swap. Refused where swap accounting is off (EINVAL/EPERM); memory still holds.
        write("memory.memsw.limit_in_bytes", limits.memoryMaxBytes, { ifExists: true, tolerate: ["EINVAL", "EPERM"] });
        break;
      case "cpu":
        write("cpu.shares", cpuShares(limits.cpuWeight));
        break;
    }
  }
  return plan;
}
