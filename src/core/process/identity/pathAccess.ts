/** Whether a user could read or write a file, from its owner and mode bits alone. Pure. */

export interface FileMode {
  uid: number;
  gid: number;
  /** st_mode's permission bits (and more; only the low 9 bits are read). */
  mode: number;
}

export interface Who {
  uid: number;
  gids: readonly number[];
}

/** The rwx bits that apply to `who`: owner's, else group's, else other's (as the kernel picks them, ACLs aside). */
function bitsFor(file: FileMode, who: Who): number {
  if (who.uid === 0) return 0o7;
  if (file.uid === who.uid) return (file.mode >> 6) & 0o7;
  if (who.gids.includes(file.gid)) return (file.mode >> 3) & 0o7;
  return file.mode & 0o7;
}

export function canRead(file: FileMode, who: Who): boolean {
  return (bitsFor(file, who) & 0o4) !== 0;
}

export function canWrite(file: FileMode, who: Who): boolean {
  return (bitsFor(file, who) & 0o2) !== 0;
}

/** Owning a file lets its owner chmod it open: as good as writing it. */
export function controls(file: FileMode, who: Who): boolean {
  return file.uid === who.uid || canWrite(file, who);
}
