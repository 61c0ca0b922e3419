import { randomBytes } from "node:crypto";
import type { Client, SFTPWrapper } from "ssh2";
import { HopError } from "./hopErrors.ts";
import { runRemote, runRemoteChecked } from "./remoteCommand.ts";
import { shaCommand } from "./remoteProbe.ts";
import { shellQuote } from "./shellQuote.ts";

export interface UploadOptions {
  client: Client;
  /** The bytes of the local binary and their sha256 (hex). */
  binary: Uint8Array<ArrayBuffer>;
  sha256: string;
  /** Absolute remote path of the installed binary. */
  binPath: string;
  gzip: boolean;
  shaTool: "sha256sum" | "openssl" | "none";
  commandTimeoutMs: number;
  onProgress(sent: number, total: number): void;
}

export interface UploadResult {
  wireBytes: number;
  compressed: boolean;
  verified: "sha256" | "size";
}

const CHUNK = 256 * 1024;
// Writes in flight at once: SFTP answers each write, so one at a time would wait a round trip per chunk.
const IN_FLIGHT = 8;

function openSftp(client: Client): Promise<SFTPWrapper> {
  return new Promise((resolve, reject) => client.sftp((error, sftp) => (error ? reject(error) : resolve(sftp))));
}

async function sftpWriteAll(sftp: SFTPWrapper, path: string, payload: Uint8Array, onProgress: (sent: number) => void): Promise<void> {
  const handle = await new Promise<Buffer>((resolve, reject) =>
    sftp.open(path, "w", { mode: 0o600 }, (error, h) => (error ? reject(error) : resolve(h))),
  );
  const data = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  let next = 0;
  let sent = 0;
  const writeNext = async (): Promise<void> => {
    while (next < data.length) {
      const offset = next;
      const length = Math.min(CHUNK, data.length - offset);
      next += length;
      await new Promise<void>((resolve, reject) =>
        sftp.write(handle, data, offset, length, offset, (error) => (error ? reject(error) : resolve())),
      );
      sent += length;
      onProgress(sent);
    }
  };
  try {
    await Promise.all(Array.from({ length: IN_FLIGHT }, writeNext));
  } finally {
    await new Promise<void>((resolve) => sftp.close(handle, () => resolve()));
  }
}

/**
 * Puts the binary at `binPath`: SFTP to a temp name (gzip on the wire when the remote can
 * unpack it), unpack, verify sha256, chmod 755, then an atomic rename over the old one.
 */
export async function uploadBinary(options: UploadOptions): Promise<UploadResult> {
  const temp = `${options.binPath}.upload-${randomBytes(4).toString("hex")}`;
  const sent = options.gzip ? `${temp}.gz` : temp;
  const payload = options.gzip ? Bun.gzipSync(options.binary, { level: 6 }) : options.binary;
  const dir = options.binPath.slice(0, options.binPath.lastIndexOf("/")) || "/";
  const timeout = options.commandTimeoutMs;
  try {
    await runRemoteChecked(options.client, `mkdir -p ${shellQuote(dir)}`, timeout, "Creating the install directory");
    let sftp: SFTPWrapper;
    try {
      sftp = await openSftp(options.client);
    } catch (error) {
      throw new HopError("hop_upload_failed", `The remote host offers no SFTP: ${(error as Error).message}`, { cause: error });
    }
    try {
      await sftpWriteAll(sftp, sent, payload, (bytes) => options.onProgress(bytes, payload.length));
    } catch (error) {
      throw new HopError("hop_upload_failed", `Uploading to ${sent} failed: ${(error as Error).message}`, { cause: error });
    } finally {
      sftp.end();
    }
    if (options.gzip)
      await runRemoteChecked(
        options.client,
        `gzip -dc ${shellQuote(sent)} > ${shellQuote(temp)} && rm -f ${shellQuote(sent)}`,
        timeout,
        "Unpacking the upload",
      );
    const verified = await verify(options, temp);
    await runRemoteChecked(
      options.client,
      `chmod 755 ${shellQuote(temp)} && mv -f ${shellQuote(temp)} ${shellQuote(options.binPath)}`,
      timeout,
      "Installing the binary",
    );
    return { wireBytes: payload.length, compressed: options.gzip, verified };
  } catch (error) {
    await runRemote(options.client, `rm -f ${shellQuote(temp)} ${shellQuote(`${temp}.gz`)}`, timeout).catch(() => undefined);
    throw error;
  }
}

async function verify(options: UploadOptions, temp: string): Promise<"sha256" | "size"> {
  if (options.shaTool === "none") {
    const out = await runRemoteChecked(options.client, `wc -c < ${shellQuote(temp)}`, options.commandTimeoutMs, "Measuring the upload");
    if (Number(out.trim()) !== options.binary.length)
      throw new HopError("hop_upload_failed", `The uploaded file has ${out.trim()} bytes, expected ${options.binary.length}`);
    return "size";
  }
  const out = await runRemoteChecked(options.client, shaCommand(shellQuote(temp), "sha="), options.commandTimeoutMs, "Hashing the upload");
  const remoteSha = /sha=([0-9a-f]{64})/.exec(out)?.[1];
  if (remoteSha !== options.sha256)
    throw new HopError(
      "hop_upload_failed",
      `The uploaded binary's sha256 is ${remoteSha ?? "unreadable"}, expected ${options.sha256}; the transfer was corrupted`,
    );
  return "sha256";
}
