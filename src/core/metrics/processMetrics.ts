import { readdirSync, readFileSync } from "node:fs";
import type { MetricFamily } from "./metricFamily.ts";

/** What the Prometheus client libraries export as `process_*`, read for the running process. */
export interface ProcessFacts {
  residentBytes: number;
  cpuSeconds: number;
  startTimeSeconds: number;
  /** Linux only (from /proc): undefined elsewhere, and the families are then left out. */
  openFds?: number;
  maxFds?: number;
}

/** The soft "Max open files" limit in /proc/PID/limits text; undefined when unlimited or absent. */
export function maxOpenFiles(limits: string): number | undefined {
  const match = /^Max open files\s+(\S+)/m.exec(limits);
  const soft = match ? Number(match[1]) : NaN;
  return Number.isFinite(soft) ? soft : undefined;
}

function readProc<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    // No /proc (macOS) or a hardened one: the fd families are left out, not reported as 0.
    return undefined;
  }
}

export function processFacts(): ProcessFacts {
  const cpu = process.cpuUsage();
  return {
    residentBytes: process.memoryUsage.rss(),
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    // performance.timeOrigin is when this process started, as a Unix time in milliseconds.
    startTimeSeconds: performance.timeOrigin / 1000,
    // The directory listing holds an fd of its own while it runs: not one the process keeps open.
    openFds: readProc(() => readdirSync("/proc/self/fd").length - 1),
    maxFds: readProc(() => maxOpenFiles(readFileSync("/proc/self/limits", "utf8"))),
  };
}

function gauge(name: string, help: string, value: number | undefined, type: "gauge" | "counter" = "gauge"): MetricFamily[] {
  return value === undefined ? [] : [{ name, help, type, samples: [{ value }] }];
}

/** The `process_*` families with the names, units and types client_golang and prom-client use. */
export function processFamilies(facts: ProcessFacts): MetricFamily[] {
  return [
    ...gauge("process_resident_memory_bytes", "Resident memory size in bytes.", facts.residentBytes),
    ...gauge("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", facts.cpuSeconds, "counter"),
    ...gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", facts.startTimeSeconds),
    ...gauge("process_open_fds", "Number of open file descriptors.", facts.openFds),
    ...gauge("process_max_fds", "Maximum number of open file descriptors.", facts.maxFds),
  ];
}

/** What `agentd_build_info` names: the version, the Bun runtime, and the commit when the build recorded one. */
export interface BuildFacts {
  version: string;
  bunVersion: string;
  commit?: string;
}

/**
 * The build as this binary knows it. `bun build` records no commit, so it is known only when the
 * environment names it (AGENTD_BUILD_COMMIT, as an image build can set): never guessed from a work tree.
 */
export function buildFacts(version: string, env: Record<string, string | undefined> = process.env): BuildFacts {
  const commit = env.AGENTD_BUILD_COMMIT?.trim();
  return { version, bunVersion: Bun.version, ...(commit ? { commit } : {}) };
}

/** `agentd_build_info` (always 1, its labels are the facts) and `agentd_start_time_seconds`. */
export function agentdFamilies(build: BuildFacts, startedAtMs: number): MetricFamily[] {
  const labels: Record<string, string> = { version: build.version, bun_version: build.bunVersion };
  if (build.commit) labels.commit = build.commit;
  return [
    {
      name: "agentd_build_info",
      help: "The running agentd's build: version, Bun version and commit (always 1).",
      type: "gauge",
      samples: [{ labels, value: 1 }],
    },
    {
      name: "agentd_start_time_seconds",
      help: "When the worker serving this endpoint started, as a Unix time in seconds.",
      type: "gauge",
      samples: [{ value: startedAtMs / 1000 }],
    },
  ];
}
