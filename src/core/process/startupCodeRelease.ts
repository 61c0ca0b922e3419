import { readFileSync, readlinkSync } from "node:fs";
import type { Logger } from "../log/index.ts";
import { runInBackground } from "./background.ts";
import { cleanCodeMappings } from "./codeMappings.ts";
import { processLibc } from "./processLibc.ts";

const MADV_DONTNEED = 4;
/**
 * How long after a process is ready its startup code is released: by then it has loaded its
 * modules, decoded their bytecode, opened its store and run its migrations.
 */
export const STARTUP_CODE_RELEASE_DELAY_MS = 3_000;

export interface StartupCodeRelease {
  /** Mappings of the executable released. */
  mappings: number;
  /** Their resident kB just before. */
  releasedKb: number;
}

function residentKb(): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"));
  return match ? Number(match[1]) : Number.NaN;
}

/**
 * Unmaps from this process every resident page of the executable's code and read-only data; the
 * pages it runs again are mapped back from the page cache on their next use (a minor fault, no
 * read). Bun's native code that only starting runs (module loading, bytecode decoding, migrations)
 * then stops counting in the process's RSS, where nothing would ever drop it: those pages stay
 * mapped in both agentd processes for their whole life, ~15 MB each beyond what idle runs again.
 * Only clean private mappings are touched (cleanCodeMappings), whose pages are the file's bytes.
 */
export function releaseStartupCode(): StartupCodeRelease {
  const libc = processLibc();
  if ("problem" in libc) throw new Error(`Cannot release the startup code: ${libc.problem}`);
  const mappings = cleanCodeMappings(readFileSync("/proc/self/smaps", "utf8"), readlinkSync("/proc/self/exe"));
  let releasedKb = 0;
  for (const mapping of mappings) {
    if (libc.madvise(mapping.start, mapping.end - mapping.start, MADV_DONTNEED) !== 0)
      throw new Error(
        `Cannot release the startup code: madvise(MADV_DONTNEED) failed on ${mapping.start.toString(16)}-${mapping.end.toString(16)}`,
      );
    releasedKb += mapping.rssKb;
  }
  return { mappings: mappings.length, releasedKb };
}

/** Releases the startup code once, `delayMs` from now, logging `memory.startup_code_released`. */
export function scheduleStartupCodeRelease(log: Logger, delayMs = STARTUP_CODE_RELEASE_DELAY_MS): void {
  setTimeout(() => {
    runInBackground(
      "memory.release_startup_code",
      () => {
        const before = residentKb();
        const released = releaseStartupCode();
        log.info("memory.startup_code_released", {
          mappings: released.mappings,
          released_kb: released.releasedKb,
          rss_kb_before: before,
          rss_kb_after: residentKb(),
        });
      },
      {},
      log,
    );
  }, delayMs).unref();
}
