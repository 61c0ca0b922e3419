/** Which session to close when a new one would exceed the limit. */

export interface EvictionCandidate {
  id: string;
  lastUsedAt: number;
  running: boolean;
}

/** The most recently used sessions are never closed to make room: the model is likely still working with them. */
const PROTECTED_RECENT_SESSIONS = 8;

/**
 * The least recently used session outside the protected recent ones, preferring sessions whose
 * process has already exited. Undefined when every session is protected.
 */
export function chooseEviction(sessions: readonly EvictionCandidate[], protectedRecent = PROTECTED_RECENT_SESSIONS): string | undefined {
  const byRecency = [...sessions].sort((a, b) => b.lastUsedAt - a.lastUsedAt);
  const evictable = byRecency.slice(protectedRecent);
  const oldestFirst = evictable.reverse();
  return (oldestFirst.find((session) => !session.running) ?? oldestFirst[0])?.id;
}
