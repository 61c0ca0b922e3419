import { AgentdError } from "../core/errors/index.ts";
import type { Logger } from "../core/log/index.ts";
import { CommandCgroups, detectCgroupLayout } from "../core/process/cgroups/index.ts";

/**
 * The cgroups each command session gets, or undefined (with the reason logged) where none can be
 * had, as for a user without a delegated subtree: sessions then get rlimits instead.
 */
export function openCommandCgroups(log: Logger): CommandCgroups | undefined {
  const layout = detectCgroupLayout();
  if (layout.kind === "none") {
    log.warn("security.cgroups_unavailable", { problem: layout.why });
    return undefined;
  }
  try {
    const cgroups = CommandCgroups.open(layout);
    log.info("security.cgroups", { kind: cgroups.kind });
    return cgroups;
  } catch (error) {
    if (!(error instanceof AgentdError)) throw error;
    log.warn("security.cgroups_unavailable", { problem: error.message });
    return undefined;
  }
}
