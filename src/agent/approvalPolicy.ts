import type { ToolScope } from "../core/tools/toolDefinition.ts";
import type { CommandRule, PolicyValue, ScopePolicy } from "../core/config/sections/approvalsConfig.ts";
import { invokesSudo, matchesCommandGlob } from "./commandGlob.ts";

export interface PolicyInput {
  scope: ToolScope;
  /** The command line the call would run, when it runs one. */
  command?: string;
  policy: ScopePolicy;
  rules: readonly CommandRule[];
  /** Scopes the user granted for the rest of the session (allow_session). */
  grants: ReadonlySet<string>;
  /**
   * Why the shell parser thinks the command could raise privileges (CommandJudge); any reason makes
   * it `sudo`. Without it (no parser consulted) the plain text check decides.
   */
  escalation?: readonly string[];
}

export interface PolicyDecision {
  verdict: "allow" | "ask" | "deny";
  /** The scope the decision was made for: an exec call that runs sudo is judged as `sudo`. */
  scope: ToolScope;
  /** What decided: "rule:<glob>", "policy:<scope>" or "grant:<scope>". */
  reason: string;
}

/** Decides whether a tool call may run now, needs the user, or is refused. Pure. */
export function decideCallPolicy(input: PolicyInput): PolicyDecision {
  const escalates =
    input.scope === "exec" &&
    (input.escalation !== undefined ? input.escalation.length > 0 : input.command !== undefined && invokesSudo(input.command));
  const scope: ToolScope = escalates ? "sudo" : input.scope;
  if (input.command !== undefined) {
    const rule = input.rules.find((r) => matchesCommandGlob(r.match, input.command!));
    // A rule may refuse or ask more, but never allow a call that could raise privileges: a glob
    // matches text (`git status *` also matches `git status x; sudo id`) and sees neither the
    // shell nor the environment the call asks for, while an allowed sudo-scope call runs without
    // no_new_privs. Those follow the sudo policy and its grants alone.
    if (rule && !(scope === "sudo" && rule.action === "allow")) return applyGrant(rule.action, scope, `rule:${rule.match}`, input.grants);
  }
  return applyGrant(input.policy[scope], scope, `policy:${scope}`, input.grants);
}

function applyGrant(value: PolicyValue, scope: ToolScope, reason: string, grants: ReadonlySet<string>): PolicyDecision {
  // A grant only answers a question the policy would ask; it never overrides a deny.
  if (value === "ask" && grants.has(scope)) return { verdict: "allow", scope, reason: `grant:${scope}` };
  return { verdict: value, scope, reason };
}
