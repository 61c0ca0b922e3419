import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";

const CHUNK = 64 * 1024;
const MAX_PENDING = 1 << 20;

/**
 * Follows a log file like `tail -F`: starts at its end, reads new lines on each poll, and keeps
 * following across rotation (the path now names a new file: the old one is read to its end first,
 * then the new one from its start) and truncation (the file shrank: read again from the start).
 * Polling on a timer keeps it correct on every file system and cheap while idle.
 */
export class LogFileTailer {
  #fd: number | undefined;
  #ino = 0;
  #offset = 0;
  #pending = "";
  #timer: ReturnType<typeof setInterval> | undefined;
  readonly #buffer = Buffer.allocUnsafe(CHUNK);
  readonly #decoder = new TextDecoder();

  constructor(
    readonly path: string,
    private readonly onLine: (line: string) => void,
  ) {}

  start(pollMs: number): void {
    this.#open(true);
    this.#timer = setInterval(() => this.poll(), pollMs);
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#close();
  }

  /** Reads whatever arrived since the last poll. */
  poll(): void {
    if (this.#fd === undefined) {
      this.#open(false);
      if (this.#fd === undefined) return;
    }
    let pathIno: number | undefined;
    try {
      pathIno = statSync(this.path).ino;
    } catch {
      pathIno = undefined;
    }
    if (fstatSync(this.#fd).size < this.#offset) {
      this.#offset = 0;
      this.#pending = "";
    }
    this.#drain();
    if (pathIno !== undefined && pathIno !== this.#ino) {
      this.#flushPending();
      this.#close();
      this.#open(false);
      this.#drain();
    }
  }

  #open(atEnd: boolean): void {
    try {
      this.#fd = openSync(this.path, "r");
    } catch {
      this.#fd = undefined;
      return;
    }
    const stats = fstatSync(this.#fd);
    this.#ino = stats.ino;
    this.#offset = atEnd ? stats.size : 0;
    this.#pending = "";
  }

  #close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }

  #drain(): void {
    for (;;) {
      const n = readSync(this.#fd!, this.#buffer, 0, CHUNK, this.#offset);
      if (n <= 0) return;
      this.#offset += n;
      this.#pending += this.#decoder.decode(this.#buffer.subarray(0, n), { stream: true });
      for (let newline = this.#pending.indexOf("\n"); newline >= 0; newline = this.#pending.indexOf("\n")) {
        this.onLine(this.#pending.slice(0, newline).replace(/\r$/, ""));
        this.#pending = this.#pending.slice(newline + 1);
      }
      if (this.#pending.length > MAX_PENDING) this.#flushPending();
    }
  }

  #flushPending(): void {
    if (this.#pending) this.onLine(this.#pending);
    this.#pending = "";
  }
}
