import { accessSync, constants } from "node:fs";

/**
 * util-linux's setpriv, looked up at fixed system paths (never through PATH, which a command
 * could have changed): `setpriv --no-new-privs -- argv` sets PR_SET_NO_NEW_PRIVS and execs argv.
 * The flag is inherited by every descendant and cannot be cleared, so no setuid program (sudo,
 * su, pkexec, doas, …), however it is spelled or built, raises privileges below it.
 */
const SETPRIV_PATHS = ["/usr/bin/setpriv", "/bin/setpriv", "/usr/sbin/setpriv", "/sbin/setpriv"];

let found: string | null | undefined;

/** The setpriv binary agentd uses, or undefined when the host has none (the gate is then off). */
export function setprivPath(): string | undefined {
  if (found === undefined) found = SETPRIV_PATHS.find(isExecutable) ?? null;
  return found ?? undefined;
}

/** The argv that runs `argv` under no_new_privs, or `argv` itself when privileged or setpriv is missing. */
export function gatedArgv(argv: readonly string[], privileged: boolean, setpriv = setprivPath()): string[] {
  if (privileged || !setpriv) return [...argv];
  return [setpriv, "--no-new-privs", "--", ...argv];
}

/** True when agentd runs as root: no_new_privs then keeps nothing from the commands, which already are root. */
export function runningAsRoot(): boolean {
  return process.getuid?.() === 0;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** What keeps the kernel's privilege gate from holding on this host, in words for the log, doctor and the page; undefined when it holds. */
export function privilegeGateProblem(): string | undefined {
  if (runningAsRoot())
    return "agentd runs as root: the commands the model runs are root already, so no approval can keep privileges from them; run agentd as a dedicated user with a sudoers rule";
  if (!setprivPath())
    return "setpriv (util-linux) was not found: commands start without no_new_privs, so only the text check asks before sudo and its kin";
  return undefined;
}
