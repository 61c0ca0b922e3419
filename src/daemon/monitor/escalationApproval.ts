import type { Database } from "../../core/store/index.ts";

/** What the store says about one tool call, as the monitor reads it for itself. */
export interface EscalationFacts {
  call?: { session_id: string; status: string; approval_id: string | null; tool: string; arguments: unknown };
  approval?: { status: string; scope: string; tool_call_id: string };
  /** Scopes a person granted the session for the rest of it ("allow for this session"). */
  grants: ReadonlySet<string>;
  /** The session's own policy (set when a person created it), over the config's. */
  sessionPolicy: Readonly<Record<string, unknown>>;
}

export interface AskedEscalation {
  recordId: string;
  sessionId: string;
  words: readonly string[];
  cwd?: string;
}

export function readEscalationFacts(db: Database, recordId: string, sessionId: string): EscalationFacts {
  const call = db
    .query<{ session_id: string; status: string; approval_id: string | null; tool: string; arguments: string }, [string]>(
      "SELECT session_id, status, approval_id, tool, arguments FROM agent_tool_calls WHERE id = ?",
    )
    .get(recordId);
  const approval = call?.approval_id
    ? db
        .query<{ status: string; scope: string; tool_call_id: string }, [string]>(
          "SELECT status, scope, tool_call_id FROM agent_approvals WHERE id = ?",
        )
        .get(call.approval_id)
    : null;
  const grants = db.query<{ scope: string }, [string]>("SELECT scope FROM agent_grants WHERE session_id = ?").all(sessionId);
  const session = db.query<{ policy: string }, [string]>("SELECT policy FROM agent_sessions WHERE id = ?").get(sessionId);
  return {
    ...(call ? { call: { ...call, arguments: parseJson(call.arguments) } } : {}),
    ...(approval ? { approval } : {}),
    grants: new Set(grants.map((g) => g.scope)),
    sessionPolicy: parseRecord(session?.policy),
  };
}

/** The recorded call's command line, from which the monitor computes the argv it will run. */
export function recordedCommand(facts: EscalationFacts): { cmd?: string; workdir?: string } {
  const args = facts.call?.arguments;
  if (typeof args !== "object" || args === null) return {};
  const { cmd, workdir } = args as { cmd?: unknown; workdir?: unknown };
  return { ...(typeof cmd === "string" ? { cmd } : {}), ...(typeof workdir === "string" ? { workdir } : {}) };
}

/**
 * Why the monitor will not run this escalation, or undefined when a person allowed exactly it: the
 * call is running, it is the session's, its recorded command gives exactly these words
 * (`recomputed`, from the recorded command by the judge's own function) in the recorded directory,
 * and a person approved it (allow once or for the session), granted the sudo scope for the session,
 * or set the policy to allow it (the session's, else the config's `sudo`).
 */
export function escalationRefusal(
  facts: EscalationFacts,
  asked: AskedEscalation,
  recomputed: readonly string[] | undefined,
  configSudo: string,
): string | undefined {
  const { call, approval } = facts;
  if (!call) return `there is no tool call ${asked.recordId} in the store`;
  if (call.session_id !== asked.sessionId) return `tool call ${asked.recordId} belongs to another session`;
  if (call.tool !== "exec_command") return `tool call ${asked.recordId} is a ${call.tool} call, not exec_command`;
  if (call.status !== "running") return `tool call ${asked.recordId} is ${call.status}, not running`;
  if (!recomputed || !sameWords(recomputed, asked.words))
    return `the words asked for (${JSON.stringify(asked.words)}) are not the recorded call's (${JSON.stringify(recomputed ?? null)})`;
  const { workdir } = recordedCommand(facts);
  if ((workdir ?? undefined) !== asked.cwd)
    return `the directory asked for (${asked.cwd ?? "none"}) is not the recorded call's (${workdir ?? "none"})`;
  if (approval) {
    if (approval.tool_call_id !== asked.recordId) return `approval of tool call ${asked.recordId} names another call`;
    if (approval.scope !== "sudo") return `tool call ${asked.recordId} was approved in the ${approval.scope} scope, not sudo`;
    if (approval.status === "allow_once" || approval.status === "allow_session") return undefined;
    return `tool call ${asked.recordId} is ${approval.status}, not allowed`;
  }
  const policy = facts.sessionPolicy.sudo ?? configSudo;
  if (policy === "allow") return undefined;
  if (policy === "ask" && facts.grants.has("sudo")) return undefined;
  return `no person approved tool call ${asked.recordId} (sudo policy ${String(policy)}, no grant)`;
}

function sameWords(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((word, i) => word === b[i]);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function parseRecord(text: string | undefined): Record<string, unknown> {
  const value = text === undefined ? undefined : parseJson(text);
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
