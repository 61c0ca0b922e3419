import { namedUser } from "../core/shell/escalationWords.ts";
import { createHash } from "node:crypto";
import { z } from "zod";
import { AgentdError } from "../core/errors/index.ts";

/** How many hex characters of a digest the card and `agentd approve` show. */
export const SHOWN_DIGEST_CHARS = 12;
/** A digest as a decision names it: all of it. */
export const digestField = z.string().regex(/^[0-9a-f]{64}$/, "digest must be the approval's 64 hex characters");

/** What a digest covers; the fields of an ApprovalRequest, or of a watchdog command. */
export interface DigestSubject {
  argv?: readonly string[];
  command?: string;
  arguments?: unknown;
  workdir?: string;
  target: string;
}

/**
 * The digest a decision is bound to: sha256 over canonical JSON of what will run (a bare
 * escalation's exec'd argv, else the command text, else the arguments of a tool that runs no
 * command), the user it runs as when known (sudo -u X: X), the directory and the host. Pure.
 */
export function approvalDigest(subject: DigestSubject): string {
  const what =
    subject.argv !== undefined
      ? { argv: subject.argv }
      : subject.command !== undefined
        ? { command: subject.command }
        : { arguments: subject.arguments ?? null };
  const bound = {
    ...what,
    user: subject.argv !== undefined ? namedUser(subject.argv) : null,
    cwd: subject.workdir ?? null,
    target: subject.target,
  };
  return createHash("sha256").update(canonicalJson(bound)).digest("hex");
}

/** JSON with every object's keys sorted and no spaces: the same value always gives the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? "null" : canonicalJson(item))).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    const fields = Object.keys(record)
      .sort()
      .filter((key) => record[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
    return `{${fields.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** The decision named another digest than the approval's: the person decided on something else. */
class ApprovalChangedError extends AgentdError {
  constructor(id: string, given: string, current: string | undefined) {
    const now = current ? `it is ${current.slice(0, SHOWN_DIGEST_CHARS)} now` : "it has none";
    super(
      "approval_changed",
      `Approval ${id} is not what was decided on (digest ${given.slice(0, SHOWN_DIGEST_CHARS)} given, ${now}): nothing was run; look at it again before deciding`,
      { details: { digest: current ?? null } },
    );
  }
}

/**
 * Refuses a decision on a pending approval whose digest is not the one the approver saw. A
 * decision without a digest (from an API client older than digests) is still taken.
 */
export function assertDigest(id: string, given: string | undefined, current: string | undefined): void {
  if (given !== undefined && given !== current) throw new ApprovalChangedError(id, given, current);
}
