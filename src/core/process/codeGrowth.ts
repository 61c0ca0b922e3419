import { readFileSync, readlinkSync } from "node:fs";
import type { Logger } from "../log/index.ts";
import { runInBackground } from "./background.ts";
import { cleanCodeMappings } from "./codeMappings.ts";
import { codeReleases, releaseCodeAndLog } from "./codeRelease.ts";

/** How often the code pages are measured, and how far past what the process settled at they may grow. */
const CHECK_INTERVAL_MS = 5 * 60_000;
const GROWTH_LIMIT_KB = 2048;

export type GrowthVerdict = { kind: "settled"; kb: number } | { kind: "hold" } | { kind: "release"; grownKb: number };

/**
 * When the executable's resident code has grown past what the process settled at: the first
 * measure after a release (the pages it runs again came back by then) is the settled size; a later
 * one `limitKb` or more above it asks for a release, and the measure after that settles anew.
 */
export class CodeGrowth {
  #settledKb: number | undefined;
  #releasesSeen = -1;

  constructor(private readonly limitKb = GROWTH_LIMIT_KB) {}

  /** `releases`: how many releases the process has made so far (codeReleases()), whoever made them. */
  judge(residentKb: number, releases: number): GrowthVerdict {
    if (this.#settledKb === undefined || releases !== this.#releasesSeen) {
      this.#settledKb = residentKb;
      this.#releasesSeen = releases;
      return { kind: "settled", kb: residentKb };
    }
    const grownKb = residentKb - this.#settledKb;
    return grownKb >= this.limitKb ? { kind: "release", grownKb } : { kind: "hold" };
  }
}

function residentCodeKb(): number {
  let kb = 0;
  for (const mapping of cleanCodeMappings(readFileSync("/proc/self/smaps", "utf8"), readlinkSync("/proc/self/exe"))) kb += mapping.rssKb;
  return kb;
}

/**
 * Releases the binary's code pages again whenever they grew 2 MB past what the process settled at
 * (measured every 5 minutes). JavaScriptCore runs its optimizing compilers' own native code when it
 * compiles, and those pages then stay resident: an idle worker, answering the supervisor's probes
 * every 5 s, compiles that code now and then, and its code pages grew from 26.5 to 31 MB over half
 * an hour. A busy one's hot code comes back at once after a release (minor faults, no read).
 */
export function watchCodeGrowth(log: Logger, intervalMs = CHECK_INTERVAL_MS, growth = new CodeGrowth()): () => void {
  const timer = setInterval(
    () =>
      runInBackground(
        "memory.code_growth",
        () => {
          const verdict = growth.judge(residentCodeKb(), codeReleases());
          if (verdict.kind === "release") releaseCodeAndLog(log, ["growth"], { grown_kb: verdict.grownKb });
        },
        {},
        log,
      ),
    intervalMs,
  );
  timer.unref();
  return () => clearInterval(timer);
}
