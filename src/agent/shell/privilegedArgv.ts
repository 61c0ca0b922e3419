import { readFileSync } from "node:fs";
import { userInfo } from "node:os";
import { parsePasswd } from "../../core/process/index.ts";
import { bashParser } from "./bashParser.ts";
import { bareEscalationArgv, type EscalationSelf } from "./bareEscalation.ts";

/** Who escalations start from; set once at start by a worker whose monitor runs them (root). */
let startingUser: { user: string; uid: number } | undefined;

/** A worker whose privileged calls its monitor runs: escalations are judged as the monitor's user's. */
export function judgeEscalationsAs(user: { user: string; uid: number }): void {
  startingUser = user;
}

/**
 * The argv a command allowed in the sudo scope starts with, without no_new_privs: only a bare
 * escalation (bareEscalationArgv). Undefined: it runs confined. The monitor computes it again from
 * the recorded call with this same function before it runs anything.
 */
export async function privilegedArgvOf(cmd: string): Promise<string[] | undefined> {
  const self: EscalationSelf = {
    ...(startingUser ?? { user: userInfo().username, uid: process.getuid?.() ?? -1 }),
    uidOf: passwdUid,
  };
  return bareEscalationArgv(await bashParser(), cmd, self);
}

/** A user's uid from /etc/passwd; undefined when the name is not there (another source, or no such user). */
function passwdUid(name: string): number | undefined {
  try {
    return parsePasswd(readFileSync("/etc/passwd", "utf8")).find((account) => account.name === name)?.uid;
  } catch {
    return undefined;
  }
}
