import { ptr, read } from "bun:ffi";
import { openLibc } from "../../core/ffi/openLibc.ts";
import { accessSync, constants, readdirSync } from "node:fs";
import { cString, cStringArray } from "../cStrings.ts";
import { landlockAbi, restrictSelf, setNoNewPrivs } from "./landlock.ts";
import { planHiding, type PlanFs } from "./landlockPlan.ts";
import { EXEC_MARKER } from "../../core/process/confinement/confineVerb.ts";
import { commandEnv } from "../../core/process/confinement/helperEnv.ts";

const EXIT_CANNOT_CONFINE = 126;
const EXIT_NOT_FOUND = 127;
/** Every signal, the real-time ones (which glibc keeps for itself in its signal()) included. */
const SIGNALS = 64;
const SYS_RT_SIGACTION = process.arch === "arm64" ? 134 : 13;
const SIGKILL = 9;
const SIGSTOP = 19;
const SIG_SETMASK = 2;

/**
 * `agentd __confine [--hide PATH]... [--cwd DIR] --exec ARGV…`: sets no_new_privs, hides the paths with Landlock, changes to DIR,
 * gives back default signal handling (Bun ignores SIGPIPE; an ignored signal survives exec), then
 * execs ARGV in this same process. It only returns when it cannot do all of that: a command is
 * never started with less confinement than asked for.
 */
export function confineMain(args: readonly string[]): number {
  const split = args.indexOf(EXEC_MARKER);
  const options = split < 0 ? args : args.slice(0, split);
  const argv = split < 0 ? [] : args.slice(split + 1);
  const hide: string[] = [];
  let cwd: string | undefined;
  for (let i = 0; i < options.length; i += 2) {
    const value = options[i + 1];
    if (value === undefined) return fail(`${options[i]} needs a value`, 2);
    if (options[i] === "--hide") hide.push(value);
    else if (options[i] === "--cwd") cwd = value;
    else return fail(`unexpected argument ${options[i]}`, 2);
  }
  if (argv.length === 0) return fail(`no command after ${EXEC_MARKER}`, 2);
  try {
    setNoNewPrivs();
    const abi = landlockAbi();
    if (hide.length > 0) {
      if (abi === 0) throw new Error("Landlock is not available in this kernel");
      const plan = planHiding(hide, hostPlanFs);
      if (plan.exposed.length > 0) throw new Error(plan.exposed.map((e) => e.why).join("; "));
      restrictSelf(plan.rules, abi);
    } else if (abi > 0) {
      // Nothing to hide, but a Landlock domain of its own all the same: a command in one cannot
      // ptrace a process outside it (a terminal started without no_new_privs for an approved
      // sudo call, the operator's shells), which no_new_privs alone does not prevent.
      restrictSelf([{ path: "/", access: "all", directory: true }], abi);
    }
    if (cwd !== undefined) process.chdir(cwd);
    return execReplacing(argv);
  } catch (error) {
    return fail((error as Error).message, EXIT_CANNOT_CONFINE);
  }
}

/** The host's filesystem as the plan sees it. */
export const hostPlanFs: PlanFs = {
  list(dir) {
    try {
      return readdirSync(dir, { withFileTypes: true }).map((entry) => ({
        name: entry.name,
        directory: entry.isDirectory(),
        symlink: entry.isSymbolicLink(),
      }));
    } catch {
      return undefined;
    }
  },
  writable(dir) {
    try {
      accessSync(dir, constants.W_OK);
      return true;
    } catch {
      return false;
    }
  },
};

function execReplacing(argv: readonly string[]): number {
  const libc = loadExecLibc();
  // A zeroed struct sigaction is SIG_DFL with no flags; the raw call, since glibc refuses 32 and 33.
  const defaultAction = new Uint8Array(32);
  for (let signal = 1; signal <= SIGNALS; signal++)
    if (signal !== SIGKILL && signal !== SIGSTOP) libc.syscall(SYS_RT_SIGACTION, signal, defaultAction, null, 8);
  // sigset_t is 128 bytes in glibc and musl; all clear: nothing blocked.
  libc.sigprocmask(SIG_SETMASK, new Uint8Array(128), null);
  const { array, keepAlive } = cStringArray(argv);
  const environment = cStringArray(Object.entries(commandEnv(process.env)).map(([name, value]) => `${name}=${value}`));
  libc.execvpe(cString(argv[0]!), ptr(array), ptr(environment.array));
  void keepAlive;
  void environment.keepAlive;
  const errno = read.i32(libc.__errno_location()!, 0);
  return fail(
    `cannot run ${argv[0]}: ${errno === 2 ? "not found" : errno === 13 ? "permission denied" : `errno ${errno}`}`,
    EXIT_NOT_FOUND,
  );
}

function loadExecLibc() {
  const symbols = {
    execvpe: { args: ["ptr", "ptr", "ptr"], returns: "i32" },
    syscall: { args: ["i64", "i64", "ptr", "ptr", "i64"], returns: "i64" },
    sigprocmask: { args: ["i32", "ptr", "ptr"], returns: "i32" },
    __errno_location: { args: [], returns: "ptr" },
  } as const;
  return openLibc(symbols).symbols;
}

function fail(message: string, code: number): number {
  process.stderr.write(`agentd: cannot start the command confined: ${message}\n`);
  return code;
}

if (import.meta.main) process.exitCode = confineMain(process.argv.slice(2));
