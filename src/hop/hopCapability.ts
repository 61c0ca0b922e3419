import type { Capability } from "../core/capability.ts";
import type { ToolDefinition, ToolTarget } from "../core/tools/toolDefinition.ts";
import { createLogger } from "../core/log/index.ts";
import { createHopManager, type HopManagerOptions } from "./hopManager.ts";
import { RemoteOverviews, type HopListRow } from "./remoteOverview.ts";
import { createHopRoutes } from "./hopRoutes.ts";
import { createHopTool } from "./hopTool.ts";
import { createHopToolTarget } from "./hopToolTarget.ts";
import type { RemoteAgentdClient } from "./remoteAgentdClient.ts";
import { hopMetricsText } from "./hopMetrics.ts";

export interface HopCapability extends Capability {
  /** Each hop with its remote agentd's health and open incidents (cached a few seconds). */
  list(): HopListRow[];
  /** A hop that is up (connected, or in fallback mode) as a session target; undefined otherwise. */
  target(name: string): ToolTarget | undefined;
  /** The terminals of a hop for /api/pty; throws hop_not_found, hop_closed or hop_disconnected. */
  terminals(name: string): RemoteAgentdClient;
}

/** Hops: /api/hops and the hop tool. Closing ends the tunnels only: the remote agentds keep running. */
export function createHopCapability(options: HopManagerOptions & { readFileMaxBytes: number }): HopCapability {
  const manager = createHopManager(options);
  const overviews = new RemoteOverviews(manager, options.logger ?? createLogger("hop"));
  return {
    name: "hop",
    routes: [{ path: "/api/hops", app: createHopRoutes(manager, () => overviews.list()) }],
    tools: [createHopTool(manager, { readFileMaxBytes: options.readFileMaxBytes }) as ToolDefinition],
    list: () => overviews.list(),
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
