/**
 * Variables that would change the confinement helper itself before it has confined anything: the
 * dynamic loader's (LD_PRELOAD, LD_AUDIT…), Bun's (BUN_OPTIONS=--preload runs a script first) and
 * glibc's. The worker hands them over renamed; the helper gives the command its names back once it
 * is confined. Pure.
 */
const UNSAFE_FOR_HELPER = /^(LD_|BUN_)|^(GLIBC_TUNABLES|GCONV_PATH|NODE_OPTIONS|MALLOC_[A-Z_]+)$/;
const CARRIED = "AGENTD_CONFINED_";

/** The command's environment as the helper must start with it. */
export function helperEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) out[UNSAFE_FOR_HELPER.test(name) ? CARRIED + name : name] = value;
  return out;
}

/** The command's environment again, inside the helper once it is confined. */
export function commandEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (name.startsWith(CARRIED)) out[name.slice(CARRIED.length)] = value;
    else if (!(name in out)) out[name] = value;
  }
  return out;
}
