import { constants, readlinkSync } from "node:fs";
import { lstat, mkdir, open, realpath, stat, type FileHandle } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { AgentdError } from "../core/errors/index.ts";
import type { CommandIdentity } from "../core/process/identity/index.ts";
import {
  createDirsRefusal,
  directoryRefusal,
  readRefusal,
  walkRefusal,
  writePlan,
  writeRefusal,
  type Inode,
  type Placed,
  type Who,
  type WritePlan,
} from "./fileAccessRules.ts";

/** Open flags the guard adds: no controlling terminal, no blocking on a FIFO, no link followed where it says so. */
export const GUARDED_READ = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;
export const GUARDED_DIRECTORY = constants.O_RDONLY | constants.O_DIRECTORY;
export const GUARDED_APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW | constants.O_NOCTTY;
export const GUARDED_CREATE_APPEND = GUARDED_APPEND | constants.O_CREAT | constants.O_EXCL;
export const GUARDED_REWRITE = constants.O_RDWR | constants.O_NOFOLLOW | constants.O_NOCTTY;

const placed = (path: string, info: Inode): Placed => ({ path, uid: info.uid, gid: info.gid, mode: info.mode });

/** The directories above `real` (an absolute, link-free path), root first, as they are now. */
async function ancestorsOf(real: string): Promise<Placed[] | undefined> {
  const dirs: string[] = [];
  for (let dir = dirname(real); ; dir = dirname(dir)) {
    dirs.unshift(dir);
    if (dir === dirname(dir)) break;
  }
  const found: Placed[] = [];
  for (const dir of dirs) {
    const info = await lstat(dir).catch(() => undefined);
    if (!info) return undefined;
    found.push(placed(dir, info));
  }
  return found;
}

/**
 * The file tools as the command user may use them: agentd's worker is root, so before it reads or
 * writes for the model it checks, on what it actually opened (fstat of the handle, its real path in
 * /proc/self/fd), that the command user could have done the same itself. A link swapped between a
 * check and an open gains nothing: the checks are made after the open, on the descriptor.
 */
export class CommandUserFiles {
  readonly uid: number;
  readonly gid: number;
  readonly home: string | undefined;
  private readonly who: Who;
  private readonly user: string;

  constructor(identity: CommandIdentity) {
    const credentials = identity.credentials;
    if (!credentials) throw new AgentdError("command_user_unavailable", "The file tools have a command user without its uid and gid");
    this.uid = credentials.uid;
    this.gid = credentials.gid;
    this.home = identity.home;
    // Its commands run with this gid and these supplementary groups: the kernel checks against both.
    this.who = { uid: credentials.uid, gids: [credentials.gid, ...credentials.groups] };
    this.user = identity.user ?? `uid ${credentials.uid}`;
  }

  refusal(verb: "read" | "write", shown: string, why: string): AgentdError {
    return new AgentdError("file_permission_denied", `Cannot ${verb} ${shown} as ${this.user}: permission denied (${why})`);
  }

  /** Before opening a file to read it: an inode the command user may not read is not even opened (a device's open may act). */
  async precheckRead(path: string): Promise<void> {
    await this.assertCouldLook(path, "read");
    const info = await stat(path).catch(() => undefined);
    if (info && readRefusal(placed(path, info), [], this.who)) throw this.refusal("read", path, `no read permission on ${path}`);
  }

  /**
   * Where the handle really is: its real path, found again there by lstat (same device and inode), and the
   * directories above it. A pipe, a socket, a deleted file or a memfd has no such path: refused.
   */
  private async locate(handle: FileHandle, shown: string, verb: "read" | "write"): Promise<{ file: Placed; ancestors: Placed[] }> {
    const info = await handle.stat();
    const real = readlinkSync(`/proc/self/fd/${handle.fd}`);
    const there = real.startsWith("/") ? await lstat(real).catch(() => undefined) : undefined;
    if (!there || there.dev !== info.dev || there.ino !== info.ino) throw this.refusal(verb, shown, `${real} is not reachable by a path`);
    const ancestors = await ancestorsOf(real);
    if (!ancestors) throw this.refusal(verb, shown, `the directories above ${real} changed meanwhile`);
    return { file: placed(real, info), ancestors };
  }

