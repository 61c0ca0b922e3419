import { fstatSync } from "node:fs";
import { UsageError, type Command } from "../command.ts";
import { DAEMON_LOCATION_HELP, DAEMON_OPTIONS, daemonTargetFrom } from "../daemonClient.ts";
import { PipedInput } from "../pipedInput.ts";
import { DaemonTerminal, followTerminal, YIELD_MS } from "../terminalFollower.ts";
import { TYPING_STTY } from "../terminalTyping.ts";

/** One argv word as the remote shell must see it: bare when safe, else single-quoted. */
function quote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Stdin is a pipe or a file with something in it: input the person likely meant to send. */
function stdinHoldsInput(): boolean {
  try {
    const stat = fstatSync(0);
    return stat.isFIFO() || stat.isSocket() || (stat.isFile() && stat.size > 0);
  } catch {
    return false;
  }
}

export const execCommand: Command = {
  path: ["exec"],
  summary: "Run a command on a connected hop (or local) through the daemon; streams its output and exits with its code.",
  usage: "agentd exec HOP|local [-i] [--workdir DIR] -- CMD [ARGS…]",
  options: { workdir: { type: "string" }, interactive: { type: "boolean", short: "i" }, ...DAEMON_OPTIONS },
  allowPositionals: true,
  help: [
    "  -i, --interactive     send this command's stdin to the command, and its end as end of input",
    "      --workdir DIR     directory to run in (default: the daemon's, on the host that runs it)",
    "      --url URL         agentd to ask (default: the local daemon)",
    ...DAEMON_LOCATION_HELP,
    "",
    "The command runs in a terminal of the target's agentd, as the agent's exec_command does, outside",
    "the approval policy: this is you, not the model. Put -- before the command so its options stay its own.",
    "With -i (echo hi | agentd exec -i local -- cat) the input is typed into that terminal, under",
    `${TYPING_STTY} (and -onlcr when stdout is not a terminal, so output lines end in \\n alone).`,
    "On a terminal Ctrl-C goes to the command as ^C, and Ctrl-] detaches: the command goes on, and the",
    "agentd attach that follows it again is printed (exit 0). Without -i other keys are not sent.",
    "Exit codes: the command's own; 1 when agentd could not run it; 2 for a usage error or no daemon.",
  ],
  async run({ values, positionals }) {
    const [on, ...argv] = positionals;
    if (!on || argv.length === 0) throw new UsageError("expected a target and a command: agentd exec HOP|local -- CMD [ARGS…]");
    const daemon = daemonTargetFrom(values);
    const input = values.interactive === true ? new PipedInput(process.stdin) : undefined;
    // Without -i the command's terminal gets no input, as with kubectl exec; a command reading it waits.
    if (!input && stdinHoldsInput()) process.stderr.write("agentd exec: stdin is not sent to the command without -i (agentd exec -i …)\n");
    const cmd = argv.map(quote).join(" ");
    // Set before the command starts, so no input is echoed and the output is the command's alone.
    const stty = `${TYPING_STTY}${process.stdout.isTTY ? "" : " -onlcr"}`;
    const terminal = new DaemonTerminal(daemon, on);
    const first = await terminal
      .post("/api/pty", {
        cmd: input ? `${stty} 2>/dev/null; ${cmd}` : cmd,
        ...(typeof values.workdir === "string" ? { workdir: values.workdir } : {}),
        yield_time_ms: YIELD_MS,
        max_output_tokens: 1_000_000,
      })
      .catch((error: unknown) => {
        // Not started: stdin must not keep this command waiting.
        input?.close();
        throw error;
      });
    return followTerminal(terminal, first, { ...(input ? { input } : {}), location: values });
  },
};
