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

/**
 * Variables that look like credentials. The daemon's own (provider API keys, its token, a database
 * password) must not reach commands the model runs: one `env` would put them in the model's context.
 * Matched on the whole name, broadly: a wrongly withheld variable costs a `pty.pass_env` entry, a
 * leaked one costs the secret.
 */
const SECRET_SUBSTRING = /KEY|TOKEN|SECRET|PASS|PWD|CRED|DSN|AUTH|COOKIE|SESSION|PRIVATE/i;
/** Short markers that are secrets only as a whole word of the name (GITHUB_PAT, not PATH). */
const SECRET_WORD = /(^|_)(PAT|PW|JWT|OTP)(_|$)/i;
const SECRET_WHOLE = /^DATABASE_URL$|_WEBHOOK_URL$/i;
/** The shell's own working-directory variables merely contain "PWD". */
const NOT_SECRET = new Set(["PWD", "OLDPWD"]);

export function looksSecret(name: string): boolean {
  if (NOT_SECRET.has(name)) return false;
  return SECRET_SUBSTRING.test(name) || SECRET_WORD.test(name) || SECRET_WHOLE.test(name);
}

/** Internal variables between the supervisor and the worker; meaningless to a child. */
const INTERNAL_NAME = /^AGENTD_(SUPERVISOR_PID|WORKER_RESTARTS|OPERATOR_UMASK)$/;

export interface ChildEnvOptions {
  /** Names the operator lets through (pty.pass_env), secret-looking or not. */
  pass?: readonly string[];
  /** Names the config reads secrets from (`{env:NAME}`): withheld whatever they look like. */
  withheld?: readonly string[];
}

/** The daemon's environment minus secrets, plus the defaults, plus what the caller asked for. */
export function childEnv(
  inherited: Readonly<Record<string, string | undefined>>,
  overrides: Readonly<Record<string, string>> = {},
  options: ChildEnvOptions = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  const pass = new Set(options.pass ?? []);
  const withheld = new Set(options.withheld ?? []);
  for (const [key, value] of Object.entries(inherited)) {
    if (value === undefined || INTERNAL_NAME.test(key)) continue;
    if ((withheld.has(key) || looksSecret(key)) && !pass.has(key)) continue;
    env[key] = value;
  }
  return { ...env, ...CHILD_ENV_DEFAULTS, ...overrides };
}

export function clampYield(requested: number | undefined, limits: { defaultMs: number; minMs: number; maxMs: number }): number {
  if (requested === undefined || !Number.isFinite(requested)) return limits.defaultMs;
  return Math.min(limits.maxMs, Math.max(limits.minMs, Math.round(requested)));
}
