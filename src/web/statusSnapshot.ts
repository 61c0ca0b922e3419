import type { HealthDocument } from "../health/index.ts";

export interface WorkerInfo {
  pid: number;
  supervisor_pid: number | null;
  version: string;
  uptime_s: number;
  restarts: number;
  memory_mb: number;
}

/** Everything /status shows, in one document: the JSON view is this object as is. */
export interface StatusSnapshot {
  generated_at: string;
  health: HealthDocument;
  worker: WorkerInfo;
}

export type StatusSource = () => Promise<StatusSnapshot>;
