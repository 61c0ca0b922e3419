import { randomBytes } from "node:crypto";
import { readlinkSync, realpathSync } from "node:fs";
import { chmod, chown, mkdir, open, realpath, rename, rm, stat, writeFile, type FileHandle } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, resolve, sep } from "node:path";
import { AgentdError } from "../core/errors/index.ts";
import {
  DEFAULT_READ_BYTES,
  chooseEncoding,
  decodeContent,
  encodeContent,
  type ReadFileArgs,
  type ReadFileResult,
  type WriteFileArgs,
  type WriteFileResult,
} from "./fileSchemas.ts";

/** File reads and writes on this host, for the file API every agentd serves. */

/**
 * agentd's own files (the data dir with its store and token, the config file): never read or
 * written through the file tools, whatever path or link leads there. Each check is made on what was
 * actually opened (/proc/self/fd), so a link swapped between a check and the open gains nothing.
 */
class OwnFiles {
  private readonly roots: string[];

  constructor(paths: readonly string[]) {
    this.roots = paths.map((path) => {
      try {
        return realpathSync(path);
      } catch {
        return resolve(path);
      }
    });
  }

  /** Throws path_protected when `real` (a resolved path) is one of agentd's own files. */
  assertNotOwn(real: string, shown: string, verb: "read" | "write"): void {
    const root = this.roots.find((r) => real === r || real.startsWith(r + sep));
    if (root)
      throw new AgentdError(
        "path_protected",
        `Cannot ${verb} ${shown} as it is inside agentd's own files (${root}): its store, token and logs are not for the agent's tools`,
      );
  }

  /** The same check on an open descriptor: where it really leads. */
  assertHandle(handle: FileHandle, shown: string, verb: "read" | "write"): void {
    this.assertNotOwn(readlinkSync(`/proc/self/fd/${handle.fd}`), shown, verb);
  }
}

function resolvePath(path: string): string {
  const expanded = path === "~" ? homedir() : path.startsWith("~/") ? `${homedir()}/${path.slice(2)}` : path;
  return isAbsolute(expanded) ? expanded : resolve(homedir(), expanded);
}

function fileError(error: unknown, path: string, writing = false): AgentdError {
  const code = (error as { code?: string }).code;
  if (code === "ENOENT" && writing)
    return new AgentdError("directory_not_found", `${dirname(path)} does not exist; pass create_dirs: true to create it`);
  if (code === "ENOENT") return new AgentdError("file_not_found", `${path} does not exist`);
  if (code === "EISDIR") return new AgentdError("file_is_directory", `${path} is a directory; list it with exec_command "ls -la ${path}"`);
  if (code === "ENOTDIR") return new AgentdError("file_not_found", `A parent of ${path} is not a directory`);
  if (code === "EACCES" || code === "EPERM") return new AgentdError("file_permission_denied", `Permission denied: ${path}`);
  return new AgentdError("file_io_error", `Cannot access ${path}: ${(error as Error).message}`);
}

