import { confinedSpawn, plainSpawn } from "./confinement/ownCommands.ts";
import { trackChild } from "./ownChildren.ts";
import { raceTimeout } from "./raceTimeout.ts";

export interface RunCommandOptions {
  argv: string[];
  timeoutMs: number;
  signal?: AbortSignal;
  /** Output kept (the tail: the end of a failing command's output says why). */
  maxOutputBytes?: number;
  /** Between SIGTERM and SIGKILL when the command is stopped. */
  graceMs?: number;
  /**
   * Start it as the agent's commands start: no_new_privs, agentd's own files hidden
   * (confineOwnCommands). For what agentd runs unasked (a status command, a check): what it reads
   * may have been written by the agent. Not for an approved action, which may need sudo.
   */
  confined?: boolean;
}

export interface CommandResult {
  exit_code: number | null;
  /** The signal that ended it, when one did. */
  signal: string | null;
  /** stdout and stderr, interleaved as they came, at most maxOutputBytes (the tail). */
  output: string;
  truncated: boolean;
  timed_out: boolean;
  cancelled: boolean;
}

const DEFAULT_OUTPUT_BYTES = 16 * 1024;

type ConfinedRunner = (options: RunCommandOptions) => Promise<CommandResult>;
let confinedElsewhere: ConfinedRunner | undefined;

/**
 * Set once at start by a worker that cannot start commands as the command user itself (it runs as
 * a service user): its confined commands are run by agentd's privileged monitor.
 */
export function runConfinedCommandsWith(runner: ConfinedRunner): void {
  confinedElsewhere = runner;
}
const PIPE_GRACE_MS = 1000;

/**
 * Runs a command in its own process group with a deadline. A timeout or cancel stops the whole
 * group (SIGTERM, then SIGKILL after a grace), so a shell's children cannot outlive it or hold its
 * pipes open; the output kept is bounded however much the command writes.
 */
export async function runCommand(options: RunCommandOptions): Promise<CommandResult> {
  if (options.confined && confinedElsewhere) return confinedElsewhere(options);
  const limit = options.maxOutputBytes ?? DEFAULT_OUTPUT_BYTES;
  // Never with agentd's secrets (provider keys, the config's {env:…} names): what runs may be a script the agent wrote.
  const spawn = options.confined ? confinedSpawn(options.argv, process.env) : plainSpawn(options.argv, process.env);
  const child = trackChild(Bun.spawn(spawn.argv, { stdin: "ignore", stdout: "pipe", stderr: "pipe", detached: true, env: spawn.env }));
  let timedOut = false;
  let cancelled = false;
  let killTimer: ReturnType<typeof setTimeout> | undefined;
  const signalGroup = (sig: NodeJS.Signals) => {
    try {
      process.kill(-child.pid, sig);
    } catch {
      // The group is already gone.
    }
  };
  const stop = () => {
    signalGroup("SIGTERM");
    if (killTimer === undefined) killTimer = setTimeout(() => signalGroup("SIGKILL"), options.graceMs ?? 2000);
  };
  const deadline = setTimeout(() => {
    timedOut = true;
    stop();
  }, options.timeoutMs);
  const onAbort = () => {
    cancelled = true;
    stop();
  };
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let truncated = false;
  const readers = [child.stdout.getReader(), child.stderr.getReader()];
  const collect = async (reader: (typeof readers)[number]) => {
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      kept.push(Buffer.from(read.value));
      keptBytes += read.value.byteLength;
      while (keptBytes > limit && kept.length > 1) {
        keptBytes -= kept.shift()!.byteLength;
        truncated = true;
      }
    }
  };
  try {
    const collected = Promise.all(readers.map(collect));
    const exitCode = await child.exited;
    // A background child left holding the pipes must not keep the caller waiting (or the pipes
    // open): read a little longer, then let go of them.
    if ((await raceTimeout(collected, PIPE_GRACE_MS)) === "timeout") {
      // A reader may already be closed; cancelling it then has nothing to say.
      await Promise.all(readers.map((reader) => reader.cancel().catch(() => undefined)));
    }
    let output = Buffer.concat(kept).toString("utf8");
    if (output.length > limit) {
      output = output.slice(-limit);
      truncated = true;
    }
    return {
      exit_code: child.signalCode ? null : exitCode,
      signal: child.signalCode ? String(child.signalCode) : null,
      output,
      truncated,
      timed_out: timedOut,
      cancelled,
    };
  } finally {
    clearTimeout(deadline);
    // killTimer stays: members of a stopped group can outlive its leader and still get the SIGKILL.
    options.signal?.removeEventListener("abort", onAbort);
  }
}
