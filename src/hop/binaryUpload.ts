import { randomBytes } from "node:crypto";
import type { Client } from "ssh2";
import { HopError } from "./hopErrors.ts";
import { runRemote, runRemoteChecked } from "./remoteCommand.ts";
import { shaCommand } from "./remoteProbe.ts";
import { shellQuote } from "./shellQuote.ts";
import { openSftp, type SftpSession } from "./sftpSession.ts";
import { uploadPieces, type UploadPiece } from "./uploadSource.ts";

export interface UploadOptions {
  client: Client;
  /** The local binary, read from disk as it is sent; its size and sha256 (hex). */
  binaryPath: string;
  binarySize: number;
  sha256: string;
  /** Absolute remote path of the installed binary. */
  binPath: string;
  gzip: boolean;
  shaTool: "sha256sum" | "openssl" | "none";
  commandTimeoutMs: number;
  /** Bytes of the binary sent so far (before gzip) and its size. */
  onProgress(sent: number, total: number): void;
}

export interface UploadResult {
  wireBytes: number;
  compressed: boolean;
  verified: "sha256" | "size";
}

// 64 KiB, not more: the allocator keeps pages for buffers above 128 KiB (gzip's output pieces, ssh2's
// copy of each write) after they are freed, and a hop's worker kept about 4 MB more with 256 KiB.
const CHUNK = 64 * 1024;
// Writes in flight at once: SFTP answers each write, so one at a time would wait a round trip per
// chunk. With CHUNK this also bounds what the upload holds in memory (2 MiB).
const IN_FLIGHT = 32;

/** Writes the pieces to `path` with up to IN_FLIGHT writes outstanding; returns the bytes written. */
async function sftpWriteAll(
  session: SftpSession,
  path: string,
  pieces: AsyncIterable<UploadPiece>,
  onWritten: (readSoFar: number) => void,
): Promise<number> {
  const { sftp, request } = session;
  const handle = await request<Buffer>((done) => sftp.open(path, "w", { mode: 0o600 }, done));
  const pending = new Set<Promise<void>>();
  let failure: Error | undefined;
  let offset = 0;
  try {
    for await (const piece of pieces) {
      const at = offset;
      offset += piece.data.length;
      const write: Promise<void> = request<void>((done) => sftp.write(handle, piece.data, 0, piece.data.length, at, done)).then(
        () => {
          pending.delete(write);
          piece.release();
          onWritten(piece.readSoFar);
        },
        (error: Error) => {
          pending.delete(write);
          piece.release();
          failure ??= error;
        },
      );
      pending.add(write);
      if (pending.size >= IN_FLIGHT) await Promise.race(pending);
      if (failure) throw failure;
    }
    await Promise.all(pending);
    if (failure) throw failure;
    await request<void>((done) => sftp.close(handle, done));
    return offset;
  } catch (error) {
    // Best effort: the channel may be gone already, and the temp file is removed anyway.
    if (!failure) sftp.close(handle, () => undefined);
    throw error;
  }
}

/**
 * Puts the binary at `binPath`: SFTP to a temp name (gzip on the wire when the remote can
 * unpack it), unpack, verify sha256, chmod 755, then an atomic rename over the old one.
 */
export async function uploadBinary(options: UploadOptions): Promise<UploadResult> {
  const temp = `${options.binPath}.upload-${randomBytes(4).toString("hex")}`;
  const sent = options.gzip ? `${temp}.gz` : temp;
  const dir = options.binPath.slice(0, options.binPath.lastIndexOf("/")) || "/";
  const timeout = options.commandTimeoutMs;
  try {
    await runRemoteChecked(options.client, `mkdir -p ${shellQuote(dir)}`, timeout, "Creating the install directory");
    let session: SftpSession;
    try {
      session = await openSftp(options.client, "upload sftp");
    } catch (error) {
      throw new HopError("hop_upload_failed", `The remote host offers no SFTP: ${(error as Error).message}`, { cause: error });
    }
    let wireBytes: number;
    try {
      const pieces = uploadPieces(options.binaryPath, { gzip: options.gzip, chunk: CHUNK, inFlight: IN_FLIGHT });
      wireBytes = await sftpWriteAll(session, sent, pieces, (read) => options.onProgress(read, options.binarySize));
    } catch (error) {
      throw new HopError("hop_upload_failed", `Uploading to ${sent} failed: ${(error as Error).message}`, { cause: error });
    } finally {
      session.sftp.end();
      // The transfer made about twice the wire size in short-lived buffers (gzip output, ssh2's
      // packets and their ciphertext) that the engine does not count as heap pressure; collected
      // now, the worker goes back to its idle size instead of keeping them until a later collection.
      Bun.gc(true);
    }
    options.onProgress(options.binarySize, options.binarySize);
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
    return { wireBytes, compressed: options.gzip, verified };
  } catch (error) {
    await runRemote(options.client, `rm -f ${shellQuote(temp)} ${shellQuote(`${temp}.gz`)}`, timeout).catch(() => undefined);
    throw error;
  }
}

async function verify(options: UploadOptions, temp: string): Promise<"sha256" | "size"> {
  if (options.shaTool === "none") {
    const out = await runRemoteChecked(options.client, `wc -c < ${shellQuote(temp)}`, options.commandTimeoutMs, "Measuring the upload");
    if (Number(out.trim()) !== options.binarySize)
      throw new HopError("hop_upload_failed", `The uploaded file has ${out.trim()} bytes, expected ${options.binarySize}`);
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
