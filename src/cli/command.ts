import { parseArgs, type ParseArgsConfig } from "node:util";
import { AgentdError } from "../core/errors/index.ts";

/**
 * Exit codes every command shares (docs/command-line.md, "Exit codes"): no daemon at the address
 * (its own code, so a script tells "agentd is down" from "I called it wrong", which is 2), and a
 * token it wants but did not get.
 */
export const EXIT_UNREACHABLE = 5;
export const EXIT_TOKEN = 4;

export type OptionSpec = NonNullable<ParseArgsConfig["options"]>;

export interface Command {
  /** Words that select it: ["config", "check"]. */
  path: string[];
  summary: string;
  usage: string;
  options: OptionSpec;
  /** Lines of `--help` describing each option. */
  help: string[];
  allowPositionals?: boolean;
  run(input: CommandInput): Promise<number>;
}

export interface CommandInput {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

/** Wrong usage: printed with a hint, exit code 2. */
export class UsageError extends AgentdError {
  constructor(message: string) {
    super("usage_error", message);
  }
}

/**
 * Options whose value may begin with a dash: agentd's token is base64url, which starts with `-` once
 * in 64 tokens, and parseArgs refuses `--token -x…` as ambiguous. The word after them is their value.
 */
const TAKES_ANY_VALUE = new Set(["--token"]);

function joinAnyValues(command: Command, argv: string[]): string[] {
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    const value = argv[i + 1];
    if (word === "--") {
      joined.push(...argv.slice(i));
      break;
    }
    if (TAKES_ANY_VALUE.has(word) && command.options[word.slice(2)]?.type === "string" && value !== undefined) {
      joined.push(`${word}=${value}`);
      i++;
    } else joined.push(word);
  }
  return joined;
}

export function parseCommandArgs(command: Command, argv: string[]): CommandInput {
  try {
    const { values, positionals } = parseArgs({
      args: joinAnyValues(command, argv),
      options: { ...command.options, help: { type: "boolean", short: "h" } },
      allowPositionals: command.allowPositionals ?? false,
      strict: true,
    });
    return { values: values as CommandInput["values"], positionals };
  } catch (error) {
    // parseArgs messages are clear but mention its own option names; keep the first sentence.
    const message = (error as Error).message.split(". To specify")[0]!;
    throw new UsageError(message.replace(/^Unknown option/, "unknown option").replace(/^Unexpected argument/, "unexpected argument"));
  }
}

export function formatHelp(command: Command): string {
  return [
    `Usage: ${command.usage}`,
    "",
    command.summary,
    "",
    "Options:",
    ...command.help,
    "  -h, --help            show this help",
    "",
  ].join("\n");
}

/** Parses "30s", "2m", "500ms", "1h", or a plain number of seconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match) throw new UsageError(`Cannot read "${text}" as a duration: expected a number with ms, s, m or h (e.g. 30s)`);
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] ?? "s"]!;
  return Number(match[1]) * factor;
}