  /**
   * For a path that is not there: refused rather than "not found" when the command user could not
   * even look (a directory above it it may not search), so that the tools tell no more than its own
   * ls would about directories closed to it.
   */
  async assertCouldLook(path: string, verb: "read" | "write"): Promise<void> {
    let nearest = dirname(path);
    while ((await stat(nearest).catch(() => undefined)) === undefined && nearest !== dirname(nearest)) nearest = dirname(nearest);
    const real = await realpath(nearest).catch(() => undefined);
    const info = real && (await stat(real).catch(() => undefined));
    const ancestors = real && (await ancestorsOf(real));
    if (!real || !info || !ancestors) return;
    const why = walkRefusal([...ancestors, placed(real, info)], this.who);
    if (why) throw this.refusal(verb, path, why);
  }

  /** After opening a file to read it: readable by the command user, and reachable by it. */
  async assertReadable(handle: FileHandle, shown: string): Promise<void> {
    const { file, ancestors } = await this.locate(handle, shown, "read");
    const why = readRefusal(file, ancestors, this.who);
    if (why) throw this.refusal("read", shown, why);
  }

  /** The opened directory a file is written into: reachable and searchable by the command user. */
  async directory(handle: FileHandle, shown: string): Promise<Placed> {
    const { file, ancestors } = await this.locate(handle, shown, "write");
    const why = directoryRefusal(file, ancestors, this.who);
    if (why) throw this.refusal("write", shown, why);
    return file;
  }

  /** What a write of `name` in the opened `dir` may do: create, replace by rename, or rewrite in place. */
  async plan(dir: Placed, inDirectory: string, shown: string, append: boolean): Promise<Exclude<WritePlan, { refused: string }>> {
    const entry = await lstat(inDirectory).catch(() => undefined);
    // Appending would create a dangling link's target, wherever it points: the command user's own open would check there.
    if (append && entry?.isSymbolicLink()) throw this.refusal("write", shown, `${shown} is a link to a file that does not exist`);
    const plan = writePlan(dir, entry && placed(`${dir.path}/${basename(inDirectory)}`, entry), this.who);
    if ("refused" in plan) throw this.refusal("write", shown, plan.refused);
    return plan;
  }

  /** After opening an existing file to write it in place: writable by the command user. Its mode, for modeAfterWrite. */
  async assertWritable(handle: FileHandle, shown: string): Promise<number> {
    const info = await handle.stat();
    const why = writeRefusal(placed(shown, info), this.who);
    if (why) throw this.refusal("write", shown, why);
    return info.mode;
  }

  /**
   * create_dirs for the command user: below the deepest existing directory (which it must be able to
   * write), each missing one is made through the opened parent and given to it (its uid and gid).
   */
  async makeDirectories(dir: string, shown: string): Promise<void> {
    const missing: string[] = [];
    let nearest = dir;
    while ((await stat(nearest).catch(() => undefined)) === undefined && nearest !== dirname(nearest)) {
      missing.unshift(basename(nearest));
      nearest = dirname(nearest);
    }
    if (missing.length === 0) return;
    let parent = await open(nearest, GUARDED_DIRECTORY);
    try {
      const { file, ancestors } = await this.locate(parent, shown, "write");
      const why = createDirsRefusal(file, ancestors, this.who);
      if (why) throw this.refusal("write", shown, why);
      for (const [index, name] of missing.entries()) {
        const inParent = `/proc/self/fd/${parent.fd}/${name}`;
        const made = await mkdir(inParent).then(
          () => true,
          (error: { code?: string }) => {
            if (error.code === "EEXIST") return false; // Made meanwhile: used only if the command user could use it.
            throw error;
          },
        );
        const child = await open(inParent, GUARDED_DIRECTORY | constants.O_NOFOLLOW);
        await parent.close();
        parent = child;
        if (made) await child.chown(this.uid, this.gid);
        else {
          const found = placed(`${file.path}/${missing.slice(0, index + 1).join("/")}`, await child.stat());
          const refused = index < missing.length - 1 ? createDirsRefusal(found, [], this.who) : directoryRefusal(found, [], this.who);
          if (refused) throw this.refusal("write", shown, refused);
        }
      }
    } finally {
      await parent.close();
    }
  }
}
