import type { Capability } from "../core/capability.ts";
import type { ToolDefinition } from "../core/tools/toolDefinition.ts";
import { createHopManager, type HopInfo, type HopManagerOptions } from "./hopManager.ts";
import { createHopRoutes } from "./hopRoutes.ts";
import { createHopTool } from "./hopTool.ts";
import { hopMetricsText } from "./hopMetrics.ts";

export interface HopCapability extends Capability {
  list(): HopInfo[];
}

/** Hops: /api/hops and the hop tool. Closing ends the tunnels only: the remote agentds keep running. */
export function createHopCapability(options: HopManagerOptions & { readFileMaxBytes: number }): HopCapability {
  const manager = createHopManager(options);
  return {
    name: "hop",
    routes: [{ path: "/api/hops", app: createHopRoutes(manager) }],
    tools: [createHopTool(manager, { readFileMaxBytes: options.readFileMaxBytes }) as ToolDefinition],
    list: () => manager.list(),
    metricsText: () => hopMetricsText(manager.list()),
    close: () => manager.close(),
  };
}
