import { redactSecrets, redactText } from "../core/redaction/index.ts";
import { approvalDigest } from "./approvalDigest.ts";
import type { ApprovalRequest } from "./approvalRequest.ts";
import type { ApprovalRecord } from "./approvalStore.ts";

/** A part of the raw command; `redacted` marks what the stored copies hide. */
export interface CommandSpan {
  text: string;
  redacted: boolean;
}

/** An approval as an approver sees it: the raw command beside its redacted form. */
export interface ApprovalView extends Omit<ApprovalRecord, "request" | "target"> {
  command?: string;
  command_redacted?: string;
  /** The raw command cut into spans, those the stored copies redact marked. */
  command_spans?: CommandSpan[];
  arguments?: unknown;
  arguments_redacted?: unknown;
  workdir?: string;
  target?: string;
  task?: string;
  reasons?: string[];
  /** The words a bare escalation is exec'd as (see ApprovalRequest.argv). */
  argv?: string[];
  /** What a decision is bound to (approvalDigest); set while pending. */
  digest?: string;
}

const MARK = "[redacted]";

/**
 * Aligns a text with its redacted copy: the copy is the text with some runs replaced by
 * "[redacted]", so the runs between the kept pieces are the redacted ones. Pure.
 */
export function redactedSpans(raw: string, redacted: string): CommandSpan[] {
  if (raw === redacted) return [{ text: raw, redacted: false }];
  const kept = redacted.split(MARK);
  const spans: CommandSpan[] = [];
  let cursor = 0;
  for (let i = 0; i < kept.length; i++) {
    const piece = kept[i]!;
    const at =
      i === 0 ? (raw.startsWith(piece) ? 0 : -1) : i === kept.length - 1 ? raw.length - piece.length : raw.indexOf(piece, cursor + 1);
    if (at < cursor || (i === kept.length - 1 && !raw.endsWith(piece))) return [{ text: raw, redacted: true }];
    if (at > cursor) spans.push({ text: raw.slice(cursor, at), redacted: true });
    if (piece) spans.push({ text: piece, redacted: false });
    cursor = at + piece.length;
  }
  return spans;
}

/** The digest of a pending approval's request; undefined once decided (the request is gone then). */
export function requestDigest(record: ApprovalRecord): string | undefined {
  return record.request ? approvalDigest(JSON.parse(record.request) as ApprovalRequest) : undefined;
}

/** The view of an approval for an authenticated approver: raw while pending, redacted once decided (the raw is gone). */
export function approvalView(record: ApprovalRecord): ApprovalView {
  const { request, target, ...kept } = record;
  const rest: ApprovalView = target === null ? kept : { ...kept, target };
  if (!request) return rest;
  const parsed = JSON.parse(request) as ApprovalRequest;
  const view: ApprovalView = { ...rest, arguments: parsed.arguments, arguments_redacted: redactSecrets(parsed.arguments) };
  if (parsed.command !== undefined) {
    const redacted = redactText(parsed.command);
    view.command = parsed.command;
    view.command_redacted = redacted;
    view.command_spans = redactedSpans(parsed.command, redacted);
  }
  if (parsed.workdir !== undefined) view.workdir = parsed.workdir;
  view.target = parsed.target;
  view.task = parsed.task;
  if (parsed.reasons?.length) view.reasons = parsed.reasons;
  if (parsed.argv) view.argv = parsed.argv;
  view.digest = approvalDigest(parsed);
  return view;
}
