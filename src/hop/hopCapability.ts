import type { Capability } from "../core/capability.ts";
import type { HopsConfig } from "../core/config/sections/hopConfig.ts";
import type { ToolDefinition, ToolTarget } from "../core/tools/toolDefinition.ts";
import { createLogger } from "../core/log/index.ts";
import { createHopManager, type HopManagerOptions } from "./hopManager.ts";
import { RemoteOverviews, type HopListRow } from "./remoteOverview.ts";
import { createHopRoutes } from "./hopRoutes.ts";
import { createHopTool } from "./hopTool.ts";
import { createHopToolTarget } from "./hopToolTarget.ts";
import type { RemoteAgentdClient } from "./remoteAgentdClient.ts";
import { hopMetricFamilies } from "./hopMetrics.ts";

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
  // Each connection reads this object when it connects or reconnects, and the manager when it
  // expires failed hops: a reload replaces it in place, so open hops stay up and follow it at
  // their next connection.
  const config: HopsConfig = structuredClone(options.config);
  const manager = createHopManager({ ...options, config });
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
    metricFamilies: () => hopMetricFamilies(manager.list()),
    reload: (change) => {
      Object.assign(config, structuredClone(change.after.hops));
      // The hop tool's file limit is the agent's setting, fixed when the tool was made.
      return change.report(["hops", "agent.read_file_max_bytes"], ["agent.read_file_max_bytes"]);
    },
    close: () => manager.close(),
  };
}
