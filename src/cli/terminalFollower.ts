import { daemonError, daemonFetch, type DaemonTarget } from "./daemonClient.ts";
import type { PipedInput } from "./pipedInput.ts";
import { reattachCommand } from "./reattachCommand.ts";
import { writeOwnText } from "./terminalOutput.ts";

export interface PtyAnswer {
  session_id: string | null;
  output: string;
  running: boolean;
  exit_code: number | null;
}

/** How long each request collects output: short enough to stream, long enough not to spin. */
export const YIELD_MS = 500;
/** While input waits to be sent, requests come this often (the daemon's shortest wait). */
const FEEDING_YIELD_MS = 50;
const CTRL_C = "\x03";
/** Ctrl-], telnet's and docker's escape: leaves the command running. */
export const DETACH_KEY = "\x1d";

/** A terminal of the daemon (local or on a hop) asked through /api/pty, as `agentd exec` and `agentd attach` do. */
export class DaemonTerminal {
  constructor(
    private readonly daemon: DaemonTarget,
    /** The hop it runs on, or "local". */
    readonly on: string,
  ) {}

  async post(path: string, body: Record<string, unknown>): Promise<PtyAnswer> {
    const response = await daemonFetch(this.daemon, path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...body, target: this.on }),
      timeoutMs: YIELD_MS + 30_000,
    });
    const text = await response.text();
    if (!response.ok) throw daemonError(response.status, text);
    return JSON.parse(text) as PtyAnswer;
  }

  /** Sends `chars` (maybe none) to a running session and collects what it printed meanwhile. */
  type(sessionId: string, chars: string, yieldMs = YIELD_MS): Promise<PtyAnswer> {
    return this.post(`/api/pty/${encodeURIComponent(sessionId)}/stdin`, { chars, yield_time_ms: yieldMs, max_output_tokens: 1_000_000 });
  }
}

/**
 * Prints a terminal session's output until its command ends (returning its exit code) or the
 * person detaches with Ctrl-] (returning 0, after printing the `agentd attach` that follows it
 * again). Ctrl-C goes to the command as ^C, which decides how to end; piped input is typed in.
 */
export async function followTerminal(
  terminal: DaemonTerminal,
  first: PtyAnswer,
  options: { input?: PipedInput; location: Record<string, string | boolean | undefined> },
): Promise<number> {
  const { input } = options;
  let interrupts = "";
  let detached = false;
  const onInterrupt = () => {
    interrupts += CTRL_C;
  };
  // On a terminal whose keys are not the command's input, keys are read one at a time: Ctrl-C
  // arrives as a key then (raw mode), and Ctrl-] detaches.
  const keys = !input && process.stdin.isTTY === true && typeof process.stdin.setRawMode === "function" ? process.stdin : undefined;
  const onKey = (chunk: Buffer | string) => {
    for (const key of String(chunk)) {
      if (key === CTRL_C) interrupts += CTRL_C;
      if (key === DETACH_KEY) detached = true;
    }
  };
  process.on("SIGINT", onInterrupt);
  if (keys) {
    keys.setRawMode(true);
    keys.on("data", onKey);
    keys.resume();
  }
  let answer = first;
  try {
    for (;;) {
      // The command's own output, as ssh prints it: the person asked to run it (attach runs guarded).
      writeOwnText(process.stdout, answer.output);
      if (!answer.running || !answer.session_id) break;
      if (detached) {
        const again = reattachCommand(answer.session_id, { on: terminal.on }, options.location);
        writeOwnText(
          process.stderr,
          `\r\nDetached: the command goes on in agentd (terminal ${answer.session_id}). Re-attach: ${again}\r\n`,
        );
        return 0;
      }
      const chars = interrupts + (input?.take() ?? "");
      interrupts = "";
      answer = await terminal.type(answer.session_id, chars, input?.waiting ? FEEDING_YIELD_MS : YIELD_MS);
    }
  } finally {
    process.off("SIGINT", onInterrupt);
    input?.close();
    if (keys) {
      keys.off("data", onKey);
      keys.setRawMode(false);
      keys.pause();
      // A paused terminal must not keep the command alive once it has nothing else to do.
      keys.unref();
    }
  }
  return answer.exit_code ?? 1;
}
