import type { Capability } from "../core/capability.ts";
import { assignLive } from "../core/configChange.ts";
import { createAgent, type Agent, type CreateAgentOptions } from "./agent.ts";

export interface AgentCapability extends Capability {
  agent: Agent;
}

/**
 * Agent settings only a restart applies: the default model and the debug sidecar are fixed when
 * the routes and sidecar are made, the service tools when the catalog is, and read_file's limit
 * when the files capability made the tool.
 */
const AGENT_RESTART_ONLY = ["agent.model", "agent.debug", "agent.read_file_max_bytes", "services"];

/** The agent loop: /api/sessions… and /api/approvals…, running the tools the other capabilities give it. */
export function createAgentCapability(options: CreateAgentOptions): AgentCapability {
  // The turn engine and direct calls read these settings at each step and call: a reload replaces
  // them in place, so a running turn takes the new ones at its next step.
  const config = structuredClone(options.config);
  const agent = createAgent({ ...options, config });
  return {
    name: "agent",
    routes: [{ path: "/api", app: agent.routes }],
    agent,
    metricFamilies: () => agent.metricFamilies(),
    reload: (change) => {
      assignLive(config.agent, change.after.agent, "agent", AGENT_RESTART_ONLY);
      agent.setApprovals(change.after.approvals);
      return change.report(["agent", "approvals", "services"], AGENT_RESTART_ONLY);
    },
    close: () => agent.close(),
  };
}
