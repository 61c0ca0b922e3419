import { confinedArgv, helperEnv } from "../core/process/index.ts";

/**
 * How a command is started: through agentd's confinement helper (no_new_privs, hidden paths),
 * or `argv` itself when the sudo scope approved it. no_new_privs is inherited by every descendant
 * and cannot be cleared, so no setuid program (sudo, su, pkexec, doas, …), however it is spelled or
 * built, raises privileges below a confined command.
 */
export function gatedSpawn(
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  cwd: string | undefined,
  privileged: boolean,
  hidden: readonly string[] = [],
): { argv: string[]; env: Record<string, string>; cwd?: string } {
  if (privileged) return { argv: [...argv], env: { ...env }, ...(cwd === undefined ? {} : { cwd }) };
  // A directory the command chose starts the helper in "/" (it could hold files Bun reads at start),
  // and the helper changes to it once confined. Without one, the helper inherits agentd's own
  // directory, which agentd's user may not even be able to name (a 0700 parent).
  if (cwd === undefined) return { argv: confinedArgv(argv, hidden), env: helperEnv(env) };
  return { argv: confinedArgv(argv, hidden, cwd), env: helperEnv(env), cwd: "/" };
}

/** True when agentd runs as root: no_new_privs then keeps nothing from the commands, which already are root. */
export function runningAsRoot(): boolean {
  return process.getuid?.() === 0;
}

/** What keeps the kernel's privilege gate from holding on this host, in words for the log, doctor and the page; undefined when it holds. */
export function privilegeGateProblem(): string | undefined {
  if (runningAsRoot())
    return "agentd runs as root: the commands the model runs are root already, so no approval can keep privileges from them; run agentd as a dedicated user with a sudoers rule";
  return undefined;
}
