/**
 * Variables that look like credentials. The daemon's own (provider API keys, its token, a database
 * password) must not reach commands it starts: one `env` would put them in the model's context.
 * Matched on the whole name, broadly: a wrongly withheld variable costs a `pty.pass_env` entry, a
 * leaked one costs the secret. Pure.
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
const INTERNAL_NAME = /^AGENTD_(SUPERVISOR_PID|WORKER_RESTARTS|OPERATOR_UMASK|CHILD_TMPDIR|NO_CONFIG_SEARCH)$/;
/** The TMPDIR agentd was started with: the worker's own is private, its children get this one back. */
export const CHILD_TMPDIR_ENV = "AGENTD_CHILD_TMPDIR";

export interface SecretEnvOptions {
  /** Names the operator lets through (pty.pass_env), secret-looking or not, holding a secret value or not. */
  pass?: readonly string[];
  /** Names the config reads secrets from (`{env:NAME}`): withheld whatever they look like. */
  withheld?: readonly string[];
  /**
   * Secret values (provider API keys, the API token, every `{env:NAME}` value the config read): a
   * variable whose value contains one is withheld whatever its name. `sudo -u agentd env KEY=sk-…
   * agentd serve` leaves the key in SUDO_COMMAND. Added to those of withholdSecretValues.
   */
  secretValues?: readonly string[];
}

/** Shorter values are not matched: a short "secret" (a port, "true") would withhold half the environment. */
const MIN_SECRET_VALUE_LENGTH = 8;

const processSecretValues = new Set<string>();

/**
 * The secret values every withoutSecrets of this process withholds from now on, so each way a
 * command starts (the PTY manager, agentd's own commands) gets them without being told. Only ever
 * added to: a key a reload replaced stays in variables set before (SUDO_COMMAND), and a secret.
 */
export function withholdSecretValues(values: readonly string[]): void {
  for (const value of values) if (value.length >= MIN_SECRET_VALUE_LENGTH) processSecretValues.add(value);
}

/** `inherited` without secret-looking, withheld, secret-holding and internal variables (unless passed). Pure but for withholdSecretValues. */
export function withoutSecrets(
  inherited: Readonly<Record<string, string | undefined>>,
  options: SecretEnvOptions = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  const pass = new Set(options.pass ?? []);
  const withheld = new Set(options.withheld ?? []);
  const secretValues = [...(options.secretValues ?? []).filter((value) => value.length >= MIN_SECRET_VALUE_LENGTH), ...processSecretValues];
  const childTmp = inherited[CHILD_TMPDIR_ENV];
  for (const [key, value] of Object.entries(inherited)) {
    if (value === undefined || INTERNAL_NAME.test(key)) continue;
    if (key === "TMPDIR" && childTmp !== undefined) continue;
    const secret = withheld.has(key) || looksSecret(key) || secretValues.some((secretValue) => value.includes(secretValue));
    if (secret && !pass.has(key)) continue;
    env[key] = value;
  }
  if (childTmp) env.TMPDIR = childTmp;
  return env;
}
