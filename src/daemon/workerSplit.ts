import { chmodSync, lchownSync, lstatSync, readdirSync, realpathSync, unlinkSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";
import type { AgentdConfig } from "../core/config/schema.ts";
import { AgentdError } from "../core/errors/index.ts";
import { type CommandIdentity, type OwnPaths, resolveWorkerAccount, setprivPath, type WorkerAccount } from "../core/process/index.ts";

/** The first port only root may bind. */
const PRIVILEGED_PORTS_END = 1024;

/**
 * Whether agentd, started as root, runs its worker as a service user and stays a privileged
 * monitor: the account, or why not (the worker then stays root, and agentd says so).
 */
export function planWorkerSplit(
  config: AgentdConfig,
  identity: CommandIdentity,
  own: OwnPaths,
  port: number,
): WorkerAccount | { problem: string } {
  if (identity.mode !== "command_user") return { problem: `commands run in ${identity.mode} mode: agentd is not started as root` };
  if (port > 0 && port < PRIVILEGED_PORTS_END) return { problem: `port ${port} is below ${PRIVILEGED_PORTS_END}: only root may bind it` };
  try {
    setprivPath();
  } catch (error) {
    if (!(error instanceof AgentdError)) throw error;
    return { problem: error.message };
  }
  return resolveWorkerAccount(config.supervisor.worker_user, identity, own);
}

/** The supervisor's own entries in the data dir: root's, never the worker's (it writes logs there as root). */
const SUPERVISOR_ENTRIES = new Set(["logs", "agentd.lock"]);
/** What root creates before the worker starts and the worker must write: the store and the token, its TMPDIR. */
const HANDED_OVER = ["agentd.db", "agentd.db-wal", "agentd.db-shm", "token", "tmp"];
const SHARED_MODE = 0o1770;

/** What root reads and runs from inside the data dir, when it lies there: never the worker's to write. */
export interface RootsOwn {
  binary: string;
  config?: string;
}

/**
 * The data dir shared by the root supervisor and the worker, as /tmp is shared: root's, group the
 * worker's, sticky, so the worker creates and writes its own entries but cannot rename or replace
 * root's (the log directory root writes in, the lock, the config root reads). Root never writes into
 * an entry the worker owns, and hands over only what it created itself, by lchown (a link is never
 * followed). The first time (no worker user has had the directory yet) everything in it but root's
 * own entries is handed over.
 */
export function shareDataDir(dataDir: string, account: WorkerAccount, own: RootsOwn = { binary: process.execPath }): void {
  if (isShared(dataDir, account.gid)) {
    for (const entry of HANDED_OVER) {
      const path = join(dataDir, entry);
      const entryInfo = lstatOrUndefined(path);
      if (entryInfo?.uid === 0) lchownSync(path, account.uid, account.gid);
    }
    return;
  }
  // A hop installs agentd inside its data dir (<data_dir>/bin/agentd); an operator may keep the config there.
  const kept = new Set([...SUPERVISOR_ENTRIES, ...[own.binary, own.config].map((path) => path && entryHolding(dataDir, path))]);
  for (const entry of readdirSync(dataDir)) if (!kept.has(entry)) chownTree(join(dataDir, entry), account.uid, account.gid);
  lchownSync(dataDir, 0, account.gid);
  chmodSync(dataDir, SHARED_MODE);
}

/**
 * The data dir of an earlier start that shared it with a worker user, when this start cannot (the
 * binary moved out of its reach, a port below 1024): root closes it again (mode 700) and takes its
 * entries back, and a new token replaces the one the worker user knew. Root ignores the modes below; only the
 * entries' owners matter to the trust checks, and a link among the store's files is still removed
 * before anything opens it (unlinkedStoreFiles). Returns whether it did.
 */
export function reclaimDataDir(dataDir: string): boolean {
  const info = lstatOrUndefined(dataDir);
  if (!info?.isDirectory() || info.uid !== 0 || (info.mode & 0o7777) !== SHARED_MODE) return false;
  lchownSync(dataDir, 0, 0);
  chmodSync(dataDir, 0o700);
  for (const entry of readdirSync(dataDir)) lchownSync(join(dataDir, entry), 0, 0);
  // The worker user could read (or have written) the token: a new one is made.
  if (lstatOrUndefined(join(dataDir, "token"))) unlinkSync(join(dataDir, "token"));
  return true;
}

function isShared(dataDir: string, gid: number): boolean {
  const info = lstatSync(dataDir);
  return info.uid === 0 && info.gid === gid && (info.mode & 0o7777) === SHARED_MODE;
}

/**
 * Before root writes its log or opens the store in a data dir a worker may have had: a link in place of the store's files
 * (which root would follow and write through) is removed; a file with another name elsewhere (a
 * hard link) is refused. Returns why agentd must not start, or undefined.
 */
export function unlinkedStoreFiles(dataDir: string): { removed: string[]; refused?: string } {
  const removed: string[] = [];
  const logs = lstatOrUndefined(join(dataDir, "logs"));
  if (logs?.isSymbolicLink()) {
    unlinkSync(join(dataDir, "logs"));
    removed.push(join(dataDir, "logs"));
  } else if (logs && logs.uid !== 0)
    return { removed, refused: `${join(dataDir, "logs")} is not root's (uid ${logs.uid}): root writes its log there; move it aside` };
  for (const entry of HANDED_OVER) {
    const path = join(dataDir, entry);
    const info = lstatOrUndefined(path);
    if (!info) continue;
    if (info.isSymbolicLink()) {
      unlinkSync(path);
      removed.push(path);
    } else if (info.isFile() && info.nlink > 1) {
      return { removed, refused: `${path} has ${info.nlink} names (a hard link): root will not open it; move it aside` };
    }
  }
  return { removed };
}

/** The data dir's top-level entry `path` lies in, if it lies in the data dir. */
function entryHolding(dataDir: string, path: string): string | undefined {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  };
  const inside = relative(real(dataDir), real(path));
  return inside && !inside.startsWith("..") && !isAbsolute(inside) ? inside.split(sep)[0] : undefined;
}

/** A whole tree, by lchown: a link is never followed, a directory is entered only after lstat said it is one. */
function chownTree(path: string, uid: number, gid: number): void {
  const info = lstatSync(path);
  lchownSync(path, uid, gid);
  if (info.isDirectory()) for (const entry of readdirSync(path)) chownTree(join(path, entry), uid, gid);
}

function lstatOrUndefined(path: string) {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * The worker's command line as the service user: util-linux's setpriv drops to its uid and gid with
 * no supplementary groups, no capabilities left to regain (bounding set emptied) and no_new_privs,
 * then execs agentd's worker, which keeps the IPC channel to the monitor.
 */
export function asWorkerUser(args: readonly string[], account: WorkerAccount): string[] {
  return [
    setprivPath(),
    `--reuid=${account.uid}`,
    `--regid=${account.gid}`,
    "--clear-groups",
    "--inh-caps=-all",
    "--bounding-set=-all",
    "--no-new-privs",
    "--",
    ...args,
  ];
}
