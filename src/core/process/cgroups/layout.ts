/** The controllers agentd limits a command session with. */
export const CONTROLLERS = ["pids", "memory", "cpu"] as const;
export type Controller = (typeof CONTROLLERS)[number];

/** One v1 hierarchy agentd uses: the controller and agentd's own cgroup directory in it. */
export interface V1Hierarchy {
  controller: Controller;
  ownDir: string;
}

/**
 * Where agentd's command cgroups can go. `v2`: one cgroup2 hierarchy holding the controllers.
 * `hybrid`: pids, memory, cpu as v1 hierarchies (those mounted), plus the controller-less cgroup2
 * (`unified`) when mounted, for its cgroup.kill. `none`: no cgroup agentd can use, and why.
 */
export type CgroupLayout =
  | { kind: "v2"; ownDir: string }
  | { kind: "hybrid"; v1: readonly V1Hierarchy[]; unified?: { ownDir: string } }
  | { kind: "none"; why: string };

/** The name of the leaf agentd moves its own processes into on v2 (no internal processes). */
export const DAEMON_LEAF = "daemon";

export interface CgroupMount {
  fstype: "cgroup" | "cgroup2";
  /** The hierarchy's directory the mount shows (a bind mount or an old container shows a sub-cgroup). */
  root: string;
  mountPoint: string;
  /** The v1 options: controllers among others (rw, name=systemd, clone_children…). */
  superOptions: readonly string[];
}

/** mountinfo escapes space, tab, newline and backslash in paths as \ooo. */
function unescapeMountPath(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** The cgroup and cgroup2 mounts in /proc/self/mountinfo text, in order. Pure. */
export function parseCgroupMounts(mountinfo: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of mountinfo.split("\n")) {
    const fields = line.trim().split(" ");
    // id parent major:minor root mount-point options [optional fields…] - fstype source super-options
    const dash = fields.indexOf("-", 6);
    if (dash < 0) continue;
    const fstype = fields[dash + 1];
    if (fstype !== "cgroup" && fstype !== "cgroup2") continue;
    mounts.push({
      fstype,
      root: unescapeMountPath(fields[3] ?? "/"),
      mountPoint: unescapeMountPath(fields[4] ?? ""),
      superOptions: (fields[dash + 3] ?? "").split(","),
    });
  }
  return mounts;
}

export interface ProcCgroupLine {
  /** 0 for the cgroup2 line. */
  hierarchyId: number;
  /** Empty for cgroup2. */
  controllers: readonly string[];
  path: string;
}

/** The lines of /proc/self/cgroup ("id:controllers:path"; the path may hold colons). Pure. */
export function parseProcCgroup(text: string): ProcCgroupLine[] {
  const lines: ProcCgroupLine[] = [];
  for (const line of text.split("\n")) {
    const first = line.indexOf(":");
    const second = line.indexOf(":", first + 1);
    if (first < 0 || second < 0) continue;
    const controllers = line.slice(first + 1, second);
    lines.push({
      hierarchyId: Number(line.slice(0, first)),
      controllers: controllers === "" ? [] : controllers.split(","),
      path: line.slice(second + 1),
    });
  }
  return lines;
}

/**
 * The directory of cgroup `path` under a mount of its hierarchy, or undefined when no mount shows
 * it (the mount is of a sub-cgroup the path is outside of, or the path climbs out of a namespace).
 */
function dirOf(mounts: readonly CgroupMount[], path: string): string | undefined {
  if (!path.startsWith("/") || path.split("/").includes("..")) return undefined;
  for (const mount of mounts) {
    const root = mount.root === "/" ? "" : mount.root.replace(/\/+$/, "");
    if (path !== root && root !== "" && !path.startsWith(`${root}/`)) continue;
    const rest = path.slice(root.length).replace(/\/+$/, "");
    return `${mount.mountPoint.replace(/\/+$/, "")}${rest}`;
  }
  return undefined;
}

/**
 * agentd's cgroup: where /proc/self/cgroup says, except that a process already in the daemon leaf
 * (a restarted worker, a second open) works from the cgroup above it, which agentd set up itself.
 */
function ownPath(path: string): string {
  const parts = path.replace(/\/+$/, "").split("/");
  if (parts.length > 1 && parts.at(-1) === DAEMON_LEAF) return parts.slice(0, -1).join("/") || "/";
  return path;
}

/**
 * The layout the mounts and agentd's own cgroups allow, before any check that they can be written.
 * Any of pids, memory, cpu mounted as v1 makes it hybrid; else a cgroup2 mount makes it v2. Pure.
 */
export function layoutFromProc(mountinfo: string, procCgroup: string): CgroupLayout {
  const mounts = parseCgroupMounts(mountinfo);
  const lines = parseProcCgroup(procCgroup);
  if (mounts.length === 0) return { kind: "none", why: "no cgroup filesystem is mounted" };
  const v2Line = lines.find((line) => line.hierarchyId === 0 && line.controllers.length === 0);
  const v2Mounts = mounts.filter((mount) => mount.fstype === "cgroup2");

  const v1: V1Hierarchy[] = [];
  const v1Missing: string[] = [];
  for (const controller of CONTROLLERS) {
    const v1Mounts = mounts.filter((mount) => mount.fstype === "cgroup" && mount.superOptions.includes(controller));
    if (v1Mounts.length === 0) continue;
    const line = lines.find((candidate) => candidate.hierarchyId !== 0 && candidate.controllers.includes(controller));
    const ownDir = line ? dirOf(v1Mounts, line.path) : undefined;
    if (ownDir === undefined) v1Missing.push(controller);
    else v1.push({ controller, ownDir });
  }
  if (v1.length > 0) {
    const unified = v2Line ? dirOf(v2Mounts, v2Line.path) : undefined;
    return unified === undefined ? { kind: "hybrid", v1 } : { kind: "hybrid", v1, unified: { ownDir: unified } };
  }
  if (v1Missing.length > 0) {
    return { kind: "none", why: `agentd's ${v1Missing.join(", ")} cgroup is outside every mount of its hierarchy` };
  }
  if (v2Mounts.length === 0) return { kind: "none", why: "no cgroup2 mount and none of pids, memory, cpu mounted as v1" };
  if (!v2Line) return { kind: "none", why: "/proc/self/cgroup has no cgroup2 (0::) line" };
  // Only v2 has the daemon leaf: a hybrid host's unified cgroup is taken as it is.
  const v2Dir = dirOf(v2Mounts, ownPath(v2Line.path));
  if (v2Dir === undefined) return { kind: "none", why: `agentd's cgroup ${v2Line.path} is outside every cgroup2 mount` };
  return { kind: "v2", ownDir: v2Dir };
}
