import { AgentdError } from "../core/errors/index.ts";
import type { ReadFileArgs, ReadFileResult, WriteFileArgs, WriteFileResult } from "./fileSchemas.ts";
import { sliceLines, type LineSlice } from "./textLines.ts";

/** Where files are read and written: this host (localFiles.ts) or a hop's remote agentd. */
export interface FileAccess {
  read(args: ReadFileArgs): Promise<ReadFileResult>;
  write(args: WriteFileArgs): Promise<WriteFileResult>;
}

export interface TextReadRequest {
  path: string;
  offset: number;
  limit: number;
}

/** The agent's read_file: lines of a text file, refusing binaries and files over maxBytes. */
export async function readTextLines(files: FileAccess, request: TextReadRequest, maxBytes: number): Promise<LineSlice & { path: string }> {
  const result = await files.read({ path: request.path, max_bytes: maxBytes, encoding: "auto" });
  if (result.truncated) {
    throw new AgentdError(
      "file_too_large",
      `${result.path} is ${result.size} bytes, over the ${maxBytes}-byte limit of read_file; read parts with exec_command (head, tail, grep, sed -n)`,
      {
        details: { size: result.size },
      },
    );
  }
  if (result.encoding !== "utf8")
    throw new AgentdError("binary_file", `${result.path} looks binary; read_file only reads text`, {
      details: { size: result.size },
    });
  return { path: result.path, ...sliceLines(result.content, request.offset, request.limit) };
}

/** The agent's write_file: the whole file replaced atomically. */
export async function writeTextFile(
  files: FileAccess,
  request: { path: string; content: string; create_dirs: boolean },
): Promise<{ path: string; bytes: number; created: boolean }> {
  const result = await files.write({ path: request.path, content: request.content, create_dirs: request.create_dirs });
  return { path: result.path, bytes: result.bytes_written, created: result.created };
}
