import { confinedArgv } from "./confinedArgv.ts";
import { helperEnv } from "./helperEnv.ts";
import { type SecretEnvOptions, withoutSecrets } from "./secretEnv.ts";

let hidden: readonly string[] = [];
let secrets: SecretEnvOptions = {};

/**
 * Set once at start, in each agentd process: the paths (data dir, config file) that commands
 * agentd runs on its own behalf (a service's status command, a watchdog check) cannot reach, and
 * the secrets they do not get, as the agent's own commands neither reach nor get them.
 */
export function confineOwnCommands(paths: readonly string[], secretOptions: SecretEnvOptions = {}): void {
  hidden = [...paths];
  secrets = secretOptions;
}

/** How runCommand starts a confined command: through the helper, with agentd's environment minus its secrets. */
export function confinedSpawn(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): { argv: string[]; env: Record<string, string> } {
  return { argv: confinedArgv(argv, hidden), env: helperEnv(withoutSecrets(env, secrets)) };
}

/** How runCommand starts a command as configured (an approved restart or action): agentd's environment minus its secrets. */
export function plainSpawn(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): { argv: string[]; env: Record<string, string> } {
  return { argv: [...argv], env: withoutSecrets(env, secrets) };
}
