const ENV_REFERENCE = /\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g;

type ErrorFactory = (path: readonly (string | number)[], reason: string) => Error;

/**
 * Replaces `{env:NAME}` in every string value, so secrets stay out of the file. A reference to an
 * unset variable is an error at that value's location, not a silent empty string.
 */
export function interpolateEnv(
  value: unknown,
  env: Record<string, string | undefined>,
  fail: ErrorFactory,
  path: (string | number)[] = [],
  onReference: (name: string) => void = () => {},
): unknown {
  if (typeof value === "string") {
    return value.replace(ENV_REFERENCE, (_match, name: string) => {
      onReference(name);
      const resolved = env[name];
      if (resolved === undefined || resolved === "")
        throw fail(path, `environment variable ${name} is not set (referenced as {env:${name}})`);
      return resolved;
    });
  }
  if (Array.isArray(value)) return value.map((item, index) => interpolateEnv(item, env, fail, [...path, index], onReference));
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, interpolateEnv(item, env, fail, [...path, key], onReference)]),
    );
  }
  return value;
}
