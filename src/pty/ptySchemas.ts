import { z } from "zod";

/** Argument schemas shared by the agent tools and the HTTP routes, so both accept the same shapes. */

const sessionId = z.string().min(1).describe("Id of a running session, from exec_command or list_sessions");
const maxOutputTokens = z
  .number()
  .int()
  .min(1)
  .max(1_000_000)
  .optional()
  .describe("Token budget of the returned output (about 4 bytes a token); longer output keeps its head and tail. Default 10000");
const stripAnsiFlag = z.boolean().optional().describe("Remove terminal escape sequences (colours, cursor moves) from the output");
const cols = z.number().int().min(10).max(1000).optional().describe("Terminal width in columns (default 80)");
const rows = z.number().int().min(2).max(1000).optional().describe("Terminal height in rows (default 24)");

export const execCommandArgs = z.strictObject({
  cmd: z.string().min(1).describe("Shell command line to run in a new pseudo-terminal"),
  workdir: z.string().min(1).optional().describe("Working directory (default: the daemon's)"),
  env: z.record(z.string(), z.string()).optional().describe("Extra environment variables"),
  shell: z.string().min(1).optional().describe("Shell to run the command with (default $SHELL or /bin/bash)"),
  login: z.boolean().optional().describe("Run through a login shell (-lc) instead of -c"),
  cols,
  rows,
  yield_time_ms: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("How long to wait for output before returning while the command keeps running (250-30000, default 10000)"),
  max_output_tokens: maxOutputTokens,
  strip_ansi: stripAnsiFlag,
});

/**
 * What the model and MCP clients send: the same as the API's, but escape sequences are removed
 * unless they ask for them, so colour codes never reach a model (`agentd exec` keeps them).
 */
export const execCommandToolArgs = execCommandArgs.extend({ strip_ansi: stripAnsiFlag.default(true) });

export const writeStdinArgs = z.strictObject({
  session_id: sessionId,
  chars: z
    .string()
    .default("")
    .describe("Characters to type; control characters work (\\u0003 interrupts, \\u0004 ends input). Empty: just read new output"),
  yield_time_ms: z.number().int().min(0).optional().describe("How long to collect output after writing (50-30000, default 250)"),
  max_output_tokens: maxOutputTokens,
  strip_ansi: stripAnsiFlag,
  cols,
  rows,
});

export const listSessionsArgs = z.strictObject({});

export const closeSessionArgs = z.strictObject({
  session_id: sessionId,
  force: z.boolean().optional().describe("Send SIGKILL at once instead of SIGHUP, SIGTERM, SIGKILL"),
});

export type ExecCommandArgs = z.infer<typeof execCommandArgs>;
export type WriteStdinArgs = z.input<typeof writeStdinArgs>;
export type CloseSessionArgs = z.infer<typeof closeSessionArgs>;

/** What exec_command and write_stdin return. */
export interface PtyCommandResult {
  /** Null once the process has exited: its session is gone. */
  session_id: string | null;
  output: string;
  running: boolean;
  exit_code: number | null;
  /** The signal that ended the process, when one did (exit_code is then 128 + its number). */
  signal?: string;
  truncated: boolean;
  original_bytes: number;
  /** Output the session's buffer dropped unread since the previous read, because it was full. */
  dropped_bytes?: number;
  /** Full output of a truncated read. */
  output_file?: string;
  wall_ms: number;
  warning?: string;
}

export interface PtySessionInfo {
  id: string;
  cmd: string;
  pid: number;
  started: string;
  running: boolean;
  exit_code: number | null;
  /** Seconds since the last call that used the session. */
  idle_s: number;
  bytes_out: number;
  /** When the program last wrote output (ISO 8601), or null before it has. */
  last_output_at: string | null;
}

export interface PtyCloseResult {
  session_id: string;
  exit_code: number | null;
  signal?: string;
  output: string;
  truncated: boolean;
}

export const writeStdinToolArgs = writeStdinArgs.extend({ strip_ansi: stripAnsiFlag.default(true) });
