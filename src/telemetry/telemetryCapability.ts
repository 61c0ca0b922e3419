import type { Capability } from "../core/capability.ts";
import type { Tracing } from "./tracing.ts";

/** Tracing as the worker composes it: its span counters on /metrics, its queue flushed at close. */
export function createTelemetryCapability(tracing: Tracing): Capability {
  return {
    name: "telemetry",
    metricFamilies: tracing.metricFamilies,
    // The exporter and its queue are made once, at start.
    reload: (change) => change.report(["telemetry"], ["telemetry"]),
    close: () => tracing.shutdown(),
  };
}
