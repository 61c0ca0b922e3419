import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir } from "../../support/tempDir.ts";

/** A 2 MiB tmpfs for a data dir that a test fills and frees: a full disk caused for real (needs root). */
export class SmallDisk {
  /** A directory beside the tmpfs, not on it: what a full disk must not touch. */
  readonly outside: string;
  readonly mountPoint: string;
  /** A directory on the tmpfs for the daemon's data. */
  readonly dataDir: string;
  readonly #fillPath: string;
  #mounted = false;

  constructor(prefix: string) {
    this.outside = makeTempDir(prefix);
    this.mountPoint = join(this.outside, "tmpfs");
    this.dataDir = join(this.mountPoint, "data");
    this.#fillPath = join(this.mountPoint, "fill");
  }

  mount(): void {
    mkdirSync(this.mountPoint);
    const mount = spawnSync("mount", ["-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", this.mountPoint], { encoding: "utf8" });
    if (mount.status !== 0) throw new Error(`cannot mount a tmpfs (this test needs root): ${mount.stderr}`);
    this.#mounted = true;
  }

  /** Writes one file until the tmpfs refuses more; returns the error code it met. */
  fill(): string {
    try {
      writeFileSync(this.#fillPath, Buffer.alloc(4 * 1024 * 1024, 1));
    } catch (error) {
      return (error as NodeJS.ErrnoException).code ?? "unknown";
    }
    throw new Error("the 2 MiB tmpfs took 4 MiB");
  }

  /** Frees what fill() wrote. */
  free(): void {
    rmSync(this.#fillPath);
  }

  unmount(): void {
    if (this.#mounted) spawnSync("umount", [this.mountPoint]);
    this.#mounted = false;
  }
}
