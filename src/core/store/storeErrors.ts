import { AgentdError } from "../errors/index.ts";

export class StoreError extends AgentdError {
  constructor(message: string, cause?: unknown) {
    super("store_error", message, { cause });
  }
}

/** The store file is damaged or is not a database at all: agentd cannot run on it, and says how to recover. */
export class StoreCorruptError extends AgentdError {
  readonly path: string;

  constructor(path: string, detail: string, cause?: unknown) {
    super(
      "store_corrupt",
      `the store at ${path} is damaged (${detail}). To recover, move ${path} aside (with its -wal and -shm files if present); agentd will start a fresh store and keep the old one.`,
      { cause, details: { path } },
    );
    this.path = path;
  }
}

/** SQLITE_BUSY and SQLITE_LOCKED (with their extended codes): another connection holds a lock right now. */
export function isBusyError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))) return true;
  return error instanceof Error && /database is locked|database table is locked/.test(error.message);
}

/** SQLITE_CORRUPT or SQLITE_NOTADB: the file's bytes are wrong, retrying will not help. */
export function isCorruptError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && (code.startsWith("SQLITE_CORRUPT") || code.startsWith("SQLITE_NOTADB"));
}

/** The typed form of a failure while opening or checking the store at `path`, naming the path. */
export function storeFailure(path: string, error: unknown): AgentdError {
  if (error instanceof AgentdError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (isCorruptError(error)) return new StoreCorruptError(path, message, error);
  return new StoreError(`Cannot open the store at ${path}: ${message}`, error);
}
