import { z } from "zod";
import { defineTool, type ToolDefinition } from "../core/tools/toolDefinition.ts";
import { readTextLines, writeTextFile, type FileAccess } from "./textFileAccess.ts";

const readFileParameters = z.strictObject({
  path: z.string().min(1).describe("File to read; relative paths start at the home directory of the user the commands run as"),
  offset: z.number().int().min(1).default(1).describe("First line to return, counting from 1"),
  limit: z.number().int().min(1).max(10_000).default(500).describe("Most lines to return"),
});

export function createReadFileTool(options: { maxBytes: number; files: FileAccess }): ToolDefinition<typeof readFileParameters> {
  return defineTool({
    name: "read_file",
    description: "Read lines of a text file. Returns the requested lines and the total line count; refuses binary and very large files.",
    parameters: readFileParameters,
    scope: "read",
    timeoutMs: 30_000,
    hostBound: true,
    execute: (args) => readTextLines(options.files, args, options.maxBytes),
  });
}

const writeFileParameters = z.strictObject({
  path: z.string().min(1).describe("File to write; replaced whole"),
  content: z.string().describe("The full new content"),
  create_dirs: z.boolean().default(false).describe("Create missing parent directories"),
});

export function createWriteFileTool(files: FileAccess): ToolDefinition<typeof writeFileParameters> {
  return defineTool({
    name: "write_file",
    description: "Write a whole text file atomically (a temporary file renamed over the target, so readers never see half a file).",
    parameters: writeFileParameters,
    scope: "fs_write",
    timeoutMs: 30_000,
    hostBound: true,
    execute: (args) => writeTextFile(files, args),
  });
}
