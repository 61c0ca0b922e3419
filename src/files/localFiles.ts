import { randomBytes } from "node:crypto";
import { mkdir, open, realpath, rename, rm, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { AgentdError } from "../core/errors/index.ts";
import type { CommandIdentity } from "../core/process/identity/index.ts";
import {
  CommandUserFiles,
  GUARDED_APPEND,
  GUARDED_CREATE_APPEND,
  GUARDED_DIRECTORY,
  GUARDED_READ,
  GUARDED_REWRITE,
} from "./commandUserFiles.ts";
import { modeAfterWrite } from "./fileAccessRules.ts";
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
import { OwnFiles } from "./ownFiles.ts";

/**
 * File reads and writes on this host, for the file API every agentd serves. agentd's own files are
 * out of reach (ownFiles.ts); with a command user (`guard`), only what it could read or write itself
 * is (commandUserFiles.ts), and what is created for it is its own.
 */
interface Host {
  own: OwnFiles;
  guard: CommandUserFiles | undefined;
}

function resolvePath(path: string, home: string): string {
  const expanded = path === "~" ? home : path.startsWith("~/") ? `${home}/${path.slice(2)}` : path;
  return isAbsolute(expanded) ? expanded : resolve(home, expanded);
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

/** A missing file below a directory the command user may not search: refused, as its own open would be. */
async function refined(guard: CommandUserFiles | undefined, error: unknown, path: string, verb: "read" | "write"): Promise<AgentdError> {
  const code = (error as { code?: string }).code;
  if (guard && (code === "ENOENT" || code === "ENOTDIR"))
    await guard.assertCouldLook(path, verb).catch((refusal: unknown) => {
      error = refusal;
    });
  return error instanceof AgentdError ? error : fileError(error, path, verb === "write");
}

async function readLocalFile({ own, guard }: Host, path: string, args: ReadFileArgs): Promise<ReadFileResult> {
  try {
    await guard?.precheckRead(path);
    const handle = await open(path, guard ? GUARDED_READ : "r");
    try {
      own.assertHandle(handle, path, "read");
      await guard?.assertReadable(handle, path);
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
    throw error instanceof AgentdError ? error : await refined(guard, error, path, "read");
  }
}

/**
 * Replaces the file (or appends to it) as the operator would with an editor: through a symbolic link
 * to its target, keeping its owner, group and mode. A file with several hard links is rewritten in
 * place, so every name still shows the new content; otherwise a temp file is renamed over it, so a
 * reader never sees half of it.
 */
async function writeLocalFile(host: Host, path: string, args: WriteFileArgs): Promise<WriteFileResult> {
  const { own, guard } = host;
  const data = decodeContent(args.content, args.encoding);
  try {
    if (args.create_dirs) {
      own.assertNotOwn(await nearestExisting(dirname(path)), path, "write");
      if (guard) await guard.makeDirectories(dirname(path), path);
      else await mkdir(dirname(path), { recursive: true });
    }
    // A link's target is the file meant; a dangling link is created through, as the shell would.
    const target = await realpath(path).catch(() => path);
    // Everything below goes through the opened directory (/proc/self/fd/N/name): a directory
    // swapped for a link after this check cannot redirect the write.
    const directory = await open(dirname(target), guard ? GUARDED_DIRECTORY : "r");
    try {
      own.assertHandle(directory, path, "write");
      const where = guard && (await guard.directory(directory, path));
      const inDirectory = join(`/proc/self/fd/${directory.fd}`, basename(target));
      const existing = await stat(inDirectory).catch(() => undefined);
      if (existing?.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
      const plan = guard && where ? await guard.plan(where, inDirectory, path, args.append === true) : undefined;
      // A link put in the file's place since realpath: not followed for the command user.
      if (guard && plan && plan.create !== !existing) throw guard.refusal("write", path, `${path} was replaced meanwhile`);
      const newMode = args.mode ? Number.parseInt(args.mode, 8) : 0o644;
      const write: InPlace = { own, guard, target: inDirectory, shown: path, data };
      if (args.append) {
        // agentd's own umask is 077: a new file gets the mode asked for, as the operator's shell would give it.
        await writeThroughHandle(write, "a", existing ? undefined : newMode);
      } else if (!existing) {
        await replaceByRename(inDirectory, data, guard ? { mode: newMode, uid: guard.uid, gid: guard.gid } : { mode: newMode });
      } else if (
        existing.nlink > 1 ||
        (plan?.create === false && !plan.rename) ||
        !(await replaceByRename(
          inDirectory,
          data,
          guard ? { uid: existing.uid, gid: existing.gid, mode: modeAfterWrite(existing.mode) } : existing,
        ))
      ) {
        await writeThroughHandle(write, "r+");
      }
      return { path, bytes_written: data.length, size: (await stat(inDirectory)).size, created: !existing };
    } finally {
      await directory.close();
    }
  } catch (error) {
    throw error instanceof AgentdError ? error : await refined(guard, error, path, "write");
  }
}

/** The deepest existing directory of `dir`, resolved: where a mkdir -p would start creating. */
async function nearestExisting(dir: string): Promise<string> {
  for (let current = dir; ; current = dirname(current)) {
    const real = await realpath(current).catch(() => undefined);
    if (real !== undefined || current === dirname(current)) return real ?? current;
  }
}

/**
 * Temp file + rename, with the old file's owner and mode (or, for the command user, its own);
 * false when the owner cannot be given back. Owner and mode are set on the handle: a temp name
 * swapped for a link meanwhile cannot redirect them.
 */
async function replaceByRename(target: string, data: Buffer, like: { mode: number; uid?: number; gid?: number }): Promise<boolean> {
  const temp = `${target}.agentd-${randomBytes(4).toString("hex")}`;
  const handle = await open(temp, "wx", 0o600);
  try {
    try {
      await handle.writeFile(data);
      if (like.uid !== undefined && like.gid !== undefined) {
        try {
          await handle.chown(like.uid, like.gid);
        } catch {
          // Not ours to give away (agentd is not root): the caller writes in place, which keeps both.
          await rm(temp, { force: true });
          return false;
        }
      }
      await handle.chmod(like.mode & 0o7777);
    } finally {
      await handle.close();
    }
    await rename(temp, target);
    return true;
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
}

interface InPlace extends Host {
  target: string;
  shown: string;
  data: Buffer;
}

/** Appends ("a") or rewrites in place ("r+", keeping every hard link), checked on the opened file. */
async function writeThroughHandle({ own, guard, target, shown, data }: InPlace, flags: "a" | "r+", newMode?: number): Promise<void> {
  const creating = flags === "a" && newMode !== undefined;
  const guardedFlags = flags === "r+" ? GUARDED_REWRITE : creating ? GUARDED_CREATE_APPEND : GUARDED_APPEND;
  const handle = await open(target, guard ? guardedFlags : flags, guard ? 0o600 : 0o666);
  try {
    own.assertHandle(handle, shown, "write");
    // The command user's new file is its own; an existing one must be writable by it, and loses set-id bits as its write would.
    let oldMode: number | undefined;
    if (guard && creating) await handle.chown(guard.uid, guard.gid);
    else if (guard) oldMode = await guard.assertWritable(handle, shown);
    if (flags === "a") {
      await handle.appendFile(data);
      // On the handle, not the name: a name swapped for a link meanwhile cannot redirect the chmod.
      if (newMode !== undefined) await handle.chmod(newMode);
    } else {
      await handle.truncate(0);
      await handle.write(data, 0, data.length, 0);
    }
    if (oldMode !== undefined && modeAfterWrite(oldMode) !== (oldMode & 0o7777)) await handle.chmod(modeAfterWrite(oldMode));
  } finally {
    await handle.close();
  }
}

/**
 * This host's files, with agentd's own (`ownPaths`: the data dir, the config file) kept out of reach
 * and, given a command user (`identity` in command_user mode), only what that user could reach within it.
 */
export function createLocalFiles(
  ownPaths: readonly string[],
  identity?: CommandIdentity,
): {
  read(args: ReadFileArgs): Promise<ReadFileResult>;
  write(args: WriteFileArgs): Promise<WriteFileResult>;
} {
  const guard = identity?.mode === "command_user" ? new CommandUserFiles(identity) : undefined;
  const host: Host = { own: new OwnFiles(ownPaths), guard };
  // Relative paths and ~ start at the home of whoever the tools act for.
  const home = () => guard?.home ?? homedir();
  return {
    read: (args) => readLocalFile(host, resolvePath(args.path, home()), args),
    write: (args) => writeLocalFile(host, resolvePath(args.path, home()), args),
  };
}
