import type { Capability } from "../core/capability.ts";
import { PtyManager, type PtyManagerOptions } from "./ptyManager.ts";
import { createPtyRoutes } from "./ptyRoutes.ts";
import type { PtySessionInfo } from "./ptySchemas.ts";
import { createPtyTools } from "./ptyTools.ts";
import { ptyMetricsText } from "./ptyMetrics.ts";
import type { TerminalTargets } from "./terminalTarget.ts";

export interface PtyCapability extends Capability {
  sessions(): PtySessionInfo[];
}

/** Terminals: /api/pty (a hop's local side drives them) and the exec_command family of tools. */
export function createPtyCapability(options: PtyManagerOptions & { targets?: TerminalTargets }): PtyCapability {
  const manager = new PtyManager(options);
  return {
    name: "pty",
    routes: [{ path: "/api/pty", app: createPtyRoutes(manager, options.targets) }],
    tools: createPtyTools(manager),
    healthChecks: () => manager.healthChecks(),
    sessions: () => manager.list(),
    metricsText: () => ptyMetricsText(manager.list()),
    close: () => manager.close(),
  };
}
