import { z } from "zod";

/** Traces over OTLP/HTTP; off (and the OpenTelemetry packages never loaded) while `endpoint` is unset. */
export const telemetryConfigSchema = () =>
  z
    .strictObject({
      otlp: z
        .strictObject({
          /** The collector's OTLP/HTTP base URL (`http://collector:4318`); `/v1/traces` is added unless the path already ends so. */
          endpoint: z.url().optional(),
          /** OTLP/HTTP's encoding: binary protobuf (OTLP's default, and the cheaper to build) or JSON. */
          protocol: z.enum(["http/protobuf", "http/json"]).default("http/protobuf"),
          headers: z.record(z.string(), z.string()).default({}),
          service_name: z.string().min(1).default("agentd"),
          /** Spans waiting for export beyond this many are dropped and counted. */
          max_queue_size: z.number().int().min(1).default(2048),
          max_export_batch_size: z.number().int().min(1).default(512),
          scheduled_delay_ms: z.number().int().min(10).default(1000),
          timeout_ms: z.number().int().min(100).default(10_000),
        })
        .prefault({}),
    })
    .prefault({});

export type TelemetryConfig = z.infer<ReturnType<typeof telemetryConfigSchema>>;
