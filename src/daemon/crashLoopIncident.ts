import type { Signal } from "../watchdog/index.ts";

/** A worker that died without being asked to: the watchdog's `worker.crashed` signal. */
export function workerCrashSignal(exit: { pid: number; code: number; signal: string | null; uptime_ms: number }): Signal {
  const how = exit.signal ? `killed by ${exit.signal}` : `exited with code ${exit.code}`;
  return {
    id: "worker.crashed",
    title: `Worker ${how}`,
    category: "daemon",
    severity: "critical",
    component: "worker",
    ts: Date.now(),
    fields: { pid: exit.pid, code: exit.code, ...(exit.signal ? { signal: exit.signal } : {}), uptime_ms: exit.uptime_ms },
  };
}

/** The supervisor gave up restarting: its own incident (`crash_loop`), apart from the crashes. */
export function crashLoopSignal(reason: string, restartsInWindow: number): Signal {
  return {
    id: "crash_loop",
    title: "Worker crash loop",
    category: "daemon",
    severity: "critical",
    component: "supervisor",
    ts: Date.now(),
    fields: { restarts: restartsInWindow },
    line: reason,
  };
}
