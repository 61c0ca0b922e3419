import { readFileSync, readlinkSync } from "node:fs";
import type { Logger } from "../log/index.ts";
import { runInBackground } from "./background.ts";
import { cleanCodeMappings } from "./codeMappings.ts";
import { processLibc } from "./processLibc.ts";

const MADV_DONTNEED = 4;
/**
 * How long after one-off work its code is released: a process is up (its modules loaded, their
 * bytecode decoded, its store opened and migrated), a hop is connected (the binary hashed and
 * uploaded, the handshake done).
 */
const CODE_RELEASE_DELAY_MS = 3_000;

interface CodeRelease {
  /** Mappings of the executable released. */
  mappings: number;
  /** Their resident kB just before. */
  releasedKb: number;
}

const residentKb = () => Math.round(process.memoryUsage.rss() / 1024);

/**
 * Unmaps from this process every resident page of the executable's code and read-only data; the
 * pages it runs again are mapped back from the page cache on their next use (a minor fault, no
 * read). Bun's native code that only one-off work runs (starting, hashing and compressing the
 * binary for a hop, an SSH handshake) then stops counting in the process's RSS, where nothing would
 * ever drop it: those pages stay mapped for the process's whole life, ~15 MB each in both agentd
 * processes beyond what idle runs again. The pages themselves stay in the page cache (charged to a
 * memory cgroup as before) until the kernel reclaims them, which it does first with pages no process
 * maps. Only mappings whose pages are all the file's bytes are touched (cleanCodeMappings).
 */
export function releaseCode(): CodeRelease {
  const libc = processLibc();
  if ("problem" in libc) throw new Error(`Cannot release the binary's code pages: ${libc.problem}`);
  const mappings = cleanCodeMappings(readFileSync("/proc/self/smaps", "utf8"), readlinkSync("/proc/self/exe"));
  let releasedKb = 0;
  for (const mapping of mappings) {
    if (libc.madvise(mapping.start, mapping.end - mapping.start, MADV_DONTNEED) !== 0)
      throw new Error(
        `Cannot release the binary's code pages: madvise(MADV_DONTNEED) failed on ${mapping.start.toString(16)}-${mapping.end.toString(16)}`,
      );
    releasedKb += mapping.rssKb;
  }
  return { mappings: mappings.length, releasedKb };
}

let pending: { timer: ReturnType<typeof setTimeout>; after: Set<string> } | undefined;

/**
 * Releases the binary's code pages `delayMs` after one-off work (`after` names it), logging
 * `memory.code_released`. Work that comes while a release waits moves it on: one release follows a
 * burst, 3 s after its last piece.
 */
export function scheduleCodeRelease(log: Logger, after: string, delayMs = CODE_RELEASE_DELAY_MS): void {
  const reasons = pending?.after ?? new Set<string>();
  reasons.add(after);
  if (pending) clearTimeout(pending.timer);
  const timer = setTimeout(() => {
    pending = undefined;
    runInBackground(
      "memory.release_code",
      () => {
        const before = residentKb();
        const released = releaseCode();
        log.info("memory.code_released", {
          after: [...reasons],
          mappings: released.mappings,
          released_kb: released.releasedKb,
          rss_kb_before: before,
          rss_kb_after: residentKb(),
        });
      },
      {},
      log,
    );
  }, delayMs);
  timer.unref();
  pending = { timer, after: reasons };
}
