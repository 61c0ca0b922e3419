/**
 * The one interface between agentd's privileged monitor (the supervisor, root) and its worker (a
 * service user): typed requests over the IPC channel Bun.spawn opens between them. The worker can
 * ask for nothing else; the monitor checks each request itself, never trusting the worker's word
 * for what needs a person (an escalation's approval, a privileged terminal's token).
 * Pure: parsing and shapes only.
 */
import type { LaunchKind } from "../../pty/commandLauncher.ts";

export interface StartRequest {
  op: "start";
  sessionId: string;
  kind: LaunchKind;
  words: string[];
  env: Record<string, string>;
  cwd?: string;
  /** The terminal's slave, opened by the worker (/dev/pts/N): the monitor opens it again by path. */
  tty: string;
  umask?: number;
  call?: { recordId: string; sessionId: string };
  credential?: string;
}

export type MonitorRequest =
  | { op: "hello" }
  | { op: "config" }
  | { op: "reload" }
  | StartRequest
  | { op: "signal"; pid: number; signal: number }
  | { op: "reap"; pid: number }
  | { op: "end_session"; sessionId: string }
  | { op: "file_read"; args: Record<string, unknown> }
  | { op: "file_write"; args: Record<string, unknown> }
  | { op: "run"; runId: string; argv: string[]; timeoutMs: number; maxOutputBytes?: number }
  | { op: "cancel_run"; runId: string };

/** What crosses the channel: a numbered request, and its reply. */
export interface MonitorEnvelope {
  id: number;
  request: MonitorRequest;
}

export type MonitorReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: { code: string; message: string; details?: Record<string, unknown> } };

const isString = (v: unknown): v is string => typeof v === "string";
const isInt = (v: unknown): v is number => Number.isSafeInteger(v);
const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isStringMap = (v: unknown): v is Record<string, string> => isRecord(v) && Object.values(v).every(isString);
const KINDS: readonly LaunchKind[] = ["command", "escalation", "terminal"];

/** The envelope as sent, or why it is not one; nothing unexpected reaches the monitor's handlers. */
export function parseEnvelope(value: unknown): MonitorEnvelope | { invalid: string; id?: number } {
  if (!isRecord(value) || !isInt(value.id) || !isRecord(value.request)) return { invalid: "not a monitor request envelope" };
  const { id } = value;
  const r = value.request;
  const bad = (why: string) => ({ invalid: `${String(r.op)}: ${why}`, id });
  switch (r.op) {
    case "hello":
    case "config":
    case "reload":
      return { id, request: { op: r.op } };
    case "start": {
      if (!isString(r.sessionId) || !KINDS.includes(r.kind as LaunchKind)) return bad("needs sessionId and kind");
      if (!isStrings(r.words) || r.words.length === 0 || !isStringMap(r.env) || !isString(r.tty)) return bad("needs words, env and tty");
      if (r.cwd !== undefined && !isString(r.cwd)) return bad("cwd must be a string");
      if (r.umask !== undefined && !isInt(r.umask)) return bad("umask must be an integer");
      if (r.credential !== undefined && !isString(r.credential)) return bad("credential must be a string");
      const call = r.call;
      if (call !== undefined && !(isRecord(call) && isString(call.recordId) && isString(call.sessionId)))
        return bad("call needs recordId and sessionId");
      return {
        id,
        request: {
          op: "start",
          sessionId: r.sessionId,
          kind: r.kind as LaunchKind,
          words: r.words,
          env: r.env,
          tty: r.tty,
          ...(r.cwd === undefined ? {} : { cwd: r.cwd as string }),
          ...(r.umask === undefined ? {} : { umask: r.umask as number }),
          ...(r.credential === undefined ? {} : { credential: r.credential as string }),
          ...(call === undefined ? {} : { call: { recordId: call.recordId as string, sessionId: call.sessionId as string } }),
        },
      };
    }
    case "signal":
      return isInt(r.pid) && isInt(r.signal)
        ? { id, request: { op: "signal", pid: r.pid, signal: r.signal } }
        : bad("needs pid and signal");
    case "reap":
      return isInt(r.pid) ? { id, request: { op: "reap", pid: r.pid } } : bad("needs pid");
    case "end_session":
      return isString(r.sessionId) ? { id, request: { op: "end_session", sessionId: r.sessionId } } : bad("needs sessionId");
    case "file_read":
    case "file_write":
      return isRecord(r.args) ? { id, request: { op: r.op, args: r.args } } : bad("needs args");
    case "run": {
      if (!isString(r.runId) || !isStrings(r.argv) || r.argv.length === 0 || !isInt(r.timeoutMs))
        return bad("needs runId, argv and timeoutMs");
      if (r.maxOutputBytes !== undefined && !isInt(r.maxOutputBytes)) return bad("maxOutputBytes must be an integer");
      return {
        id,
        request: {
          op: "run",
          runId: r.runId,
          argv: r.argv,
          timeoutMs: r.timeoutMs,
          ...(r.maxOutputBytes === undefined ? {} : { maxOutputBytes: r.maxOutputBytes as number }),
        },
      };
    }
    case "cancel_run":
      return isString(r.runId) ? { id, request: { op: "cancel_run", runId: r.runId } } : bad("needs runId");
    default:
      return bad("unknown request");
  }
}
