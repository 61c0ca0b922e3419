import { dlopen, type FFIFunction, type Library } from "bun:ffi";

/** Where libc is found: glibc, then musl on x86_64 and aarch64. */
export const LIBC_CANDIDATES: readonly string[] = ["libc.so.6", "libc.so", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1"];

/**
 * The first of `candidates` that opens with `symbols`; otherwise throws an Error saying what each
 * attempt answered, for the caller to turn into its own typed error.
 */
export function openLibc<T extends Record<string, FFIFunction>>(symbols: T, candidates: readonly string[] = LIBC_CANDIDATES): Library<T> {
  const failures: string[] = [];
  for (const name of candidates) {
    try {
      return dlopen(name, symbols);
    } catch (error) {
      failures.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  throw new Error(failures.join("; "));
}
