import type { ActionName } from "../../core/config/sections/watchdogConfig.ts";

export type Tier3Answer = {
  action: ActionName;
  reason: string;
  confidence: number;
  command?: string;
  /** What the investigation found, and what the model makes of it (both optional, written on the incident). */
  evidence?: string;
  hypothesis?: string;
};

/**
 * Checks a tier-3 model's parsed answer against the shape its JSON schema asks for: exactly
 * `action` (one of `allowed`), `reason` (1 to 2000 characters), `confidence` (0 to 1) and, when
 * commands are on offer, `command` (one of them, or empty); optionally `evidence` (up to 4000
 * characters) and `hypothesis` (up to 2000). Written out rather than with zod so the
 * supervisor does not load zod for an answer it rarely sees. Pure.
 */
export function checkTier3Answer(
  value: unknown,
  allowed: readonly ActionName[],
  commands: readonly string[],
): { ok: true; answer: Tier3Answer } | { ok: false; issues: string[] } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, issues: ["answer: expected an object"] };
  const answer = value as Record<string, unknown>;
  const issues: string[] = [];
  const { action, reason, confidence, command, evidence, hypothesis } = answer;
  if (typeof action !== "string" || !(allowed as readonly string[]).includes(action))
    issues.push(`action: expected one of ${allowed.map((a) => JSON.stringify(a)).join("|")}`);
  if (typeof reason !== "string" || reason.length < 1 || reason.length > 2000)
    issues.push("reason: expected a string of 1 to 2000 characters");
  if (typeof confidence !== "number" || !Number.isFinite(confidence) || confidence < 0 || confidence > 1)
    issues.push("confidence: expected a number from 0 to 1");
  if (commands.length > 0 && (typeof command !== "string" || (command !== "" && !commands.includes(command))))
    issues.push(`command: expected one of ${["", ...commands].map((c) => JSON.stringify(c)).join("|")}`);
  if (evidence !== undefined && (typeof evidence !== "string" || evidence.length > 4000))
    issues.push("evidence: expected a string of at most 4000 characters");
  if (hypothesis !== undefined && (typeof hypothesis !== "string" || hypothesis.length > 2000))
    issues.push("hypothesis: expected a string of at most 2000 characters");
  const known = ["action", "reason", "confidence", "evidence", "hypothesis", ...(commands.length > 0 ? ["command"] : [])];
  const unknown = Object.keys(answer).filter((key) => !known.includes(key));
  if (unknown.length > 0) issues.push(`answer: unrecognized keys ${unknown.map((k) => JSON.stringify(k)).join(", ")}`);
  if (issues.length > 0) return { ok: false, issues };
  return {
    ok: true,
    answer: {
      action: action as ActionName,
      reason: reason as string,
      confidence: confidence as number,
      ...(commands.length > 0 ? { command: command as string } : {}),
      ...(evidence === undefined ? {} : { evidence: evidence as string }),
      ...(hypothesis === undefined ? {} : { hypothesis: hypothesis as string }),
    },
  };
}
