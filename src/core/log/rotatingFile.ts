import {
  appendFileSync,
  closeSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  truncateSync,
} from "node:fs";
import { dirname } from "node:path";

export interface RotatingFileOptions {
  path: string;
  maxBytes: number;
  keep: number;
}

const TAIL_SCAN_BYTES = 64 * 1024;

/** Append-only log file that rotates by size: agentd.log → agentd.log.1 → … → agentd.log.<keep>. */
export class RotatingFile {
  #size: number;
  constructor(private readonly options: RotatingFileOptions) {
    mkdirSync(dirname(options.path), { recursive: true });
    this.#size = existsSync(options.path) ? cutTornTail(options.path) : 0;
  }

  write(line: string): void {
    this.writeLines([line]);
  }

  /** Several lines in as few appends as rotation allows: one, unless the file fills up between them. */
  writeLines(lines: readonly string[]): void {
    // Nearly always the whole batch fits before the limit: one size for it, not one per line.
    let all = "";
    for (const line of lines) all += line.endsWith("\n") ? line : `${line}\n`;
    if (all === "") return;
    const allBytes = Buffer.byteLength(all);
    if (this.#size + allBytes <= this.options.maxBytes) {
      this.#append(all, allBytes);
      return;
    }
    let chunk = "";
    let chunkBytes = 0;
    for (const line of lines) {
      const data = line.endsWith("\n") ? line : `${line}\n`;
      const bytes = Buffer.byteLength(data);
      const size = this.#size + chunkBytes;
      if (size > 0 && size + bytes > this.options.maxBytes) {
        if (chunk) this.#append(chunk, chunkBytes);
        chunk = "";
        chunkBytes = 0;
        this.#rotate();
      }
      chunk += data;
      chunkBytes += bytes;
    }
    if (chunk) this.#append(chunk, chunkBytes);
  }

  #append(data: string, bytes: number): void {
    try {
      appendFileSync(this.options.path, data);
    } catch (error) {
      // A full disk can take part of the lines: cut them back so the file stays one JSON object a line.
      try {
        truncateSync(this.options.path, this.#size);
      } catch {
        // The file is gone or unwritable; the next start cuts a torn tail.
      }
      throw error;
    }
    this.#size += bytes;
  }

  #rotate(): void {
    const { path, keep } = this.options;
    rmSync(`${path}.${keep}`, { force: true });
    for (let i = keep - 1; i >= 1; i--) {
      if (existsSync(`${path}.${i}`)) renameSync(`${path}.${i}`, `${path}.${i + 1}`);
    }
    if (keep >= 1) renameSync(path, `${path}.1`);
    else rmSync(path, { force: true });
    this.#size = 0;
  }
}

/**
 * Cuts a last line without its newline (a write cut short by a full disk or a kill) back to the
 * end of the last whole line, and returns the file's size. Reads backwards from the end only as
 * far as the last newline.
 */
function cutTornTail(path: string): number {
  const fd = openSync(path, "r+");
  try {
    const size = fstatSync(fd).size;
    const window = Buffer.alloc(TAIL_SCAN_BYTES);
    let end = size;
    while (end > 0) {
      const start = Math.max(0, end - TAIL_SCAN_BYTES);
      readSync(fd, window, 0, end - start, start);
      const newline = window.subarray(0, end - start).lastIndexOf(0x0a);
      if (newline >= 0) {
        end = start + newline + 1;
        break;
      }
      end = start;
    }
    if (end < size) ftruncateSync(fd, end);
    return end;
  } finally {
    closeSync(fd);
  }
}
