import { confinedArgv } from "./confinedArgv.ts";
import { helperEnv } from "./helperEnv.ts";

let hidden: readonly string[] = [];

/**
 * Set once at start, in each agentd process: the paths (data dir, config file) that commands
 * agentd runs on its own behalf (a service's status command, a watchdog check) cannot reach,
 * as the agent's own commands cannot.
 */
export function confineOwnCommands(paths: readonly string[]): void {
  hidden = [...paths];
}

/** How runCommand starts a confined command: through the helper, with its environment carried over. */
export function confinedSpawn(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): { argv: string[]; env: Record<string, string> } {
  const defined = Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
  return { argv: confinedArgv(argv, hidden), env: helperEnv(defined) };
}
