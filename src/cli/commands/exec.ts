import { UsageError, type Command } from "../command.ts";
import { DAEMON_LOCATION_HELP, DAEMON_OPTIONS, daemonError, daemonFetch, daemonTargetFrom } from "../daemonClient.ts";

interface PtyAnswer {
  session_id: string | null;
  output: string;
  running: boolean;
  exit_code: number | null;
}

/** How long each request collects output: short enough to stream, long enough not to spin. */
const YIELD_MS = 500;

/** One argv word as the remote shell must see it: bare when safe, else single-quoted. */
function quote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

export const execCommand: Command = {
  path: ["exec"],
  summary: "Run a command on a connected hop (or local) through the daemon; streams its output and exits with its code.",
  usage: "agentd exec HOP|local [--workdir DIR] -- CMD [ARGS…]",
  options: { workdir: { type: "string" }, ...DAEMON_OPTIONS },
  allowPositionals: true,
  help: [
    "      --workdir DIR     directory to run in (default: the daemon's, on the host that runs it)",
    "      --url URL         agentd to ask (default: the local daemon)",
    ...DAEMON_LOCATION_HELP,
    "",
    "The command runs in a terminal of the target's agentd, as the agent's exec_command does, outside",
    "the approval policy: this is you, not the model. Put -- before the command so its options stay its own.",
  ],
  async run({ values, positionals }) {
    const [on, ...argv] = positionals;
    if (!on || argv.length === 0) throw new UsageError("expected a target and a command: agentd exec HOP|local -- CMD [ARGS…]");
    const daemon = daemonTargetFrom(values);
    const post = async (path: string, body: Record<string, unknown>): Promise<PtyAnswer> => {
      const response = await daemonFetch(daemon, path, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...body, target: on }),
        timeoutMs: YIELD_MS + 30_000,
      });
      const text = await response.text();
      if (!response.ok) throw daemonError(response.status, text);
      return JSON.parse(text) as PtyAnswer;
    };
    let answer = await post("/api/pty", {
      cmd: argv.map(quote).join(" "),
      ...(typeof values.workdir === "string" ? { workdir: values.workdir } : {}),
      yield_time_ms: YIELD_MS,
      max_output_tokens: 1_000_000,
    });
    // Ctrl-C goes to the command (as ^C in its terminal), which decides how to end; we keep reading.
    let interrupts = "";
    const onInterrupt = () => {
      interrupts += "\u0003";
    };
    process.on("SIGINT", onInterrupt);
    try {
      for (;;) {
        process.stdout.write(answer.output);
        if (!answer.running || !answer.session_id) break;
        const chars = interrupts;
        interrupts = "";
        answer = await post(`/api/pty/${encodeURIComponent(answer.session_id)}/stdin`, {
          chars,
          yield_time_ms: YIELD_MS,
          max_output_tokens: 1_000_000,
        });
      }
    } finally {
      process.off("SIGINT", onInterrupt);
    }
    return answer.exit_code ?? 1;
  },
};
