import type { MiddlewareHandler } from "hono";
import { getConnInfo } from "hono/bun";
import { AgentdError } from "../core/errors/index.ts";
import type { Logger } from "../core/log/index.ts";
import { errorResponse } from "./errorResponse.ts";
import { lookupPeer, type PeerVerdict } from "./peerProcess.ts";

export interface AgentPeerGuardOptions {
  /** Paths of decision routes: only a person, never the agent, may post to them (any method but GET and HEAD). */
  paths: readonly RegExp[];
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
];

export function agentPeerGuard(options: AgentPeerGuardOptions): MiddlewareHandler {
  return async (c, next) => {
    const guarded = c.req.method !== "GET" && c.req.method !== "HEAD" && options.paths.some((path) => path.test(c.req.path));
    if (!guarded) return next();
    const verdict = peerOf(c, options.roots);
    if (!verdict.agent) return next();
    options.logger.warn("security.approver_is_agent", { path: c.req.path, why: verdict.why, pid: verdict.pid, comm: verdict.comm });
    return errorResponse(
      c,
      new AgentdError("approver_is_agent", `Decisions must come from a person, not from agentd or a command it runs (${verdict.why})`),
    );
  };
}

function peerOf(c: Parameters<MiddlewareHandler>[0], roots: readonly number[]): PeerVerdict {
  let remote: { address?: string; port?: number };
  try {
    remote = getConnInfo(c).remote;
  } catch {
    return { agent: true, why: "served in-process, without a connection" };
  }
  if (!remote.address || !remote.port) return { agent: true, why: "served in-process, without a connection" };
  // Bun hands the server to fetch as the env; its port tells this connection from others of the same client port.
  const serverPort = (c.env as { port?: unknown } | undefined)?.port;
  return lookupPeer({ address: remote.address, port: remote.port, ...(typeof serverPort === "number" ? { serverPort } : {}) }, { roots });
}
