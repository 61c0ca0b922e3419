/** The children this process started itself (Bun.spawn), until Bun has reaped them. */
const own = new Set<number>();

/**
 * Marks `child` as one this process waits for itself, so the orphan reaper leaves its exit status
 * to Bun. Call it in the same synchronous step as Bun.spawn: the reaper runs on a timer and can
 * never see the child before it is marked.
 */
export function trackChild<T extends { pid: number; exited: Promise<unknown> }>(child: T): T {
  own.add(child.pid);
  const forget = () => {
    own.delete(child.pid);
  };
  child.exited.then(forget, forget);
  return child;
}

export function isOwnChild(pid: number): boolean {
  return own.has(pid);
}
