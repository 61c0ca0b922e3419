import { randomBytes } from "node:crypto";
import { appendFile, mkdir, open, rename, rm, stat, writeFile } from "node:fs/promises";
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

/** Replaces atomically (temp file + rename, keeping the old mode) or appends. */
export async function writeLocalFile(args: WriteFileArgs): Promise<WriteFileResult> {
  const path = resolvePath(args.path);
  const data = decodeContent(args.content, args.encoding);
  try {
    if (args.create_dirs) await mkdir(dirname(path), { recursive: true });
    const existing = await stat(path).catch(() => undefined);
    if (args.append) {
      await appendFile(path, data, args.mode ? { mode: parseInt(args.mode, 8) } : {});
    } else {
      if (existing?.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
      const mode = existing ? existing.mode & 0o7777 : args.mode ? parseInt(args.mode, 8) : 0o644;
      const temp = `${path}.agentd-${randomBytes(4).toString("hex")}`;
      try {
        await writeFile(temp, data, { mode });
        await rename(temp, path);
      } catch (error) {
        await rm(temp, { force: true });
        throw error;
      }
    }
    return { path, bytes_written: data.length, size: (await stat(path)).size, created: !existing };
  } catch (error) {
    throw error instanceof AgentdError ? error : fileError(error, path, true);
  }
}

export const localFileAccess = { read: readLocalFile, write: writeLocalFile };
