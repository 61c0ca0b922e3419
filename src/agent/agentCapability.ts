import type { Capability } from "../core/capability.ts";
import { createAgent, type Agent, type CreateAgentOptions } from "./agent.ts";

export interface AgentCapability extends Capability {
  agent: Agent;
}

/** The agent loop: /api/sessions… and /api/approvals…, running the tools the other capabilities give it. */
export function createAgentCapability(options: CreateAgentOptions): AgentCapability {
  const agent = createAgent(options);
  return {
    name: "agent",
    routes: [{ path: "/api", app: agent.routes }],
    agent,
    metricsText: () => agent.metricsText(),
    close: () => agent.close(),
  };
}
