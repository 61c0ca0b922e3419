import { join } from "node:path";
import { isCompiledBinary } from "../compiledBinary.ts";
import { CONFINE_VERB, EXEC_MARKER } from "./confineVerb.ts";

/**
 * The argv that starts `argv` confined: no_new_privs, and `hidden` out of reach (Landlock).
 * The compiled binary runs its own `__confine`; from source (tests) the helper file alone starts,
 * which is quicker than the whole CLI.
 */
export function confinedArgv(argv: readonly string[], hidden: readonly string[], cwd?: string): string[] {
  // The helper's code is the PTY capability's (src/pty/confine/confineMain.ts); this file only names it.
  const helper = isCompiledBinary()
    ? [process.execPath, CONFINE_VERB]
    : [process.execPath, join(import.meta.dir, "..", "..", "..", "pty", "confine", "confineMain.ts")];
  const chdir = cwd === undefined ? [] : ["--cwd", cwd];
  return [...helper, ...hidden.flatMap((path) => ["--hide", path]), ...chdir, EXEC_MARKER, ...argv];
}
