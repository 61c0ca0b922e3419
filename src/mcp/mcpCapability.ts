import type { DirectCalls } from "../agent/index.ts";
import type { Capability } from "../core/capability.ts";
import type { Logger } from "../core/log/index.ts";
import { createMcpRoutes } from "./mcpRoutes.ts";
import { servedTools } from "./toolListing.ts";

export interface McpCapabilityOptions {
  /** The agent's direct calls: its policy, approvals, runner and records. */
  calls: DirectCalls;
  /** The status snapshot (the status page's JSON). */
  status(): Promise<unknown>;
  logger: Logger;
  /** MCP sessions with no request for this long are closed; default 30 minutes. */
  idleMs?: number;
}

/** The MCP server: agentd's tools, under its approvals and records, for any MCP client at /mcp. */
export function createMcpCapability(options: McpCapabilityOptions): Capability {
  const tools = servedTools(options.calls.tools);
  const routes = createMcpRoutes({
    calls: options.calls,
    tools,
    status: options.status,
    logger: options.logger,
    idleMs: options.idleMs ?? 30 * 60_000,
  });
  return {
    name: "mcp",
    routes: [{ path: "/mcp", app: routes.app }],
    // Its calls are counted where they are recorded, by the agent (agentd_mcp_tool_calls_total).
    metricFamilies: () => [
      { name: "agentd_mcp_sessions", help: "Open MCP sessions over Streamable HTTP.", type: "gauge", samples: [{ value: routes.size() }] },
    ],
    // No section of its own: the tools and approvals it serves are the agent's, reloaded there.
    reload: () => ({ applied: [], needsRestart: [] }),
    close: () => routes.close(),
  };
}
