import type { MiddlewareHandler } from "hono";
import { AgentdError } from "../core/errors/index.ts";
import type { Logger } from "../core/log/index.ts";
import { errorResponse } from "./errorResponse.ts";
import { matchesAnyPattern } from "./pathPatterns.ts";
import { peerFacts } from "./peerFacts.ts";
import { peerVerdict } from "./peerVerdict.ts";
import { carriesToken } from "./requestToken.ts";
import { checkMiddleware, type RequestCheck } from "./requestGate.ts";

export interface AgentPeerGuardOptions {
  /** Paths of decision routes: only a person, never the agent, may post to them (any method but GET and HEAD). */
  paths: readonly RegExp[];
  /** Paths that act on the host past the agent's approval policy: refused to the agent's commands (any method but GET and HEAD). */
  directCallPaths?: readonly RegExp[];
  /**
   * The uid every command agentd runs for the model runs as; a connection whose client socket is
   * this user's is the agent. Undefined when commands run as agentd's own user: then only a request
   * served in-process is known to be the agent.
   */
  commandUid: number | undefined;
  /**
   * When set, decisions also need this token (<data_dir>/token, which the command user cannot
   * read), even where the rest of the API is open: a local process of another user that relays a
   * command's request (a proxy, a tunnel) lends it its own uid, never the token.
   */
  decisionToken: string | undefined;
  /**
   * When set, direct calls need this token too: where commands run as agentd's own uid (in
   * namespaces), only a secret they cannot see tells a person's request from theirs.
   */
  directCallToken?: string | undefined;
  logger: Logger;
}

/** The decision routes, matched loosely (unanchored, any case): guarding a path too many only refuses the agent. */
export const DECISION_PATHS: readonly RegExp[] = [
  /\/approvals\/[^/]/i,
  /\/incidents\/[^/]+\/(action|ack|acknowledge|resolve)/i,
  // A silence hides the agent's own failures from the operator: only a person sets or lifts one.
  /\/incidents\/silences/i,
  // Forgetting a learned fix changes what the watchdog does next: only a person does it.
  /\/watchdog\/+learned/i,
  /\/pty\/privileged/i,
  // A new session carries its own approval policy ({"sudo": "allow"}): setting one is a decision.
  /\/api\/+sessions\/*$/i,
  // A reload applies the config file's approval policy again.
  /\/api\/+admin\/+reload/i,
];

/**
 * Routes that run or change something on the host without asking: a command the agent runs that
 * calls them would skip the approval policy (and the record) its own tools go through. /api/admin
 * too (a command could open the proxy's breakers for weeks): the supervisor's watchdog, which acts
 * on the proxy through it, is not the command user.
 */
export const AGENT_DIRECT_CALL_PATHS: readonly RegExp[] = [
  /\/api\/+(pty|files|hops|sessions|admin)(\/|$)/i,
  // An MCP client's calls: a command could pass its own requests off as another client's.
  /^\/+mcp(\/|$)/i,
];

/**
 * Refuses decision and direct-call routes to the agent: 403 approver_is_agent or agent_direct_call,
 * whatever credential the request carries. A decision from anyone else still needs the decision
 * token when one is set: 401 decision_needs_token.
 */
export function agentPeerCheck(options: AgentPeerGuardOptions): RequestCheck {
  const isDecision = matchesAnyPattern(options.paths);
  const isDirect = matchesAnyPattern(options.directCallPaths ?? []);
  return (c) => {
    if (c.req.method === "GET" || c.req.method === "HEAD") return undefined;
    const decision = isDecision(c.req.path);
    const direct = !decision && isDirect(c.req.path);
    if (!decision && !direct) return undefined;
    const facts = peerFacts(c, options.commandUid !== undefined);
    const verdict = peerVerdict(facts, options.commandUid);
    const fields = {
      path: c.req.path,
      why: verdict.why,
      peer: facts.kind === "connection" ? facts.address : "in-process",
      uid: verdict.uid,
    };
    if (verdict.agent && decision) {
      options.logger.warn("security.approver_is_agent", fields);
      return errorResponse(
        c,
        new AgentdError("approver_is_agent", `Decisions must come from a person, not from agentd or a command it runs (${verdict.why})`),
      );
    }
    if (verdict.agent) {
      options.logger.warn("security.agent_direct_call", fields);
      return errorResponse(
        c,
        new AgentdError(
          "agent_direct_call",
          `Cannot serve ${c.req.path} to a command agentd runs: the agent acts through its tools, which follow the approval policy (${verdict.why})`,
        ),
      );
    }
    const needed = decision ? options.decisionToken : options.directCallToken;
    if (needed !== undefined && !carriesToken(c, needed)) {
      options.logger.warn(decision ? "security.decision_without_token" : "security.direct_call_without_token", fields);
      c.header("WWW-Authenticate", 'Bearer realm="agentd"');
      return errorResponse(
        c,
        decision
          ? new AgentdError(
              "decision_needs_token",
              "Decisions need agentd's token, also on loopback: send 'Authorization: Bearer <token>' with the token in <data_dir>/token (`agentd approve` sends it itself)",
            )
          : new AgentdError(
              "unauthorized",
              `Cannot serve ${c.req.path} without agentd's token: its commands run as its own user, so terminals, files, hops and MCP need 'Authorization: Bearer <token>' (<data_dir>/token)`,
            ),
      );
    }
    return undefined;
  };
}

/** agentPeerCheck as a middleware. */
export function agentPeerGuard(options: AgentPeerGuardOptions): MiddlewareHandler {
  return checkMiddleware(agentPeerCheck(options));
}
