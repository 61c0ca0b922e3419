import { ConfigError } from "../core/config/configError.ts";
import { AgentdError } from "../core/errors/index.ts";
import { EXIT_TOKEN, EXIT_UNREACHABLE, formatHelp, parseCommandArgs, UsageError, type Command } from "./command.ts";
import { guardTerminalOutput } from "./terminalOutput.ts";
import { didYouMean } from "../core/config/didYouMean.ts";

interface CommandEntry {
  path: string[];
  /** Commands load on use, so a quick command (version, help) does not pay for the daemon's modules. */
  load: () => Promise<Command>;
}

const COMMANDS: CommandEntry[] = [
  { path: ["serve"], load: async () => (await import("./commands/serve.ts")).serveCommand },
  { path: ["health"], load: async () => (await import("./commands/health.ts")).healthCommand },
  { path: ["status"], load: async () => (await import("./commands/status.ts")).statusCommand },
  { path: ["doctor"], load: async () => (await import("./commands/doctor.ts")).doctorCommand },
  { path: ["providers"], load: async () => (await import("./commands/providers.ts")).providersCommand },
  { path: ["run"], load: async () => (await import("./commands/run.ts")).runCommand },
  { path: ["attach"], load: async () => (await import("./commands/attach.ts")).attachCommand },
  { path: ["approve"], load: async () => (await import("./commands/approve.ts")).approveCommand },
  { path: ["mcp"], load: async () => (await import("./commands/mcp.ts")).mcpCommand },
  { path: ["debug"], load: async () => (await import("./commands/debug.ts")).debugCommand },
  { path: ["hop"], load: async () => (await import("./commands/hop.ts")).hopCommand },
  { path: ["hops"], load: async () => (await import("./commands/hops.ts")).hopsCommand },
  { path: ["incidents"], load: async () => (await import("./commands/incidents.ts")).incidentsCommand },
  { path: ["silence"], load: async () => (await import("./commands/silence.ts")).silenceCommand },
  { path: ["reload"], load: async () => (await import("./commands/reload.ts")).reloadCommand },
  { path: ["exec"], load: async () => (await import("./commands/exec.ts")).execCommand },
  { path: ["logs"], load: async () => (await import("./commands/logs.ts")).logsCommand },
  { path: ["init"], load: async () => (await import("./commands/init.ts")).initCommand },
  { path: ["config", "check"], load: async () => (await import("./commands/configCheck.ts")).configCheckCommand },
  { path: ["version"], load: async () => (await import("./commands/version.ts")).versionCommand },
];

async function topLevelHelp(): Promise<string> {
  const commands = await Promise.all(COMMANDS.map((entry) => entry.load()));
  const width = Math.max(...commands.map((c) => c.path.join(" ").length));
  return [
    "agentd: a resilient LLM proxy, a host-operating agent and its watchdog, in one binary.",
    "",
    "Usage: agentd <command> [options]",
    "",
    "Commands:",
    ...commands.map((c) => `  ${c.path.join(" ").padEnd(width)}  ${c.summary}`),
    "",
    "Run 'agentd <command> --help' for a command's options.",
    "",
  ].join("\n");
}

function findCommand(argv: string[]): { entry: CommandEntry; rest: string[] } | undefined {
  const matches = COMMANDS.filter((c) => c.path.every((word, i) => argv[i] === word));
  const best = matches.sort((a, b) => b.path.length - a.path.length)[0];
  return best ? { entry: best, rest: argv.slice(best.path.length) } : undefined;
}

/** `agentd config --help`: the group's commands, exit 0; a missing or wrong subcommand names them, exit 2. */
async function groupHelp(name: string, group: CommandEntry[], second: string | undefined): Promise<number> {
  if (second !== "--help" && second !== "-h") {
    const wanted = [name, ...(second === undefined ? [] : [second])].join(" ");
    process.stderr.write(`agentd: unknown command "${wanted}"; try ${group.map((c) => `'agentd ${c.path.join(" ")}'`).join(", ")}\n`);
    return 2;
  }
  const commands = await Promise.all(group.map((entry) => entry.load()));
  const lines = [
    `Usage: agentd ${name} <command> [options]`,
    "",
    "Commands:",
    ...commands.map((c) => `  ${c.path.join(" ")}  ${c.summary}`),
    "",
    `Run 'agentd ${name} <command> --help' for a command's options.`,
    "",
  ];
  process.stdout.write(lines.join("\n"));
  return 0;
}

/** Runs the CLI; returns the exit code. Errors become one clear line on stderr, never a stack. */
export async function runCli(argv: string[]): Promise<number> {
  const first = argv[0];
  if (first === undefined || first === "help" || first === "--help" || first === "-h") {
    process.stdout.write(await topLevelHelp());
    return first === undefined ? 2 : 0;
  }
  if (first === "--version" || first === "-v")
    return (await import("./commands/version.ts")).versionCommand.run({ values: {}, positionals: [] });
  const found = findCommand(argv);
  if (!found) {
    const group = COMMANDS.filter((c) => c.path.length > 1 && c.path[0] === first);
    if (group.length) return groupHelp(first, group, argv[1]);
    const suggestion = didYouMean(first, [...new Set(COMMANDS.map((c) => c.path[0]!))]);
    const hint = suggestion ? `; did you mean 'agentd ${suggestion}'?` : "; run 'agentd --help' for the list";
    process.stderr.write(`agentd: unknown command "${first}"${hint}\n`);
    return 2;
  }
  const command = await found.entry.load();
  const { rest } = found;
  // `serve` prints its own JSON log lines (already escaped) and `exec` the output of the command the
  // person asked to run, as ssh would; every other command prints the daemon's data.
  const raw = command.path[0] === "serve" || command.path[0] === "exec";
  const restoreOutput = raw ? () => {} : guardTerminalOutput();
  try {
    const input = parseCommandArgs(command, rest);
    if (input.values.help) {
      process.stdout.write(formatHelp(command));
      return 0;
    }
    return await command.run(input);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(
        `agentd ${command.path.join(" ")}: ${error.message}\nRun 'agentd ${command.path.join(" ")} --help' for usage.\n`,
      );
      return 2;
    }
    // By code: the daemon client's module (and the config loader it needs) loads only with a command that uses it.
    if (error instanceof AgentdError && error.code === "unreachable") {
      process.stderr.write(`${error.message}\n`);
      return EXIT_UNREACHABLE;
    }
    if (error instanceof AgentdError && error.code === "token_rejected") {
      process.stderr.write(`${error.message}\n`);
      return EXIT_TOKEN;
    }
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    if (error instanceof AgentdError) {
      process.stderr.write(`agentd ${command.path.join(" ")}: ${error.message}\n`);
      return 1;
    }
    process.stderr.write(`agentd ${command.path.join(" ")}: unexpected error: ${(error as Error).message ?? String(error)}\n`);
    return 1;
  } finally {
    restoreOutput();
  }
}
