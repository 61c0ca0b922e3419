import { randomBytes } from "node:crypto";
import { mkdir, open, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { z } from "zod";
import { defineTool, ToolError, type ToolDefinition } from "../toolDefinition.ts";

const BINARY_SNIFF_BYTES = 8192;

function absolute(path: string): string {
  return isAbsolute(path) ? path : resolve(process.cwd(), path);
}

async function statOrFail(path: string) {
  try {
    return await stat(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new ToolError("file_not_found", `${path} does not exist`);
    if (code === "EACCES") throw new ToolError("permission_denied", `No permission to read ${path}`);
    throw new ToolError("file_error", `Cannot read ${path}: ${(error as Error).message}`);
  }
}

export const readFileParameters = z.strictObject({
  path: z.string().min(1).describe("File to read; relative paths are resolved from agentd's working directory"),
  offset: z.number().int().min(1).default(1).describe("First line to return, counting from 1"),
  limit: z.number().int().min(1).max(10_000).default(500).describe("Most lines to return"),
});

export function createReadFileTool(options: { maxBytes: number }): ToolDefinition<typeof readFileParameters> {
  return defineTool({
    name: "read_file",
    description: "Read lines of a text file. Returns the requested lines and the total line count; refuses binary and very large files.",
    parameters: readFileParameters,
    scope: "read",
    timeoutMs: 30_000,
    async execute(args) {
      const path = absolute(args.path);
      const info = await statOrFail(path);
      if (info.isDirectory()) throw new ToolError("is_a_directory", `${path} is a directory; list it with exec_command "ls -la ${path}"`);
      if (info.size > options.maxBytes) {
        throw new ToolError("file_too_large", `${path} is ${info.size} bytes, over the ${options.maxBytes}-byte limit of read_file; read parts with exec_command (head, tail, grep, sed -n)`, { size: info.size });
      }
      const bytes = new Uint8Array(await Bun.file(path).arrayBuffer());
      if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) throw new ToolError("binary_file", `${path} looks binary (it holds NUL bytes); read_file only reads text`, { size: info.size });
      const lines = new TextDecoder().decode(bytes).split("\n");
      if (lines.length > 1 && lines.at(-1) === "") lines.pop();
      const from = args.offset - 1;
      const slice = lines.slice(from, from + args.limit);
      return { path, total_lines: lines.length, offset: args.offset, lines_returned: slice.length, more: from + slice.length < lines.length, content: slice.join("\n") };
    },
  });
}

export const writeFileParameters = z.strictObject({
  path: z.string().min(1).describe("File to write; replaced whole"),
  content: z.string().describe("The full new content"),
  create_dirs: z.boolean().default(false).describe("Create missing parent directories"),
});

export function createWriteFileTool(): ToolDefinition<typeof writeFileParameters> {
  return defineTool({
    name: "write_file",
    description: "Write a whole text file atomically (a temporary file renamed over the target, so readers never see half a file).",
    parameters: writeFileParameters,
    scope: "fs_write",
    timeoutMs: 30_000,
    async execute(args) {
      const path = absolute(args.path);
      const dir = dirname(path);
      if (args.create_dirs) await mkdir(dir, { recursive: true });
      const existing = await stat(path).catch(() => undefined);
      if (existing?.isDirectory()) throw new ToolError("is_a_directory", `${path} is a directory`);
      const temp = join(dir, `.${basename(path)}.agentd-${randomBytes(4).toString("hex")}.tmp`);
      try {
        await writeFile(temp, args.content, { mode: existing ? existing.mode & 0o7777 : 0o644 });
        const handle = await open(temp, "r");
        await handle.sync();
        await handle.close();
        await rename(temp, path);
      } catch (error) {
        await rm(temp, { force: true });
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOENT") throw new ToolError("directory_not_found", `${dir} does not exist; pass create_dirs: true to create it`);
        if (code === "EACCES") throw new ToolError("permission_denied", `No permission to write ${path}`);
        throw new ToolError("file_error", `Cannot write ${path}: ${(error as Error).message}`);
      }
      return { path, bytes: Buffer.byteLength(args.content), created: !existing };
    },
  });
}
