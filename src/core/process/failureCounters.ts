/** Failures the process survived, by kind; `/metrics` shows them so a scrape notices what the log says. */
const counts = { background: 0, unhandled: 0 };

export type FailureKind = keyof typeof counts;

export function noteFailure(kind: FailureKind): void {
  counts[kind]++;
}

export function failureCount(kind: FailureKind): number {
  return counts[kind];
}
