import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import { open } from "node:fs/promises";
import type { Client } from "ssh2";
import { VERSION } from "../core/version.ts";
import { HopError } from "./hopErrors.ts";
import type { LocalPlatform } from "./platformMatch.ts";
import { runRemote } from "./remoteCommand.ts";
import { shellQuote } from "./shellQuote.ts";

const HASH_CHUNK = 1024 * 1024;

/**
 * The agentd binary a hop copies: where it is, its size and sha256, the platform it runs on. Never
 * its bytes: the upload streams them from `path` (the binary is over 100 MB).
 */
export interface LocalBinary {
  path: string;
  size: number;
  sha256: string;
  version: string;
  platform: LocalPlatform;
}

function localPlatform(): LocalPlatform {
  const report = (process as { report?: { getReport?: () => { header?: { glibcVersionRuntime?: string } } } }).report?.getReport?.();
  const libc = process.platform !== "linux" ? "unknown" : report?.header?.glibcVersionRuntime ? "glibc" : "musl";
  return { platform: process.platform, arch: process.arch, libc };
}

/** The running binary: `process.execPath` when compiled; from source there is none. */
export function runningBinaryPath(): string | undefined {
  const compiled = Bun.main.startsWith("/$bunfs/") || Bun.main.startsWith("B:/~BUN/");
  return compiled ? process.execPath : undefined;
}

/** sha256 of a file read through one reused buffer: hashing 100 MB leaves no 100 MB of garbage behind. */
async function hashFile(path: string): Promise<string> {
  const hash = createHash("sha256");
  const buffer = Buffer.allocUnsafe(HASH_CHUNK);
  const file = await open(path, "r");
  try {
    for (;;) {
      const { bytesRead } = await file.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) return hash.digest("hex");
      hash.update(buffer.subarray(0, bytesRead));
    }
  } finally {
    await file.close();
  }
}

/** Hashes the binary (streamed from disk) once per (size, mtime); a rebuilt file is hashed again. */
export function createLocalBinarySource(path: string): () => Promise<LocalBinary> {
  let cached: { key: string; binary: Promise<LocalBinary> } | undefined;
  return () => {
    let info: { size: number; mtimeMs: number };
    try {
      info = statSync(path);
    } catch (error) {
      return Promise.reject(new HopError("hop_upload_failed", `Cannot read the agentd binary at ${path}: ${(error as Error).message}`));
    }
    const key = `${info.size}:${info.mtimeMs}`;
    if (cached?.key !== key) {
      const entry = {
        key,
        binary: hashFile(path).then(
          (sha256): LocalBinary => ({ path, size: info.size, sha256, version: VERSION, platform: localPlatform() }),
          (error: unknown) => {
            // A failed read is not kept: the next hop tries again.
            if (cached === entry) cached = undefined;
            throw new HopError("hop_upload_failed", `Cannot read the agentd binary at ${path}: ${(error as Error).message}`, {
              cause: error,
            });
          },
        ),
      };
      cached = entry;
    }
    return cached.binary;
  };
}

/** Runs `<bin> version --json` remotely: proof the binary runs on that host. */
export async function binaryRunsCheck(
  ssh: Client,
  binPath: string,
  timeoutMs: number,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  const result = await runRemote(ssh, `${shellQuote(binPath)} version --json`, timeoutMs);
  if (result.code === 0 && result.stdout.trim().startsWith("{")) return { ok: true };
  return { ok: false, reason: `exit ${result.code ?? "none"}: ${(result.stderr || result.stdout).trim().slice(0, 300) || "no output"}` };
}
