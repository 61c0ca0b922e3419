import { realpathSync } from "node:fs";
import { isCompiledBinary } from "../core/process/index.ts";

/** JavaScriptCore's switch for its optimizing compilers (DFG, and FTL, which builds on it). */
export const OPTIMIZING_JIT_ENV = "BUN_JSC_useDFGJIT";
/** Set only by the exec below, so the exec'd supervisor knows the option is its own to remove. */
export const SUPERVISOR_JIT_ENV = "AGENTD_SUPERVISOR_JIT";

type Env = Record<string, string | undefined>;
export type Execve = (file: string, args: string[], env: Env) => void;
/** What to exec: the file, and the argv it gets (argv[0] included). */
export interface SelfExec {
  file: string;
  args: string[];
}

// Bun has Node's process.execve (Node 23.11); the @types/node in use predates it.
const processExecve: Execve = (file, args, env) => (process as unknown as { execve: Execve }).execve(file, args, env);

/**
 * Runs the supervisor without the optimizing compilers, by exec'ing itself once with the option
 * set: JSC reads its options only as a process starts. The supervisor is a monitor whose timers
 * (the watchdog's tick, the worker probe) run the same few functions for as long as agentd runs;
 * optimizing them pulls ~5 MB of the compilers' own machine code into its memory for good, for a
 * process that spends ~2 µs of CPU per proxied request. The worker keeps them: the proxy's CPU is
 * its. Returns why the exec could not happen, or undefined when the supervisor runs as intended.
 */
export function execWithoutOptimizingJit(
  env: Env = process.env,
  self: SelfExec = selfExec(),
  execve: Execve = processExecve,
): string | undefined {
  if (env[SUPERVISOR_JIT_ENV] === "1") {
    // Nothing the supervisor starts (the worker above all) inherits what was set for it alone.
    delete env[OPTIMIZING_JIT_ENV];
    delete env[SUPERVISOR_JIT_ENV];
    return undefined;
  }
  // The operator's own choice for JSC stands, for both processes.
  if (env[OPTIMIZING_JIT_ENV] !== undefined) return undefined;
  try {
    execve(self.file, self.args, { ...env, [OPTIMIZING_JIT_ENV]: "0", [SUPERVISOR_JIT_ENV]: "1" });
  } catch (error) {
    return `Cannot exec ${self.file} to run the supervisor without the optimizing JIT: ${(error as Error).message}`;
  }
  return undefined;
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
