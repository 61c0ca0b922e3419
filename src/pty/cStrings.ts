import { ptr } from "bun:ffi";

/** A NUL-terminated UTF-8 copy of `text`, for a `const char *` argument. */
export function cString(text: string): Buffer {
  return Buffer.from(`${text}\0`, "utf8");
}

/**
 * A NULL-terminated `char *[]` (argv, envp). The returned `keepAlive` holds the strings the
 * pointers point into; the caller keeps it referenced until the C call has returned.
 */
export function cStringArray(items: readonly string[]): { array: BigUint64Array; keepAlive: Buffer[] } {
  const keepAlive = items.map(cString);
  const array = new BigUint64Array(items.length + 1);
  keepAlive.forEach((item, index) => {
    array[index] = BigInt(ptr(item));
  });
  return { array, keepAlive };
}
