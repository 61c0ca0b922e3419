import type { MiddlewareHandler } from "hono";
import { getConnInfo } from "hono/bun";
import { AgentdError } from "../core/errors/index.ts";
import type { Logger } from "../core/log/index.ts";
import { errorResponse } from "./errorResponse.ts";
import { lookupPeer, type PeerVerdict } from "./peerProcess.ts";

export interface AgentPeerGuardOptions {
  /** Paths of decision routes: only a person, never the agent, may post to them (any method but GET and HEAD). */
  paths: readonly RegExp[];
  /** Paths that act on the host past the agent's approval policy: refused to the agent's commands (any method but GET and HEAD). */
  directCallPaths?: readonly RegExp[];
  /** The worker's and the supervisor's pids. */
  roots: readonly number[];
  logger: Logger;
}

/**
 * Refuses a decision whose connection comes from agentd's own process tree (the model's
 * commands, or the worker itself), whatever credential it carries: 403 approver_is_agent.
 * A request served in-process (the agent's own fetch) has no socket and counts as the agent.
 */
/** The decision routes, matched loosely (unanchored, any case): guarding a path too many only refuses the agent. */
export const DECISION_PATHS: readonly RegExp[] = [
  /\/approvals\/[^/]/i,
  /\/incidents\/[^/]+\/(action|ack|acknowledge|resolve)/i,
  // A silence hides the agent's own failures from the operator: only a person sets or lifts one.
  /\/incidents\/silences/i,
  /\/pty\/privileged/i,
  // A new session carries its own approval policy ({"sudo": "allow"}): setting one is a decision.
  /\/api\/+sessions\/*$/i,
  // A reload applies the config file's approval policy again.
  /\/api\/+admin\/+reload/i,
];

/**
 * Routes that run or change something on the host without asking: a command the agent runs that
 * calls them would skip the approval policy (and the record) its own tools go through. Not
 * /api/admin: the supervisor's watchdog, itself in agentd's tree, acts on the proxy through it.
 */
export const AGENT_DIRECT_CALL_PATHS: readonly RegExp[] = [
  /\/api\/+(pty|files|hops|sessions)(\/|$)/i,
  // An MCP client's calls: a command could pass its own requests off as another client's.
  /^\/+mcp(\/|$)/i,
];

export function agentPeerGuard(options: AgentPeerGuardOptions): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method === "GET" || c.req.method === "HEAD") return next();
    const decision = options.paths.some((path) => path.test(c.req.path));
    const direct = !decision && (options.directCallPaths ?? []).some((path) => path.test(c.req.path));
    if (!decision && !direct) return next();
    const verdict = peerOf(c, options.roots, direct);
    if (!verdict.agent) return next();
    const fields = { path: c.req.path, why: verdict.why, pid: verdict.pid, comm: verdict.comm };
    if (decision) {
      options.logger.warn("security.approver_is_agent", fields);
      return errorResponse(
        c,
        new AgentdError("approver_is_agent", `Decisions must come from a person, not from agentd or a command it runs (${verdict.why})`),
      );
    }
    options.logger.warn("security.agent_direct_call", fields);
    return errorResponse(
      c,
      new AgentdError(
        "agent_direct_call",
        `Cannot serve ${c.req.path} to a command agentd runs: the agent acts through its tools, which follow the approval policy (${verdict.why})`,
      ),
    );
  };
}

function peerOf(c: Parameters<MiddlewareHandler>[0], roots: readonly number[], quietTreeIsPerson: boolean): PeerVerdict {
  let remote: { address?: string; port?: number };
  try {
    remote = getConnInfo(c).remote;
  } catch {
    return { agent: true, why: "served in-process, without a connection" };
  }
  if (!remote.address || !remote.port) return { agent: true, why: "served in-process, without a connection" };
  // Bun hands the server to fetch as the env; its port tells this connection from others of the same client port.
  const serverPort = (c.env as { port?: unknown } | undefined)?.port;
  return lookupPeer(
    { address: remote.address, port: remote.port, ...(typeof serverPort === "number" ? { serverPort } : {}) },
    { roots, quietTreeIsPerson },
  );
}
