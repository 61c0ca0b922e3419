import { lstatSync, mkdirSync, type Stats, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AgentdError } from "../core/errors/index.ts";

export interface ApiToken {
  token: string;
  path: string;
  created: boolean;
}

/** A token file (or its directory) that someone other than agentd's user could have written. */
export class UntrustedTokenError extends AgentdError {
  constructor(message: string) {
    super("token_untrusted", message);
  }
}

/** The uid and gid of the service user a root agentd runs its worker as. */
export interface WorkerIds {
  uid: number;
  gid: number;
}

function ownUid(): number {
  return process.getuid?.() ?? 0;
}

/** A data dir root shares with its worker (workerSplit.ts): root's, the worker's group, sticky. */
function sharedWithWorker(info: Stats, worker: WorkerIds | undefined): boolean {
  return worker !== undefined && info.uid === 0 && info.gid === worker.gid && (info.mode & 0o7777) === 0o1770;
}

/** Only agentd's users (its own, root, its worker's) may have made or changed what the directory holds. */
function directoryProblem(dir: string, info: Stats, owners: readonly number[], worker: WorkerIds | undefined): string | undefined {
  if (!info.isDirectory()) return `${dir} is not a directory`;
  if (sharedWithWorker(info, worker)) return undefined;
  if (!owners.includes(info.uid) && info.uid !== 0) return `${dir} belongs to uid ${info.uid}, not to agentd's user (uid ${ownUid()})`;
  if ((info.mode & 0o022) !== 0) return `${dir} is writable by other users (mode ${(info.mode & 0o7777).toString(8)})`;
  return undefined;
}

function fileProblem(path: string, info: Stats, owners: readonly number[]): string | undefined {
  if (info.isSymbolicLink()) return `${path} is a symbolic link`;
  if (!info.isFile()) return `${path} is not a regular file`;
  if (!owners.includes(info.uid)) return `${path} belongs to uid ${info.uid}, not to agentd's user (uid ${ownUid()})`;
  if ((info.mode & 0o077) !== 0)
    return `${path} is readable or writable by other users (mode ${(info.mode & 0o7777).toString(8)}, want 600)`;
  return undefined;
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * Reads <data_dir>/token, creating it (mode 0600) at first start. `worker`: agentd started as root
 * runs its worker as this user, which owns the token. A token is trusted only when agentd
 * made it: a file of its user, mode 0600, in a directory nobody else can write; anything else may
 * have been planted by whoever wants to know the secret, and is refused with the reason.
 */
export function ensureApiToken(dataDir: string, worker?: WorkerIds): ApiToken {
  // Started as root with its worker as a service user, the token is the worker's, in a data dir they share.
  const owners = worker === undefined ? [ownUid()] : [ownUid(), worker.uid];
  const path = join(dataDir, "token");
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const dirProblem = directoryProblem(dataDir, lstatSync(dataDir), owners, worker);
  const refuse = (problem: string) =>
    new UntrustedTokenError(
      `Refusing the API token ${path}: ${problem}. Give agentd a data dir of its own (mode 700), and let it create the token there.`,
    );
  if (dirProblem) throw refuse(dirProblem);
  const info = lstatOrUndefined(path);
  if (info) {
    const problem = fileProblem(path, info, owners);
    if (problem) throw refuse(problem);
    const token = readFileSync(path, "utf8").trim();
    if (token.length >= 16) return { token, path, created: false };
  }
  const token = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
  // "wx" on a new file: never through a link someone placed meanwhile. A short token of ours is replaced.
  writeFileSync(path, `${token}\n`, { mode: 0o600, flag: info ? "w" : "wx" });
  return { token, path, created: true };
}

/** Only 127.0.0.1 and ::1 (and the names for them) are this host alone; 127.0.0.2 and the rest of 127/8 need the token. */
export function isLoopbackAddress(address: string): boolean {
  const host = address.replace(/^\[|\]$/g, "").toLowerCase();
  return host === "localhost" || host === "127.0.0.1" || host === "::1" || host === "::ffff:127.0.0.1";
}
