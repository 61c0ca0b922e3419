import { statfsSync } from "node:fs";
import { cpus, freemem, hostname, loadavg, totalmem, uptime } from "node:os";

/** What tier 3 is told about the host an incident happened on. */
export interface HostFacts {
  hostname: string;
  uptime_s: number;
  load: { "1m": number; "5m": number; "15m": number; cpus: number };
  memory_mb: { total: number; available: number };
  disk: { path: string; free_percent: number; free_gb: number } | { path: string; error: string };
}

const round = (n: number, places = 2) => Math.round(n * 10 ** places) / 10 ** places;

function diskOf(path: string): HostFacts["disk"] {
  try {
    const stats = statfsSync(path);
    const free = Number(stats.bavail) * Number(stats.bsize);
    return { path, free_percent: round((Number(stats.bavail) / Number(stats.blocks)) * 100, 1), free_gb: round(free / 1024 ** 3) };
  } catch (error) {
    return { path, error: (error as NodeJS.ErrnoException).code ?? String(error) };
  }
}

/** Read at the moment tier 3 is asked: they change by the minute. */
export function readHostFacts(diskPath = "/"): HostFacts {
  const [l1, l5, l15] = loadavg();
  return {
    hostname: hostname(),
    uptime_s: Math.round(uptime()),
    load: { "1m": round(l1 ?? 0), "5m": round(l5 ?? 0), "15m": round(l15 ?? 0), cpus: cpus().length },
    memory_mb: { total: Math.round(totalmem() / 1024 ** 2), available: Math.round(freemem() / 1024 ** 2) },
    disk: diskOf(diskPath),
  };
}
