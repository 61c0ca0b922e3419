import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import type { Client } from "ssh2";
import { VERSION } from "../core/version.ts";
import { HopError } from "./hopErrors.ts";
import type { LocalPlatform } from "./platformMatch.ts";
import { runRemote } from "./remoteCommand.ts";
import { shellQuote } from "./shellQuote.ts";

/** The agentd binary a hop copies: its bytes, sha256 and the platform it runs on. */
export interface LocalBinary {
  path: string;
  bytes: Uint8Array<ArrayBuffer>;
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

/** Reads and hashes the binary once per (size, mtime); a rebuilt file is read again. */
export function createLocalBinarySource(path: string): () => Promise<LocalBinary> {
  let cached: { key: string; binary: Promise<LocalBinary> } | undefined;
  return () => {
    let key: string;
    try {
      const info = statSync(path);
      key = `${info.size}:${info.mtimeMs}`;
    } catch (error) {
      return Promise.reject(new HopError("hop_upload_failed", `Cannot read the agentd binary at ${path}: ${(error as Error).message}`));
    }
    if (cached?.key !== key) {
      const binary = (async () => {
        const bytes = await Bun.file(path).bytes();
        return { path, bytes, sha256: createHash("sha256").update(bytes).digest("hex"), version: VERSION, platform: localPlatform() };
      })();
      cached = { key, binary };
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
