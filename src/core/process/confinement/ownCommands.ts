import { accessSync, constants } from "node:fs";
import { AgentdError } from "../../errors/index.ts";
import type { CommandIdentity } from "../identity/index.ts";
import { type SecretEnvOptions, withoutSecrets } from "./secretEnv.ts";

let identity: CommandIdentity = { mode: "unguarded", problems: [] };
let secrets: SecretEnvOptions = {};

/**
 * Set once at start, in each agentd process: who the commands agentd runs on its own behalf (a
 * service's status command, a watchdog check) run as, and the secrets they do not get — as the
 * agent's own commands: what they read may have been written by the agent.
 */
export function confineOwnCommands(commandIdentity: CommandIdentity, secretOptions: SecretEnvOptions = {}): void {
  identity = commandIdentity;
  secrets = secretOptions;
}

const SETPRIV_DIRS = ["/usr/bin", "/bin", "/usr/sbin", "/sbin"];

/** util-linux's setpriv, from a system directory only (a copy elsewhere could be a command's). */
export function setprivPath(): string {
  for (const dir of SETPRIV_DIRS) {
    try {
      accessSync(`${dir}/setpriv`, constants.X_OK);
      return `${dir}/setpriv`;
    } catch {
      // Not in this directory.
    }
  }
  throw new AgentdError("command_user_unavailable", "Cannot start a confined command: setpriv (util-linux) is not installed");
}

/**
 * How runCommand starts a confined command: through setpriv, as the command user when there is
 * one, with no_new_privs, and with agentd's environment minus its secrets.
 */
export function confinedSpawn(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): { argv: string[]; env: Record<string, string> } {
  const credentials = identity.credentials;
  const user = credentials
    ? [
        `--reuid=${credentials.uid}`,
        `--regid=${credentials.gid}`,
        credentials.groups.length > 0 ? `--groups=${credentials.groups.join(",")}` : "--clear-groups",
      ]
    : [];
  const ownEnv = withoutSecrets(env, secrets);
  if (identity.user) Object.assign(ownEnv, { HOME: identity.home ?? "/", USER: identity.user, LOGNAME: identity.user });
  return { argv: [setprivPath(), ...user, "--no-new-privs", "--", ...argv], env: ownEnv };
}

/** How runCommand starts a command as configured (an approved restart or action): agentd's environment minus its secrets. */
export function plainSpawn(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): { argv: string[]; env: Record<string, string> } {
  return { argv: [...argv], env: withoutSecrets(env, secrets) };
}
