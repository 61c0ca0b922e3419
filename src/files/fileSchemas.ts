import { z } from "zod";

/** Shapes of the file API (`/api/files`), shared with the agent's read_file/write_file tools. */

export const DEFAULT_READ_BYTES = 256 * 1024;
const MAX_READ_BYTES = 8 * 1024 * 1024;

/** A path the kernel can take: a NUL would cut it short (and crash the call) at the syscall. */
const filePath = (description: string) =>
  z
    .string()
    .min(1)
    .refine((path) => !path.includes("\0"), "must not contain NUL bytes")
    .describe(description);

export const readFileArgs = z.strictObject({
  path: filePath("File to read; relative paths start at the daemon user's home directory"),
  offset: z.number().int().min(0).optional().describe("Byte offset to start at (default 0)"),
  max_bytes: z.number().int().min(1).max(MAX_READ_BYTES).optional().describe(`Most bytes to return (default ${DEFAULT_READ_BYTES})`),
  encoding: z
    .enum(["auto", "utf8", "base64"])
    .optional()
    .describe("auto (default): utf8 for text, base64 when the bytes are not UTF-8 text"),
});

export const writeFileArgs = z.strictObject({
  path: filePath("File to write; relative paths start at the daemon user's home directory"),
  content: z.string().describe("The new content (or the bytes to append)"),
  encoding: z.enum(["utf8", "base64"]).optional().describe("How content is encoded (default utf8)"),
  append: z.boolean().optional().describe("Append instead of replacing the file"),
  create_dirs: z.boolean().optional().describe("Create missing parent directories"),
  mode: z
    .string()
    .regex(/^[0-7]{3,4}$/)
    .optional()
    .describe("Octal permissions for a new file, e.g. 644"),
});

export type ReadFileArgs = z.infer<typeof readFileArgs>;
export type WriteFileArgs = z.infer<typeof writeFileArgs>;

export interface ReadFileResult {
  /** Absolute path read. */
  path: string;
  size: number;
  offset: number;
  /** Bytes returned. */
  bytes: number;
  encoding: "utf8" | "base64";
  content: string;
  /** More bytes follow `offset + bytes`. */
  truncated: boolean;
}

export interface WriteFileResult {
  path: string;
  bytes_written: number;
  size: number;
  /** False when an existing file was replaced or appended to. */
  created: boolean;
}

/** utf8 when `bytes` decode as text without NULs, else base64; explicit choices are kept. */
export function chooseEncoding(bytes: Uint8Array, requested: ReadFileArgs["encoding"]): "utf8" | "base64" {
  if (requested === "utf8" || requested === "base64") return requested;
  if (bytes.includes(0)) return "base64";
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(trimPartialUtf8(bytes));
    return "utf8";
  } catch {
    return "base64";
  }
}

/** Drops an incomplete UTF-8 sequence at the end (a read cut mid-character is still text). */
function trimPartialUtf8(bytes: Uint8Array): Uint8Array {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    if (byte >= 0xc0) {
      const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
      return need > back ? bytes.subarray(0, bytes.length - back) : bytes;
    }
    return bytes;
  }
  return bytes;
}

export function encodeContent(bytes: Uint8Array, encoding: "utf8" | "base64"): string {
  return encoding === "base64" ? Buffer.from(bytes).toString("base64") : new TextDecoder().decode(bytes);
}

export function decodeContent(content: string, encoding: "utf8" | "base64" | undefined): Buffer {
  return encoding === "base64" ? Buffer.from(content, "base64") : Buffer.from(content, "utf8");
}
