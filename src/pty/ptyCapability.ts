import type { Capability } from "../core/capability.ts";
import { assignLive } from "../core/configChange.ts";
import type { PtyConfig } from "../core/config/sections/ptyConfig.ts";
import { PtyManager, type PtyManagerOptions } from "./ptyManager.ts";
import { createPtyRoutes } from "./ptyRoutes.ts";
import type { PtySessionInfo } from "./ptySchemas.ts";
import { createPtyTools } from "./ptyTools.ts";
import { ptyMetricFamilies } from "./ptyMetrics.ts";
import type { TerminalTargets } from "./terminalTarget.ts";

export interface PtyCapability extends Capability {
  sessions(): PtySessionInfo[];
}

/**
 * PTY settings only a restart applies: the tool-output store keeps its bounds, and who commands
 * run as was resolved (and the account checked) at start.
 */
const PTY_RESTART_ONLY = ["pty.tool_output_max_bytes", "pty.tool_output_max_age_s", "pty.run_as"];

/** Terminals: /api/pty (a hop's local side drives them) and the exec_command family of tools. */
export function createPtyCapability(options: PtyManagerOptions & { targets?: TerminalTargets }): PtyCapability {
  // The manager and its launcher read this object at each open, sweep and close: a reload replaces
  // its live settings in place, so sessions already open keep running and the next one follows.
  const config: PtyConfig = structuredClone(options.config);
  const manager = new PtyManager({ ...options, config });
  return {
    name: "pty",
    routes: [{ path: "/api/pty", app: createPtyRoutes(manager, options.targets) }],
    tools: createPtyTools(manager),
    healthChecks: () => manager.healthChecks(),
    sessions: () => manager.list(),
    metricFamilies: () => ptyMetricFamilies(manager.list()),
    reload: (change) => {
      assignLive(config, change.after.pty, "pty", PTY_RESTART_ONLY);
      return change.report(["pty"], PTY_RESTART_ONLY);
    },
    close: () => manager.close(),
  };
}
