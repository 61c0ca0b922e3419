import { selfExec, type SelfExec } from "./selfCommand.ts";

/** JavaScriptCore's switch for its optimizing compilers (DFG, and FTL, which builds on it). */
export const OPTIMIZING_JIT_ENV = "BUN_JSC_useDFGJIT";
/** Set only by the exec below, so the exec'd supervisor knows the option is its own to remove. */
export const SUPERVISOR_JIT_ENV = "AGENTD_SUPERVISOR_JIT";

type Env = Record<string, string | undefined>;
export type Execve = (file: string, args: string[], env: Env) => void;

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
