import type { Capability } from "../core/capability.ts";
import type { ToolDefinition, ToolTarget } from "../core/tools/toolDefinition.ts";
import { createHopManager, type HopInfo, type HopManagerOptions } from "./hopManager.ts";
import { createHopRoutes } from "./hopRoutes.ts";
import { createHopTool } from "./hopTool.ts";
import { createHopToolTarget } from "./hopToolTarget.ts";
import type { RemoteAgentdClient } from "./remoteAgentdClient.ts";
import { hopMetricsText } from "./hopMetrics.ts";

export interface HopCapability extends Capability {
  list(): HopInfo[];
  /** A hop that is up (connected, or in fallback mode) as a session target; undefined otherwise. */
  target(name: string): ToolTarget | undefined;
  /** The terminals of a hop for /api/pty; throws hop_not_found, hop_closed or hop_disconnected. */
  terminals(name: string): RemoteAgentdClient;
}

/** Hops: /api/hops and the hop tool. Closing ends the tunnels only: the remote agentds keep running. */
export function createHopCapability(options: HopManagerOptions & { readFileMaxBytes: number }): HopCapability {
  const manager = createHopManager(options);
  return {
    name: "hop",
    routes: [{ path: "/api/hops", app: createHopRoutes(manager) }],
    tools: [createHopTool(manager, { readFileMaxBytes: options.readFileMaxBytes }) as ToolDefinition],
    list: () => manager.list(),
    terminals: (name) => manager.client(name),
    target: (name) => {
      const hop = manager.list().find((info) => info.name === name);
      if (!hop || (hop.state !== "connected" && hop.state !== "fallback")) return undefined;
      return createHopToolTarget(manager, name, { readFileMaxBytes: options.readFileMaxBytes });
    },
    metricsText: () => hopMetricsText(manager.list()),
    close: () => manager.close(),
  };
}
