import { appendFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname } from "node:path";

export interface RotatingFileOptions {
  path: string;
  maxBytes: number;
  keep: number;
}

/** Append-only log file that rotates by size: agentd.log → agentd.log.1 → … → agentd.log.<keep>. */
export class RotatingFile {
  #size: number;
  constructor(private readonly options: RotatingFileOptions) {
    mkdirSync(dirname(options.path), { recursive: true });
    this.#size = existsSync(options.path) ? statSync(options.path).size : 0;
  }

  write(line: string): void {
    const data = line.endsWith("\n") ? line : `${line}\n`;
    const bytes = Buffer.byteLength(data);
    if (this.#size > 0 && this.#size + bytes > this.options.maxBytes) this.#rotate();
    appendFileSync(this.options.path, data);
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
