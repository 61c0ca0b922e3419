/** Resolves with the promise's value, or "timeout" after ms; the timer never outlives the race. */
export async function raceTimeout<T>(promise: Promise<T>, ms: number): Promise<T | "timeout"> {
  let handle: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    handle = setTimeout(() => resolve("timeout"), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(handle);
  }
}
