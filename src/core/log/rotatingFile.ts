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
const LF = 0x0a;

/** Append-only log file that rotates by size: agentd.log → agentd.log.1 → … → agentd.log.<keep>. */
export class RotatingFile {
  #size: number;
  constructor(private readonly options: RotatingFileOptions) {
    mkdirSync(dirname(options.path), { recursive: true });
    this.#size = existsSync(options.path) ? cutTornTail(options.path) : 0;
  }

  /**
   * Whole lines, each ended by LF, as bytes: one append when they fit under the size limit (nearly
   * always: one size for the batch, not one per line); else line by line, rotating before the line
   * that would take the file over it.
   */
  append(data: Uint8Array): void {
    if (data.length === 0) return;
    const { maxBytes } = this.options;
    if (this.#size + data.length <= maxBytes) {
      this.#append(data);
      return;
    }
    // Lines from `start` are not written yet.
    let start = 0;
    for (let at = 0; at < data.length; ) {
      const newline = data.indexOf(LF, at);
      const end = newline < 0 ? data.length : newline + 1;
      const size = this.#size + (at - start);
      if (size > 0 && size + (end - at) > maxBytes) {
        if (at > start) this.#append(data.subarray(start, at));
        start = at;
        this.#rotate();
      }
      at = end;
    }
    if (start < data.length) this.#append(data.subarray(start));
  }

  #append(data: Uint8Array): void {
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
    this.#size += data.length;
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
      const newline = window.subarray(0, end - start).lastIndexOf(LF);
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
