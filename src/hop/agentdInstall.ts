import type { Client } from "ssh2";
import type { Logger } from "../core/log/index.ts";
import { uploadBinary } from "./binaryUpload.ts";
import { HopError } from "./hopErrors.ts";
import type { HopProgress } from "./hopProgress.ts";
import { binaryRunsCheck, type LocalBinary } from "./localBinary.ts";
import { platformMismatch } from "./platformMatch.ts";
import type { RemoteFacts } from "./remoteProbe.ts";

export interface UploadReport {
  uploaded: boolean;
  binary_bytes: number;
  wire_bytes: number;
  compressed: boolean;
  verified?: "sha256" | "size";
}

/** Either the remote host can run this agentd (`uploaded`: a new build is there, so restart it) or the hop falls back to SSH. */
export type InstallOutcome = { kind: "installed"; uploaded: boolean } | { kind: "fallback"; reason: string };

export interface InstallOptions {
  hop: string;
  ssh: Client;
  binary: LocalBinary;
  facts: RemoteFacts;
  remoteDir: string;
  commandTimeoutMs: number;
  log: Logger;
  progress(event: HopProgress): void;
  /** Told what was (or was not) uploaded as soon as that is known, so a failed open still shows it. */
  onUpload(report: UploadReport): void;
}

/**
 * Puts the local agentd into `<remoteDir>/bin` unless the same build (by sha256) is already
 * there, and decides on the fallback when it cannot run on that host.
 */
export async function installAgentd(options: InstallOptions): Promise<InstallOutcome> {
  const { ssh, binary, facts, progress, commandTimeoutMs } = options;
  const mismatch = platformMismatch(binary.platform, facts);
  if (mismatch) return { kind: "fallback", reason: mismatch };
  const binPath = `${options.remoteDir}/bin/agentd`;
  const same = facts.installed?.sha256 === binary.sha256;
  options.onUpload({ uploaded: false, binary_bytes: binary.size, wire_bytes: 0, compressed: false });
  if (same && !facts.installed!.runs)
    return { kind: "fallback", reason: `the installed agentd (same sha256) does not run there: \`${binPath} version\` failed` };
  if (same) return { kind: "installed", uploaded: false };
  if (facts.freeKb !== null && facts.freeKb * 1024 < binary.size * 2.5) {
    throw new HopError(
      "hop_upload_failed",
      `Not enough free disk on the remote host: ${facts.freeKb} KiB free, the upload needs about ${Math.ceil((binary.size * 2.5) / 1024)} KiB`,
    );
  }
  const started = Date.now();
  progress({
    step: "upload",
    message: `uploading agentd (${binary.size} bytes${facts.gzip ? ", gzip on the wire" : ""}) to ${binPath}`,
  });
  const result = await uploadBinary({
    client: ssh,
    binaryPath: binary.path,
    binarySize: binary.size,
    sha256: binary.sha256,
    binPath,
    gzip: facts.gzip,
    shaTool: facts.shaTool,
    commandTimeoutMs,
    onProgress: (bytes, total) => progress({ step: "upload", message: "uploading", bytes, total, elapsed_ms: Date.now() - started }),
  });
  options.onUpload({
    uploaded: true,
    binary_bytes: binary.size,
    wire_bytes: result.wireBytes,
    compressed: result.compressed,
    verified: result.verified,
  });
  options.log.info("hop.uploaded", {
    hop: options.hop,
    bytes: binary.size,
    wire_bytes: result.wireBytes,
    verified: result.verified,
    ms: Date.now() - started,
  });
  const runs = await binaryRunsCheck(ssh, binPath, commandTimeoutMs);
  if (!runs.ok) return { kind: "fallback", reason: `the uploaded agentd does not run there: ${runs.reason}` };
  return { kind: "installed", uploaded: true };
}
