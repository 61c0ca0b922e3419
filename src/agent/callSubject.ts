import { redactText } from "../core/redaction/index.ts";
import type { ToolDefinition } from "../core/tools/toolDefinition.ts";

/**
 * The command line a call would run, for command rules and sudo detection: a `cmd`/`command`
 * argument, or the characters typed into a terminal by write_stdin.
 */
export function commandLineOf(tool: ToolDefinition, args: unknown): string | undefined {
  if (!args || typeof args !== "object") return undefined;
  const record = args as Record<string, unknown>;
  for (const key of ["cmd", "command"]) if (typeof record[key] === "string") return record[key] as string;
  if (tool.name === "write_stdin" && typeof record.chars === "string") return record.chars;
  return undefined;
}

/**
 * One line saying what a call does, for the approval question: exec_command "sudo systemctl restart nginx".
 * Key-like values are redacted: the line lands in logs, events, the store and the status page.
 */
export function callSummary(tool: ToolDefinition, shownArgs: unknown, command: string | undefined): string {
  if (command !== undefined) return `${tool.name} ${JSON.stringify(redactText(command.trim()))}`;
  const text = JSON.stringify(shownArgs ?? {});
  return `${tool.name} ${text.length > 200 ? `${text.slice(0, 200)}…` : text}`;
}
