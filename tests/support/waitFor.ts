import { readFileSync } from "node:fs";

/** Thrown by a check when waiting longer cannot help (the process it waits on has exited): waitFor rethrows it at once. */
export class GiveUp extends Error {}

/**
 * Polls `check` until it returns a value other than undefined/false, or throws after the
 * deadline with the description and the last error seen. Tests wait for conditions, never a fixed time.
 */
export async function waitFor<T>(
  description: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const intervalMs = options.intervalMs ?? 25;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      if (error instanceof GiveUp) throw error;
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const detail = lastError ? ` (last error: ${(lastError as Error).message ?? String(lastError)})` : "";
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${description}${detail}`);
    }
    await Bun.sleep(intervalMs);
  }
}

/** True while a process with this pid exists (a zombie counts as gone once reaped by its parent). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie still answers kill(0); its state in /proc says whether it is really running.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}
