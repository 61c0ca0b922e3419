import type { FileHandle } from "node:fs/promises";
import { open } from "node:fs/promises";
import { createGzip } from "node:zlib";

/** A piece of the upload as it goes on the wire; `release` once it is written (its buffer is reused). */
export interface UploadPiece {
  data: Buffer;
  /** Bytes of the file read up to and including this piece (before gzip). */
  readSoFar: number;
  release(): void;
}

/** Buffers handed out and given back, so reading 100 MB allocates a few, not a hundred MB of garbage. */
class BufferPool {
  private readonly free: Buffer[];
  private readonly waiting: Array<(buffer: Buffer) => void> = [];

  constructor(count: number, size: number) {
    this.free = Array.from({ length: count }, () => Buffer.allocUnsafe(size));
  }

  take(): Promise<Buffer> {
    const buffer = this.free.pop();
    return buffer ? Promise.resolve(buffer) : new Promise((resolve) => this.waiting.push(resolve));
  }

  give(buffer: Buffer): void {
    const next = this.waiting.shift();
    if (next) next(buffer);
    else this.free.push(buffer);
  }
}

const noop = () => undefined;

async function* plainPieces(file: FileHandle, chunk: number, inFlight: number): AsyncGenerator<UploadPiece> {
  // One more buffer than writes in flight: the next piece is read while the writes are out.
  const pool = new BufferPool(inFlight + 1, chunk);
  let readSoFar = 0;
  for (;;) {
    const buffer = await pool.take();
    const { bytesRead } = await file.read(buffer, 0, chunk, null);
    if (bytesRead === 0) return pool.give(buffer);
    readSoFar += bytesRead;
    let released = false;
    const release = () => {
      if (!released) pool.give(buffer);
      released = true;
    };
    yield { data: buffer.subarray(0, bytesRead), readSoFar, release };
  }
}

async function* gzipPieces(file: FileHandle, chunk: number): AsyncGenerator<UploadPiece> {
  const gzip = createGzip({ level: 6, chunkSize: chunk });
  const input = Buffer.allocUnsafe(chunk);
  let readSoFar = 0;
  let stopped = false;
  // Fed one read at a time: zlib calls back once it consumed the input, so the one buffer is reused;
  // it stops calling back while its output waits to be read, which paces the reads.
  const feed = async () => {
    for (;;) {
      const { bytesRead } = await file.read(input, 0, chunk, null);
      if (stopped) return;
      if (bytesRead === 0) return void gzip.end();
      readSoFar += bytesRead;
      await new Promise<void>((resolve, reject) =>
        gzip.write(input.subarray(0, bytesRead), (error) => (error ? reject(error) : resolve())),
      );
    }
  };
  // A failed read or write surfaces in the loop below, through the destroyed stream.
  feed().catch((error: unknown) => gzip.destroy(error as Error));
  try {
    for await (const data of gzip) yield { data: data as Buffer, readSoFar, release: noop };
  } finally {
    // The reader stopped early (the upload failed): the feed ends at its next step.
    stopped = true;
    gzip.destroy();
  }
}

/**
 * The binary as it goes on the wire, read from disk in `chunk` pieces through reused buffers and
 * gzipped on the way when asked; the file is closed when the reading ends, also early.
 */
export async function* uploadPieces(
  path: string,
  options: { gzip: boolean; chunk: number; inFlight: number },
): AsyncGenerator<UploadPiece> {
  const file = await open(path, "r");
  try {
    yield* options.gzip ? gzipPieces(file, options.chunk) : plainPieces(file, options.chunk, options.inFlight);
  } finally {
    await file.close();
  }
}
