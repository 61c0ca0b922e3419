import { accessSync, constants, readFileSync } from "node:fs";
import { errorMessage } from "../../errors/index.ts";
import { type CgroupLayout, layoutFromProc } from "./layout.ts";

export interface DetectOptions {
  /** Where mountinfo and cgroup are read (tests: a directory with fake ones). */
  procSelf?: string;
}

/** Why `path` cannot be written by this process (EACCES without root or delegation, EROFS in a container), or undefined. */
function notWritable(path: string): string | undefined {
  try {
    accessSync(path, constants.W_OK);
    return undefined;
  } catch (error) {
    return `${path} is not writable (${(error as NodeJS.ErrnoException).code ?? errorMessage(error)})`;
  }
}

/**
 * agentd's cgroup layout from /proc/self/mountinfo and /proc/self/cgroup, "none" (with why) when
 * the cgroups it would create under cannot be written: not root and no delegation, or a read-only
 * cgroup mount. A v1 hierarchy that cannot be written is left out; the rest still limit.
 */
export function detectCgroupLayout(options: DetectOptions = {}): CgroupLayout {
  const procSelf = options.procSelf ?? "/proc/self";
  let layout: CgroupLayout;
  try {
    layout = layoutFromProc(readFileSync(`${procSelf}/mountinfo`, "utf8"), readFileSync(`${procSelf}/cgroup`, "utf8"));
  } catch (error) {
    return { kind: "none", why: `cannot read ${procSelf}/mountinfo or cgroup: ${errorMessage(error)}` };
  }
  if (layout.kind === "none") return layout;
  if (layout.kind === "v2") {
    const why = notWritable(layout.ownDir) ?? notWritable(`${layout.ownDir}/cgroup.subtree_control`);
    return why === undefined ? layout : { kind: "none", why: `${why}: agentd needs root or a delegated cgroup (systemd Delegate=yes)` };
  }
  const v1 = layout.v1.filter((hierarchy) => notWritable(hierarchy.ownDir) === undefined);
  if (v1.length === 0) {
    const why = layout.v1.map((hierarchy) => notWritable(hierarchy.ownDir)).join("; ");
    return { kind: "none", why: `${why}: agentd needs root or delegated cgroups` };
  }
  const unified = layout.unified && notWritable(layout.unified.ownDir) === undefined ? layout.unified : undefined;
  return unified ? { kind: "hybrid", v1, unified } : { kind: "hybrid", v1 };
}
