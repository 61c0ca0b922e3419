import { type SecretEnvOptions, withoutSecrets } from "../core/process/index.ts";

/** Pure choices made before a command starts: its shell, argv, environment, size and wait time. */

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

export function resolveShell(requested: string | undefined, configured: string | undefined, environment: string | undefined): string {
  return requested || configured || environment || "/bin/bash";
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
