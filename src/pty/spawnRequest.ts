import { type SecretEnvOptions, withoutSecrets } from "../core/process/index.ts";
import type { LaunchRequest } from "./commandLauncher.ts";
import type { ExecCommandArgs } from "./ptySchemas.ts";

/** Pure choices made before a command starts: its shell, argv, environment, size, wait time and launch request. */

/** What children see unless the caller's env says otherwise: no pagers waiting for a key, no colour noise. */
const CHILD_ENV_DEFAULTS: Readonly<Record<string, string>> = {
  PAGER: "cat",
  GIT_PAGER: "cat",
  NO_COLOR: "1",
  TERM: "xterm-256color",
};

export const DEFAULT_COLS = 80;
export const DEFAULT_ROWS = 24;

export const EXEC_YIELD = { defaultMs: 10_000, minMs: 250, maxMs: 30_000 } as const;
export const STDIN_YIELD = { defaultMs: 250, minMs: 50, maxMs: 30_000 } as const;
export const DEFAULT_MAX_OUTPUT_TOKENS = 10_000;

/** Login shells that run nothing: an account made with `useradd --shell /usr/sbin/nologin` has no shell to run commands with. */
const NO_LOGIN_SHELLS: ReadonlySet<string> = new Set(["nologin", "false"]);

/**
 * The shell a command runs with: the call's, the configured one, agentd's own $SHELL, else bash.
 * $SHELL is the account agentd was started as (systemd's `User=`, su): a no-login one would make
 * every command print "This account is currently not available", so it is passed over.
 */
export function resolveShell(requested: string | undefined, configured: string | undefined, environment: string | undefined): string {
  const inherited = environment && !NO_LOGIN_SHELLS.has(environment.slice(environment.lastIndexOf("/") + 1)) ? environment : undefined;
  return requested || configured || inherited || "/bin/bash";
}

/** `-lc` sources the login profile (which may reset PATH); `-c` keeps the daemon's environment as given. */
export function shellArgv(shell: string, login: boolean, cmd: string): string[] {
  return [shell, login ? "-lc" : "-c", cmd];
}

/** The daemon's environment minus secrets, plus the defaults, plus what the caller asked for. */
export function childEnv(
  inherited: Readonly<Record<string, string | undefined>>,
  overrides: Readonly<Record<string, string>> = {},
  options: SecretEnvOptions = {},
): Record<string, string> {
  return { ...withoutSecrets(inherited, options), ...CHILD_ENV_DEFAULTS, ...overrides };
}

export function clampYield(requested: number | undefined, limits: { defaultMs: number; minMs: number; maxMs: number }): number {
  if (requested === undefined || !Number.isFinite(requested)) return limits.defaultMs;
  return Math.min(limits.maxMs, Math.max(limits.minMs, Math.round(requested)));
}

export interface ExecOptions {
  /** Approved in the sudo scope: started without no_new_privs, so setuid programs work. */
  privileged?: boolean;
  /** With `privileged`: the bare escalation's words, exec'd without a shell (privilegedSpawn). */
  argv?: readonly string[];
  /** With `argv`: the tool call a person approved, which a monitor reads again before it runs it. */
  call?: { recordId: string; sessionId: string };
  /** A person's privileged terminal: the API token the request carried. */
  credential?: string;
}

/**
 * A sudo-approved call runs the command the person saw and nothing around it: the configured shell
 * (not one the model named), no login profile (files the agent can write), no extra environment
 * (PATH, BASH_ENV…): none of them is shown on the approval.
 */
export function exactlyAsShown(args: ExecCommandArgs): ExecCommandArgs {
  const { shell: _shell, env: _env, ...shown } = args;
  return { ...shown, login: false };
}

export interface LaunchSettings {
  passEnv: readonly string[];
  withheldEnv: readonly string[];
  loginShell: boolean;
  umask: number | undefined;
}

/** What the launcher is asked to start for one call (the terminal is added once it is open). */
export function launchRequest(
  sessionId: string,
  args: ExecCommandArgs,
  shell: string,
  options: ExecOptions,
  inherited: Readonly<Record<string, string | undefined>>,
  settings: LaunchSettings,
): Omit<LaunchRequest, "tty"> {
  return {
    sessionId,
    kind: options.privileged ? (options.argv ? "escalation" : "terminal") : "command",
    words: options.privileged && options.argv ? options.argv : shellArgv(shell, args.login ?? settings.loginShell, args.cmd),
    env: childEnv(inherited, args.env, { pass: settings.passEnv, withheld: settings.withheldEnv }),
    ...(args.workdir === undefined ? {} : { cwd: args.workdir }),
    ...(settings.umask === undefined ? {} : { umask: settings.umask }),
    ...(options.call ? { call: options.call } : {}),
    ...(options.credential ? { credential: options.credential } : {}),
  };
}
