import { ftruncateSync, readFileSync, writeSync } from "node:fs";
import { EINTR, EWOULDBLOCK, libcFlock, LOCK_EX, LOCK_NB, LockError, O_CLOEXEC, O_CREAT, O_RDWR } from "./libcFlock.ts";

/** What the holder wrote into the lock file. */
export interface LockHolder {
  pid: number;
  started_at?: string;
}

export interface InstanceLock {
  path: string;
  /** Unlocks and closes the file; the file itself stays (removing it would race a new holder). */
  release(): void;
}

export type LockAttempt = { acquired: true; lock: InstanceLock } | { acquired: false; holder: LockHolder | undefined };

/**
 * Takes an exclusive flock on `path` without waiting, and writes this process's pid into it. The
 * kernel drops the lock when the process dies however it dies (kill -9 included), so a stale file
 * never blocks a new start. The descriptor is close-on-exec: children (the worker) do not hold it.
 * When another process holds it, nothing is written and the holder's contents are returned.
 */
export function acquireInstanceLock(path: string): LockAttempt {
  const libc = libcFlock();
  const fd = libc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600);
  if (fd < 0) throw new LockError(`Cannot open the lock file ${path} (errno ${libc.errno()})`);
  for (;;) {
    if (libc.flock(fd, LOCK_EX | LOCK_NB) === 0) break;
    const errno = libc.errno();
    if (errno === EINTR) continue;
    libc.close(fd);
    if (errno === EWOULDBLOCK) return { acquired: false, holder: readLockHolder(path) };
    throw new LockError(`Cannot lock ${path} (errno ${errno})`);
  }
  const holder: LockHolder = { pid: process.pid, started_at: new Date().toISOString() };
  ftruncateSync(fd, 0);
  writeSync(fd, `${JSON.stringify(holder)}\n`, 0);
  let released = false;
  return {
    acquired: true,
    lock: {
      path,
      release() {
        if (released) return;
        released = true;
        libc.close(fd);
      },
    },
  };
}

/** The holder's pid from the lock file; undefined while the holder has not written it yet. */
export function readLockHolder(path: string): LockHolder | undefined {
  try {
    const holder = JSON.parse(readFileSync(path, "utf8")) as Partial<LockHolder>;
    return typeof holder.pid === "number" ? { pid: holder.pid, started_at: holder.started_at } : undefined;
  } catch {
    return undefined;
  }
}
