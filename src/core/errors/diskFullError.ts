import { AgentdError } from "./agentdError.ts";

/** A write refused for lack of space: the client learns which disk to free, not an internal error. */
export class DiskFullError extends AgentdError {
  readonly path: string;
  constructor(path: string, cause?: unknown) {
    super("disk_full", `No space left on the disk holding ${path}; free space there and retry`, {
      cause,
      details: { path },
    });
    this.path = path;
  }
}

const DISK_FULL_CODES = new Set(["ENOSPC", "EDQUOT", "SQLITE_FULL"]);
const listeners = new Set<(error: DiskFullError) => void>();
// SQLite's errors name no file: a SQLITE_FULL is reported against the store's path.
let storePath: string | undefined;

export function setStorePathForErrors(path: string): void {
  storePath = path;
}

/**
 * The DiskFullError an I/O error stands for (ENOSPC, EDQUOT, SQLITE_FULL), or undefined for any
 * other error. Every recognised one is told to the listeners (the store probe rechecks at once).
 */
export function asDiskFull(error: unknown, path?: string): DiskFullError | undefined {
  let full: DiskFullError;
  if (error instanceof DiskFullError) full = error;
  else {
    const code = (error as { code?: unknown } | null | undefined)?.code;
    if (typeof code !== "string" || !DISK_FULL_CODES.has(code)) return undefined;
    const named = (error as { path?: unknown }).path;
    full = new DiskFullError(
      path ?? (typeof named === "string" ? named : code === "SQLITE_FULL" ? storePath : undefined) ?? "the data dir",
      error,
    );
  }
  for (const listener of listeners) listener(full);
  return full;
}

/** Calls `listener` whenever a write is found to have failed for lack of space; returns the unsubscribe. */
export function onDiskFull(listener: (error: DiskFullError) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
