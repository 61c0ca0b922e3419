import { readlinkSync, realpathSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { resolve, sep } from "node:path";
import { AgentdError } from "../core/errors/index.ts";

/**
 * agentd's own files (the data dir with its store and token, the config file): never read or
 * written through the file tools, whatever path or link leads there. Each check is made on what was
 * actually opened (/proc/self/fd), so a link swapped between a check and the open gains nothing.
 */
export class OwnFiles {
  private readonly roots: string[];

  constructor(paths: readonly string[]) {
    this.roots = paths.map((path) => {
      try {
        return realpathSync(path);
      } catch {
        return resolve(path);
      }
    });
  }

  /** Throws path_protected when `real` (a resolved path) is one of agentd's own files. */
  assertNotOwn(real: string, shown: string, verb: "read" | "write"): void {
    const root = this.roots.find((r) => real === r || real.startsWith(r + sep));
    if (root)
      throw new AgentdError(
        "path_protected",
        `Cannot ${verb} ${shown} as it is inside agentd's own files (${root}): its store, token and logs are not for the agent's tools`,
      );
  }

  /** The same check on an open descriptor: where it really leads. */
  assertHandle(handle: FileHandle, shown: string, verb: "read" | "write"): void {
    this.assertNotOwn(readlinkSync(`/proc/self/fd/${handle.fd}`), shown, verb);
  }
}
