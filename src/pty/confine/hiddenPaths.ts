import { realpathSync } from "node:fs";
import { landlockAbi } from "./landlock.ts";
import { hostPlanFs } from "./confineMain.ts";
import { planHiding } from "./landlockPlan.ts";

export interface HidingDecision {
  /** What commands will not reach (Landlock): passed to the confinement helper. */
  hidden: string[];
  /** Why some or all of the paths stay within reach of commands, in words for the log and doctor. */
  problem?: string;
}

/**
 * Decides once, at start, which of agentd's own paths (the data dir, the config file) commands
 * can be kept out of: Landlock must be there, agentd must not be root, and no ancestor of a path
 * may be writable by agentd's user (planHiding says why).
 */
export function decideHiding(paths: readonly string[]): HidingDecision {
  const real = paths.map((path) => {
    try {
      return realpathSync(path);
    } catch {
      return path;
    }
  });
  if (process.getuid?.() === 0) return { hidden: [], problem: "agentd runs as root: a root command can read anything" };
  const abi = landlockAbi();
  if (abi === 0) return { hidden: [], problem: "the kernel has no Landlock (Linux 5.13+ with landlock in its LSM list)" };
  const plan = planHiding(real, hostPlanFs);
  const problem = plan.exposed.length > 0 ? plan.exposed.map((e) => e.why).join("; ") : undefined;
  return { hidden: plan.hidden, ...(problem ? { problem } : {}) };
}
