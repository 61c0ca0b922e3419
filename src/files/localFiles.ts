import { randomBytes } from "node:crypto";
import { appendFile, chmod, chown, mkdir, open, realpath, rename, rm, stat, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, isAbsolute, resolve } from "node:path";
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

export async function readLocalFile(args: ReadFileArgs): Promise<ReadFileResult> {
  const path = resolvePath(args.path);
  try {
    const info = await stat(path);
    if (info.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
    const offset = Math.min(args.offset ?? 0, info.size);
    const length = Math.min(args.max_bytes ?? DEFAULT_READ_BYTES, info.size - offset);
    const handle = await open(path, "r");
    try {
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
export async function writeLocalFile(args: WriteFileArgs): Promise<WriteFileResult> {
  const path = resolvePath(args.path);
  const data = decodeContent(args.content, args.encoding);
  try {
    if (args.create_dirs) await mkdir(dirname(path), { recursive: true });
    // A link's target is the file meant; a dangling link is created through, as the shell would.
    const target = await realpath(path).catch(() => path);
    const existing = await stat(target).catch(() => undefined);
    if (existing?.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
    const newMode = args.mode ? Number.parseInt(args.mode, 8) : 0o644;
    if (args.append) {
      await appendFile(target, data);
      // agentd's own umask is 077: a new file gets the mode asked for, as the operator's shell would give it.
      if (!existing) await chmod(target, newMode);
    } else if (!existing) {
      await replaceByRename(target, data, { mode: newMode });
    } else if (existing.nlink > 1 || !(await replaceByRename(target, data, existing))) {
      await writeInPlace(target, data);
    }
    return { path, bytes_written: data.length, size: (await stat(target)).size, created: !existing };
  } catch (error) {
    throw error instanceof AgentdError ? error : fileError(error, path, true);
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

async function writeInPlace(target: string, data: Buffer): Promise<void> {
  const handle = await open(target, "r+");
  try {
    await handle.truncate(0);
    await handle.write(data, 0, data.length, 0);
  } finally {
    await handle.close();
  }
}

export const localFileAccess = { read: readLocalFile, write: writeLocalFile };
