import { accessSync, constants } from "node:fs";
import { PtyError } from "./ptyErrors.ts";

/** Where a privileged call's program is looked up: never a directory agentd's user could write. */
const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/**
 * What a privileged call keeps of agentd's environment: the locale, nothing that runs code. Not
 * HOME: a sudoers `env_keep += HOME` would then point root's programs at the model's dotfiles; the
 * escalator sets the target user's own.
 */
const KEPT = ["LANG", "LC_ALL", "LC_CTYPE"];

/**
 * How a bare escalation allowed in the sudo scope starts: its words exec'd as they are (no shell,
 * so no startup file the model could write is read first), its program found in the system bin
 * directories only, in a fixed environment.
 */
export function privilegedSpawn(
  argv: readonly string[],
  cwd: string | undefined,
): { argv: string[]; env: Record<string, string>; cwd?: string } {
  const [program, ...rest] = argv;
  if (program === undefined) throw new PtyError("pty_spawn_failed", "A privileged call needs a program");
  const env: Record<string, string> = { PATH: SYSTEM_PATH, TERM: "xterm-256color" };
  for (const name of KEPT) if (process.env[name] !== undefined) env[name] = process.env[name]!;
  // Without a directory on the card it runs in "/", not in agentd's own (where a program run as root
  // could pick up a module the model left there).
  return { argv: [resolveSystemProgram(program), ...rest], env, cwd: cwd ?? "/" };
}

function resolveSystemProgram(program: string): string {
  if (program.includes("/")) return program;
  for (const dir of SYSTEM_PATH.split(":")) {
    const candidate = `${dir}/${program}`;
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not in this directory.
    }
  }
  throw new PtyError("pty_spawn_failed", `${program} was not found in the system bin directories (${SYSTEM_PATH})`);
}
