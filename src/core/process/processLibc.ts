import type { Library } from "bun:ffi";
import { openLibc } from "../ffi/openLibc.ts";

const SYMBOLS = {
  prctl: { args: ["i32", "u64", "u64", "u64", "u64"], returns: "i32" },
  waitpid: { args: ["i32", "ptr", "i32"], returns: "i32" },
  madvise: { args: ["u64", "u64", "i32"], returns: "i32" },
} as const;

export type ProcessLibc = Library<typeof SYMBOLS>["symbols"];

let loaded: ProcessLibc | { problem: string } | undefined;

/**
 * The few libc calls about the process itself (prctl, waitpid, madvise), loaded once. The PTY layer
 * has its own, larger binding; this one is small enough for the supervisor, which never loads the
 * PTY layer.
 */
export function processLibc(): ProcessLibc | { problem: string } {
  if (loaded) return loaded;
  try {
    loaded = openLibc(SYMBOLS).symbols;
  } catch (error) {
    loaded = { problem: `cannot load libc: ${(error as Error).message}` };
  }
  return loaded;
}

/** prctl(option, value); the problem when it fails or libc cannot be loaded. */
export function setProcessControl(option: number, value: number, what: string): string | undefined {
  const libc = processLibc();
  if ("problem" in libc) return libc.problem;
  return libc.prctl(option, BigInt(value), 0n, 0n, 0n) === 0 ? undefined : `prctl(${what}) failed`;
}
