export { NOOP_TRACER } from "./tracer.ts";
export type { Span, SpanAttributes, SpanKind, SpanOptions, Tracer } from "./tracer.ts";
export { startTracing } from "./tracing.ts";
export type { Tracing } from "./tracing.ts";
export { createTelemetryCapability } from "./telemetryCapability.ts";
export type { TelemetryConfig } from "../core/config/sections/telemetryConfig.ts";
