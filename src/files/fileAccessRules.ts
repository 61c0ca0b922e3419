import { canRead, canWrite } from "../core/process/identity/index.ts";

/**
 * Whether the command user could itself read or write a file, from the kernel's facts on it and on
 * the directories above it (owner, group, st_mode): the file tools run as root and ask this before
 * doing anything for it. Pure; ACLs, capabilities and mount options aside.
 */

export interface Inode {
  uid: number;
  gid: number;
  /** st_mode: the file type and the permission bits. */
  mode: number;
}

/** An inode and the path it was found at (for the messages). */
export interface Placed extends Inode {
  path: string;
}

export interface Who {
  uid: number;
  gids: readonly number[];
}

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const S_ISVTX = 0o1000;

export const isDirectory = (inode: Inode): boolean => (inode.mode & S_IFMT) === S_IFDIR;
export const isSymlink = (inode: Inode): boolean => (inode.mode & S_IFMT) === S_IFLNK;

/** The x bit that applies to `who` on a directory: may it pass through (look names up in) it? */
export function canSearch(dir: Inode, who: Who): boolean {
  if (who.uid === 0) return true;
  if (dir.uid === who.uid) return (dir.mode & 0o100) !== 0;
  if (who.gids.includes(dir.gid)) return (dir.mode & 0o010) !== 0;
  return (dir.mode & 0o001) !== 0;
}

/** Why `who` could not walk down through these directories (root first), or undefined when it could. */
export function walkRefusal(ancestors: readonly Placed[], who: Who): string | undefined {
  for (const dir of ancestors) {
    if (!isDirectory(dir)) return `${dir.path} is not a directory`;
    if (!canSearch(dir, who)) return `no search permission on ${dir.path}`;
  }
  return undefined;
}

/** Reading a file: every directory above it searchable, the file readable. */
export function readRefusal(file: Placed, ancestors: readonly Placed[], who: Who): string | undefined {
  return walkRefusal(ancestors, who) ?? (canRead(file, who) ? undefined : `no read permission on ${file.path}`);
}

/** A directory files are looked up (and maybe created) in: reachable and searchable itself. */
export function directoryRefusal(dir: Placed, ancestors: readonly Placed[], who: Who): string | undefined {
  return walkRefusal([...ancestors, dir], who);
}

/** Writing in place (append, or rewriting a file with several links): the file must be writable. */
export function writeRefusal(file: Placed, who: Who): string | undefined {
  if (isDirectory(file)) return `${file.path} is a directory`;
  return canWrite(file, who) ? undefined : `no write permission on ${file.path}`;
}

/** In a sticky directory (/tmp) only the owner of an entry (or of the directory) may replace or remove it. */
export function stickyProtected(dir: Inode, entry: Inode, who: Who): boolean {
  return who.uid !== 0 && (dir.mode & S_ISVTX) !== 0 && entry.uid !== who.uid && dir.uid !== who.uid;
}

/**
 * How a write of `entry` (lstat of the name; undefined when there is none) in `dir` may go:
 * - create: a new file, so the directory must be writable (and, if a dangling link is replaced, not sticky-protected);
 * - an existing file: it must be writable by `who`; it may be replaced by a rename only when the
 *   directory is writable and the entry not sticky-protected, else it is rewritten in place.
 */
export type WritePlan = { create: true } | { create: false; rename: boolean } | { refused: string };

export function writePlan(dir: Placed, entry: Placed | undefined, who: Who): WritePlan {
  const replaceable = canWrite(dir, who) && (entry === undefined || !stickyProtected(dir, entry, who));
  if (entry === undefined || isSymlink(entry)) {
    if (replaceable) return { create: true };
    return {
      refused: canWrite(dir, who) ? `${entry?.path} is another user's in the sticky ${dir.path}` : `no write permission on ${dir.path}`,
    };
  }
  const refused = writeRefusal(entry, who);
  return refused ? { refused } : { create: false, rename: replaceable };
}

/** create_dirs: the deepest existing directory must be reachable, searchable and writable. */
export function createDirsRefusal(nearest: Placed, ancestors: readonly Placed[], who: Who): string | undefined {
  return directoryRefusal(nearest, ancestors, who) ?? (canWrite(nearest, who) ? undefined : `no write permission on ${nearest.path}`);
}

/**
 * The mode a file keeps once the command user has written it: the kernel drops set-user-ID and
 * set-group-ID on a write by a process without CAP_FSETID; agentd, writing as root, drops them itself.
 */
export function modeAfterWrite(mode: number): number {
  return mode & 0o1777;
}
