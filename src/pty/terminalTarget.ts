import type { CloseSessionArgs, ExecCommandArgs, PtyCloseResult, PtyCommandResult, PtySessionInfo, WriteStdinArgs } from "./ptySchemas.ts";

/** Terminals on another host (a hop's remote agentd, reached through its tunnel), as /api/pty drives them. */
export interface RemoteTerminals {
  exec(args: ExecCommandArgs, signal?: AbortSignal): Promise<PtyCommandResult>;
  writeStdin(args: WriteStdinArgs, signal?: AbortSignal): Promise<PtyCommandResult>;
  listSessions(signal?: AbortSignal): Promise<PtySessionInfo[]>;
  closeSession(args: CloseSessionArgs, signal?: AbortSignal): Promise<PtyCloseResult>;
}

/** The terminals of a target named in a request (a hop); throws a typed error for an unknown or down one. */
export type TerminalTargets = (name: string) => RemoteTerminals;