async function readLocalFile(own: OwnFiles, args: ReadFileArgs): Promise<ReadFileResult> {
  const path = resolvePath(args.path);
  try {
    const handle = await open(path, "r");
    try {
      own.assertHandle(handle, path, "read");
      const info = await handle.stat();
      if (info.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
      const offset = Math.min(args.offset ?? 0, info.size);
      const length = Math.min(args.max_bytes ?? DEFAULT_READ_BYTES, info.size - offset);
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, offset);
      const bytes = buffer.subarray(0, bytesRead);
      const encoding = chooseEncoding(bytes, args.encoding);
      return {
        path,
        size: info.size,
        offset,
        bytes: bytesRead,
        encoding,
        content: encodeContent(bytes, encoding),
        truncated: offset + bytesRead < info.size,
      };
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw error instanceof AgentdError ? error : fileError(error, path);
  }
}

/**
 * Replaces the file (or appends to it) as the operator would with an editor: through a symbolic link
 * to its target, keeping its owner, group and mode. A file with several hard links is rewritten in
 * place, so every name still shows the new content; otherwise a temp file is renamed over it, so a
 * reader never sees half of it.
 */
async function writeLocalFile(own: OwnFiles, args: WriteFileArgs): Promise<WriteFileResult> {
  const path = resolvePath(args.path);
  const data = decodeContent(args.content, args.encoding);
  try {
    if (args.create_dirs) {
      own.assertNotOwn(await nearestExisting(dirname(path)), path, "write");
      await mkdir(dirname(path), { recursive: true });
    }
    // A link's target is the file meant; a dangling link is created through, as the shell would.
    const target = await realpath(path).catch(() => path);
    // Everything below goes through the opened directory (/proc/self/fd/N/name): a directory
    // swapped for a link after this check cannot redirect the write.
    const directory = await open(dirname(target), "r");
    try {
      own.assertHandle(directory, path, "write");
      const inDirectory = join(`/proc/self/fd/${directory.fd}`, basename(target));
      const existing = await stat(inDirectory).catch(() => undefined);
      if (existing?.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
      const newMode = args.mode ? Number.parseInt(args.mode, 8) : 0o644;
      if (args.append) {
        // agentd's own umask is 077: a new file gets the mode asked for, as the operator's shell would give it.
        await writeThroughHandle(own, inDirectory, path, data, "a", existing ? undefined : newMode);
      } else if (!existing) {
        await replaceByRename(inDirectory, data, { mode: newMode });
      } else if (existing.nlink > 1 || !(await replaceByRename(inDirectory, data, existing))) {
        await writeThroughHandle(own, inDirectory, path, data, "r+");
      }
      return { path, bytes_written: data.length, size: (await stat(inDirectory)).size, created: !existing };
    } finally {
      await directory.close();
    }
  } catch (error) {
    throw error instanceof AgentdError ? error : fileError(error, path, true);
  }
}

/** The deepest existing directory of `dir`, resolved: where a mkdir -p would start creating. */
async function nearestExisting(dir: string): Promise<string> {
  for (let current = dir; ; current = dirname(current)) {
    const real = await realpath(current).catch(() => undefined);
    if (real !== undefined || current === dirname(current)) return real ?? current;
  }
}

/** Temp file + rename, with the old file's owner and mode; false when its owner cannot be given back. */
async function replaceByRename(target: string, data: Buffer, like: { mode: number; uid?: number; gid?: number }): Promise<boolean> {
  const temp = `${target}.agentd-${randomBytes(4).toString("hex")}`;
  try {
    await writeFile(temp, data, { flag: "wx", mode: 0o600 });
    if (like.uid !== undefined && like.gid !== undefined) {
      try {
        await chown(temp, like.uid, like.gid);
      } catch {
        // Not ours to give away (agentd is not root): the caller writes in place, which keeps both.
        await rm(temp, { force: true });
        return false;
      }
    }
    await chmod(temp, like.mode & 0o7777);
    await rename(temp, target);
    return true;
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/** Appends ("a") or rewrites in place ("r+", keeping every hard link), checked on the opened file. */
async function writeThroughHandle(
  own: OwnFiles,
  target: string,
  shown: string,
  data: Buffer,
  flags: "a" | "r+",
  newMode?: number,
): Promise<void> {
  const handle = await open(target, flags);
  try {
    own.assertHandle(handle, shown, "write");
    if (flags === "a") {
      await handle.appendFile(data);
      // On the handle, not the name: a name swapped for a link meanwhile cannot redirect the chmod.
      if (newMode !== undefined) await handle.chmod(newMode);
      return;
    }
    await handle.truncate(0);
    await handle.write(data, 0, data.length, 0);
  } finally {
    await handle.close();
  }
}

/** This host's files, with agentd's own (`ownPaths`: the data dir, the config file) kept out of reach. */
export function createLocalFiles(ownPaths: readonly string[]): {
  read(args: ReadFileArgs): Promise<ReadFileResult>;
  write(args: WriteFileArgs): Promise<WriteFileResult>;
} {
  const own = new OwnFiles(ownPaths);
  return { read: (args) => readLocalFile(own, args), write: (args) => writeLocalFile(own, args) };
}
