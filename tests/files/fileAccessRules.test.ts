import { describe, expect, test } from "bun:test";
import {
  canSearch,
  createDirsRefusal,
  directoryRefusal,
  modeAfterWrite,
  readRefusal,
  stickyProtected,
  writePlan,
  writeRefusal,
  type Placed,
} from "../../src/files/fileAccessRules.ts";

const user = { uid: 1001, gids: [1001, 50] };
const dir = (path: string, uid: number, gid: number, bits: number): Placed => ({ path, uid, gid, mode: 0o040000 | bits });
const file = (path: string, uid: number, gid: number, bits: number): Placed => ({ path, uid, gid, mode: 0o100000 | bits });
const link = (path: string, uid: number): Placed => ({ path, uid, gid: uid, mode: 0o120777 });
const rootDirs = [dir("/", 0, 0, 0o755), dir("/srv", 0, 0, 0o755)];

describe("the command user's file access, from the kernel's facts", () => {
  test("search: the owner's, else the group's, else the others' x bit; root passes everywhere", () => {
    expect(canSearch(dir("/d", 1001, 0, 0o700), user)).toBe(true);
    expect(canSearch(dir("/d", 1001, 0, 0o077), user)).toBe(false); // The owner's bits decide, even when others' allow.
    expect(canSearch(dir("/d", 0, 50, 0o710), user)).toBe(true);
    expect(canSearch(dir("/d", 0, 0, 0o750), user)).toBe(false);
    expect(canSearch(dir("/d", 0, 0, 0o701), user)).toBe(true);
    expect(canSearch(dir("/d", 5, 5, 0o700), { uid: 0, gids: [0] })).toBe(true);
  });

  test("read: the file readable and every directory above it searchable", () => {
    expect(readRefusal(file("/srv/a", 0, 0, 0o644), rootDirs, user)).toBeUndefined();
    expect(readRefusal(file("/etc/shadow", 0, 42, 0o640), [dir("/", 0, 0, 0o755), dir("/etc", 0, 0, 0o755)], user)).toBe(
      "no read permission on /etc/shadow",
    );
    expect(
      readRefusal(file("/root/x/a", 0, 0, 0o644), [dir("/", 0, 0, 0o755), dir("/root", 0, 0, 0o700), dir("/root/x", 0, 0, 0o755)], user),
    ).toBe("no search permission on /root");
    expect(readRefusal(file("/srv/a", 0, 50, 0o640), rootDirs, user)).toBeUndefined();
    // An ancestor that is no longer a directory (changed meanwhile): refused.
    expect(readRefusal(file("/srv/a", 0, 0, 0o644), [dir("/", 0, 0, 0o755), link("/srv", 1001)], user)).toBe("/srv is not a directory");
  });

  test("a directory written in must itself be searchable", () => {
    expect(directoryRefusal(dir("/srv/d", 0, 0, 0o777 & ~0o001), rootDirs, user)).toBe("no search permission on /srv/d");
    expect(directoryRefusal(dir("/srv/d", 1001, 1001, 0o700), rootDirs, user)).toBeUndefined();
  });

  test("write plan: create needs a writable directory; an existing file must be writable; rename only where the user could rename", () => {
    const mine = dir("/srv/mine", 1001, 1001, 0o755);
    const theirs = dir("/etc", 0, 0, 0o755);
    const sticky = dir("/tmp", 0, 0, 0o1777);
    expect(writePlan(mine, undefined, user)).toEqual({ create: true });
    expect(writePlan(theirs, undefined, user)).toEqual({ refused: "no write permission on /etc" });
    expect(writePlan(mine, file("/srv/mine/f", 1001, 1001, 0o644), user)).toEqual({ create: false, rename: true });
    // A root-owned file the user cannot write, even in its own directory: refused (an editor would say read-only).
    expect(writePlan(mine, file("/srv/mine/f", 0, 0, 0o644), user)).toEqual({ refused: "no write permission on /srv/mine/f" });
    // A file it may write in a directory it may not: rewritten in place.
    expect(writePlan(theirs, file("/etc/f", 0, 50, 0o664), user)).toEqual({ create: false, rename: false });
    // Sticky: another's file, writable by all, is rewritten in place, never renamed over.
    expect(writePlan(sticky, file("/tmp/f", 0, 0, 0o666), user)).toEqual({ create: false, rename: false });
    expect(writePlan(sticky, file("/tmp/f", 1001, 1001, 0o600), user)).toEqual({ create: false, rename: true });
    expect(writePlan(sticky, undefined, user)).toEqual({ create: true });
    // A dangling link is replaced: like creating, but not another's in a sticky directory.
    expect(writePlan(mine, link("/srv/mine/l", 0), user)).toEqual({ create: true });
    expect(writePlan(sticky, link("/tmp/l", 0), user)).toEqual({ refused: "/tmp/l is another user's in the sticky /tmp" });
  });

  test("sticky protection, in place writes, create_dirs and set-id bits", () => {
    expect(stickyProtected(dir("/tmp", 0, 0, 0o1777), file("/tmp/f", 0, 0, 0o666), user)).toBe(true);
    expect(stickyProtected(dir("/tmp", 1001, 0, 0o1777), file("/tmp/f", 0, 0, 0o666), user)).toBe(false);
    expect(stickyProtected(dir("/d", 0, 0, 0o777), file("/d/f", 0, 0, 0o666), user)).toBe(false);
    expect(writeRefusal(file("/f", 0, 50, 0o620), user)).toBeUndefined();
    expect(writeRefusal(file("/f", 0, 50, 0o640), user)).toBe("no write permission on /f");
    expect(writeRefusal(dir("/d", 1001, 1001, 0o755), user)).toBe("/d is a directory");
    expect(createDirsRefusal(dir("/srv/mine", 1001, 1001, 0o755), rootDirs, user)).toBeUndefined();
    expect(createDirsRefusal(dir("/srv", 0, 0, 0o755), [dir("/", 0, 0, 0o755)], user)).toBe("no write permission on /srv");
    expect(createDirsRefusal(dir("/srv/x", 1001, 1001, 0o755), [dir("/", 0, 0, 0o755), dir("/srv", 0, 0, 0o700)], user)).toBe(
      "no search permission on /srv",
    );
    expect(modeAfterWrite(0o104755)).toBe(0o755);
    expect(modeAfterWrite(0o102775)).toBe(0o775);
    expect(modeAfterWrite(0o1777)).toBe(0o1777);
  });
});
