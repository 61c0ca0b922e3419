import { statSync } from "node:fs";
import type { MetricSample } from "../core/metrics/index.ts";

/** The store's files and their sizes in bytes; a file that is not there (no WAL yet, an in-memory store) is left out. */
export function storeFileSizes(path: string): MetricSample[] {
  const samples: MetricSample[] = [];
  if (!path || path === ":memory:") return samples;
  for (const [file, name] of [
    ["db", path],
    ["wal", `${path}-wal`],
  ] as const) {
    const size = statSync(name, { throwIfNoEntry: false })?.size;
    if (size !== undefined) samples.push({ labels: { file }, value: size });
  }
  return samples;
}
