import type { Database } from "bun:sqlite";
import { newId } from "./agentIds.ts";

export type ToolCallStatus = "planned" | "awaiting_approval" | "running" | "finished";
export type ToolCallOutcome = "ok" | "error" | "denied" | "timeout" | "cancelled" | "interrupted";

export interface ToolCallRecord {
  id: string;
  session_id: string;
  turn_id: string;
  step: number;
  ordinal: number;
  /** The id the model gave the call; its result is answered under it. */
  call_id: string;
  tool: string;
  scope: string | null;
  /** Arguments as the model sent them, secrets redacted. */
  arguments: unknown;
  status: ToolCallStatus;
  outcome: ToolCallOutcome | null;
  approval_id: string | null;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
  duration_ms: number | null;
  output_bytes: number | null;
  error_code: string | null;
  error_message: string | null;
}

type Row = Omit<ToolCallRecord, "arguments"> & { arguments: string };
const toRecord = (row: Row): ToolCallRecord => ({ ...row, arguments: JSON.parse(row.arguments) });

export interface ToolCallEnd {
  outcome: ToolCallOutcome;
  durationMs: number;
  outputBytes: number;
  errorCode?: string;
  errorMessage?: string;
}

/** Every tool call the model asked for, recorded when planned, when it starts and when it ends. */
export class ToolCallStore {
  constructor(private readonly db: Database) {}

  plan(input: {
    sessionId: string;
    turnId: string;
    step: number;
    ordinal: number;
    callId: string;
    tool: string;
    scope: string | null;
    arguments: unknown;
  }): ToolCallRecord {
    const id = newId("tc");
    this.db
      .query(
        "INSERT INTO agent_tool_calls (id, session_id, turn_id, step, ordinal, call_id, tool, scope, arguments, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'planned', ?)",
      )
      .run(
        id,
        input.sessionId,
        input.turnId,
        input.step,
        input.ordinal,
        input.callId,
        input.tool,
        input.scope,
        JSON.stringify(input.arguments ?? null),
        Date.now(),
      );
    return this.get(id);
  }

  get(id: string): ToolCallRecord {
    const row = this.db.query<Row, [string]>("SELECT * FROM agent_tool_calls WHERE id = ?").get(id);
    if (!row) throw new Error(`tool call ${id} is not in the store`);
    return toRecord(row);
  }

  awaitApproval(id: string, approvalId: string): void {
    this.db.query("UPDATE agent_tool_calls SET status = 'awaiting_approval', approval_id = ? WHERE id = ?").run(approvalId, id);
  }

  /** Marks the call running; false when it already ran (so nothing runs twice). */
  start(id: string): boolean {
    return (
      this.db
        .query("UPDATE agent_tool_calls SET status = 'running', started_at = ? WHERE id = ? AND status IN ('planned', 'awaiting_approval')")
        .run(Date.now(), id).changes === 1
    );
  }

  finish(id: string, end: ToolCallEnd): void {
    this.db
      .query(
        "UPDATE agent_tool_calls SET status = 'finished', outcome = ?, ended_at = ?, duration_ms = ?, output_bytes = ?, error_code = ?, error_message = ? WHERE id = ?",
      )
      .run(end.outcome, Date.now(), end.durationMs, end.outputBytes, end.errorCode ?? null, end.errorMessage ?? null, id);
  }

  /** The newest call answered under this id (MCP call ids are unique; a model's may repeat across sessions). */
  findByCallId(callId: string): ToolCallRecord | undefined {
    const row = this.db
      .query<Row, [string]>("SELECT * FROM agent_tool_calls WHERE call_id = ? ORDER BY created_at DESC LIMIT 1")
      .get(callId);
    return row ? toRecord(row) : undefined;
  }

  /** Calls of a step not yet finished, in the order the model listed them. */
  unfinished(turnId: string): ToolCallRecord[] {
    return this.db
      .query<Row, [string]>("SELECT * FROM agent_tool_calls WHERE turn_id = ? AND status != 'finished' ORDER BY step, ordinal")
      .all(turnId)
      .map(toRecord);
  }

  /** A turn's calls, in the order the model listed them. */
  forTurn(turnId: string): ToolCallRecord[] {
    return this.db
      .query<Row, [string]>("SELECT * FROM agent_tool_calls WHERE turn_id = ? ORDER BY step, ordinal")
      .all(turnId)
      .map(toRecord);
  }

  forSession(sessionId: string): ToolCallRecord[] {
    return this.db
      .query<Row, [string]>("SELECT * FROM agent_tool_calls WHERE session_id = ? ORDER BY created_at, step, ordinal")
      .all(sessionId)
      .map(toRecord);
  }
}
