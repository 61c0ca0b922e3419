import { ConfigError } from "../config/configError.ts";
import { AgentdError } from "../errors/index.ts";
import { formatHelp, parseCommandArgs, UsageError, type Command } from "./command.ts";
import { configCheckCommand } from "./commands/configCheck.ts";
import { healthCommand } from "./commands/health.ts";
import { initCommand } from "./commands/init.ts";
import { serveCommand } from "./commands/serve.ts";
import { statusCommand } from "./commands/status.ts";
import { versionCommand } from "./commands/version.ts";

const COMMANDS: Command[] = [serveCommand, healthCommand, statusCommand, initCommand, configCheckCommand, versionCommand];

function topLevelHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.path.join(" ").length));
  return [
    "agentd: a resilient LLM proxy, a host-operating agent and its watchdog, in one binary.",
    "",
    "Usage: agentd <command> [options]",
    "",
    "Commands:",
    ...COMMANDS.map((c) => `  ${c.path.join(" ").padEnd(width)}  ${c.summary}`),
    "",
    "Run 'agentd <command> --help' for a command's options.",
    "",
  ].join("\n");
}

function findCommand(argv: string[]): { command: Command; rest: string[] } | undefined {
  const matches = COMMANDS.filter((c) => c.path.every((word, i) => argv[i] === word));
  const best = matches.sort((a, b) => b.path.length - a.path.length)[0];
  return best ? { command: best, rest: argv.slice(best.path.length) } : undefined;
}

/** Runs the CLI; returns the exit code. Errors become one clear line on stderr, never a stack. */
export async function runCli(argv: string[]): Promise<number> {
  const first = argv[0];
  if (first === undefined || first === "help" || first === "--help" || first === "-h") {
    process.stdout.write(topLevelHelp());
    return first === undefined ? 2 : 0;
  }
  if (first === "--version" || first === "-v") return versionCommand.run({ values: {}, positionals: [] });
  const found = findCommand(argv);
  if (!found) {
    const group = COMMANDS.filter((c) => c.path.length > 1 && c.path[0] === first);
    const hint = group.length ? `; try ${group.map((c) => `'agentd ${c.path.join(" ")}'`).join(", ")}` : "; run 'agentd --help' for the list";
    process.stderr.write(`agentd: unknown command "${argv.slice(0, group.length ? 2 : 1).join(" ")}"${hint}\n`);
    return 2;
  }
  const { command, rest } = found;
  try {
    const input = parseCommandArgs(command, rest);
    if (input.values.help) {
      process.stdout.write(formatHelp(command));
      return 0;
    }
    return await command.run(input);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`agentd ${command.path.join(" ")}: ${error.message}\nRun 'agentd ${command.path.join(" ")} --help' for usage.\n`);
      return 2;
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
  }
}
