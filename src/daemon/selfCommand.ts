import { realpathSync } from "node:fs";
import { isCompiledBinary } from "../core/process/compiledBinary.ts";

/**
 * The argv prefix that runs this same program again: the compiled binary alone, or
 * `bun main.ts` when running from source (tests, development).
 */
export function selfCommand(): string[] {
  return isCompiledBinary() ? [process.execPath] : [process.execPath, Bun.main];
}

/** What to exec to become this process again: the file, and the argv it gets (argv[0] included). */
export interface SelfExec {
  file: string;
  args: string[];
}

/**
 * This same process again, as it was started: the binary by the name it was started by when that
 * name is this binary (a symlink such as /usr/local/bin/agentd keeps its name in ps, pidof and
 * pgrep, which take it from the file exec'd), else the binary itself; from source, bun with its own
 * options and main.ts.
 */
export function selfExec(): SelfExec {
  const args = process.argv.slice(2);
  if (!isCompiledBinary()) return { file: process.execPath, args: [process.execPath, ...process.execArgv, Bun.main, ...args] };
  const started = process.argv0.includes("/") ? process.argv0 : Bun.which(process.argv0);
  return started && sameFile(started, process.execPath)
    ? { file: started, args: [process.argv0, ...args] }
    : { file: process.execPath, args: [process.execPath, ...args] };
}

function sameFile(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}
