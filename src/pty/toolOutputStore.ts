import { mkdir, readdir, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";

export interface ToolOutputStoreOptions {
  /** Total size the directory may reach; the oldest files go first beyond it. */
  maxBytes: number;
  /** Files older than this are deleted. */
  maxAgeMs: number;
}

/**
 * Keeps the full output of reads that were truncated for the model, in `<data_dir>/tool-output/`,
 * so a later tool call can read what was cut. Bounded in size and age; files are private (0600).
 */
export class ToolOutputStore {
  private sequence = 0;

  constructor(
    readonly directory: string,
    private readonly options: ToolOutputStoreOptions,
  ) {}

  /** Writes `bytes` and returns the file's path; prunes old files afterwards. */
  async save(sessionId: string, bytes: Uint8Array): Promise<string> {
    await mkdir(this.directory, { recursive: true, mode: 0o700 });
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    const path = join(this.directory, `pty-${sessionId}-${stamp}-${++this.sequence}.log`);
    await writeFile(path, bytes, { mode: 0o600 });
    await this.prune(Date.now(), path);
    return path;
  }

  /** Deletes files past the age limit, then the oldest until the directory fits its size limit. */
  async prune(now = Date.now(), keep?: string): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.directory);
    } catch {
      return; // nothing saved yet
    }
    const files = await Promise.all(
      names.map(async (name) => {
        const path = join(this.directory, name);
        const info = await stat(path).catch(() => undefined);
        return info?.isFile() ? { path, size: info.size, mtimeMs: info.mtimeMs } : undefined;
      }),
    );
    let total = 0;
    const live: { path: string; size: number; mtimeMs: number }[] = [];
    for (const file of files) {
      if (!file) continue;
      if (now - file.mtimeMs > this.options.maxAgeMs && file.path !== keep) {
        await rm(file.path, { force: true });
      } else {
        live.push(file);
        total += file.size;
      }
    }
    live.sort((a, b) => a.mtimeMs - b.mtimeMs);
    for (const file of live) {
      if (total <= this.options.maxBytes) break;
      if (file.path === keep) continue;
      await rm(file.path, { force: true });
      total -= file.size;
    }
  }
}
