import { mkdir, open, rename, rm, type FileHandle } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../core/log/index.ts";
import { redactSecrets } from "../core/redaction/index.ts";
import { renderSidecarRecord, type SidecarRecord } from "./sidecarRecord.ts";

export interface SidecarOptions {
  dir: string;
  sessionId: string;
  maxBytes: number;
  keep: number;
  /** Literal secrets (the model API key) to hide wherever they appear. */
  secrets: readonly string[];
  logger: Logger;
  /** Records are gathered this long and written in one append, so a busy turn costs few writes. */
  batchMs?: number;
}

export function sidecarPath(dir: string, sessionId: string): string {
  return join(dir, `session_${sessionId}.debug.jsonl`);
}

/**
 * The debug file of one session. write() only queues the record: a background drain redacts,
 * renders and appends batches, so the turn waits on neither the disk nor the rendering; flush()
 * writes out whatever is queued and waits for it.
 */
export class DebugSidecar {
  readonly path: string;
  #queue: SidecarRecord[] = [];
  #draining: Promise<void> | undefined;
  #size = 0;
  #file: FileHandle | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly options: SidecarOptions) {
    this.path = sidecarPath(options.dir, options.sessionId);
  }

  /** Queues a record; it is rendered later, so `fields` must not be changed after this call. */
  write(kind: string, fields: Record<string, unknown>): void {
    this.#queue.push({ ts: new Date().toISOString(), session: this.options.sessionId, kind, ...fields });
    if (this.#draining || this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#draining ??= this.#drain();
    }, this.options.batchMs ?? 50);
  }

  /** Resolves once every record written so far is on disk. */
  async flush(): Promise<void> {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#queue.length > 0) this.#draining ??= this.#drain();
    while (this.#draining !== undefined) await this.#draining;
  }

  /** Writes what is queued and closes the file; a later write opens it again. */
  async close(): Promise<void> {
    await this.flush();
    // Forget the handle before closing it: a write that arrives meanwhile opens a fresh one.
    const file = this.#file;
    this.#file = undefined;
    await file?.close();
  }

  async #drain(): Promise<void> {
    try {
      if (!this.#file) {
        await mkdir(this.options.dir, { recursive: true });
        this.#file = await open(this.path, "a");
        this.#size = (await this.#file.stat()).size;
      }
      while (this.#queue.length > 0) {
        const records = this.#queue;
        this.#queue = [];
        // One append per batch, but the file still rotates at a record boundary once it is full.
        let chunk = "";
        let chunkBytes = 0;
        for (const raw of records) {
          const record = this.#render(raw);
          if (record === undefined) continue;
          const bytes = Buffer.byteLength(record);
          if (this.#size + chunkBytes > 0 && this.#size + chunkBytes + bytes > this.options.maxBytes) {
            if (chunk) await this.#file!.write(chunk);
            await this.#rotate();
            chunk = "";
            chunkBytes = 0;
          }
          chunk += record;
          chunkBytes += bytes;
        }
        await this.#file!.write(chunk);
        this.#size += chunkBytes;
      }
    } catch (error) {
      this.options.logger.warn("sidecar.write_failed", { session: this.options.sessionId, path: this.path, error });
      this.#queue = [];
    } finally {
      this.#draining = undefined;
    }
  }

  /** One record as file text, secrets hidden; a record that cannot be rendered is logged and left out. */
  #render(record: SidecarRecord): string | undefined {
    try {
      return renderSidecarRecord(redactSecrets(record, this.options.secrets));
    } catch (error) {
      this.options.logger.warn("sidecar.render_failed", { session: this.options.sessionId, kind: record.kind, error });
      return undefined;
    }
  }

  async #rotate(): Promise<void> {
    const { keep } = this.options;
    await rm(`${this.path}.${keep}`, { force: true });
    for (let i = keep - 1; i >= 1; i--) {
      if (existsSync(`${this.path}.${i}`)) await rename(`${this.path}.${i}`, `${this.path}.${i + 1}`);
    }
    await this.#file?.close();
    if (keep >= 1) await rename(this.path, `${this.path}.1`);
    else await rm(this.path, { force: true });
    this.#file = await open(this.path, "a");
    this.#size = 0;
  }
}
