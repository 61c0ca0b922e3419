import { z } from "zod";
import { providerConfigSchema, proxyConfigSchema } from "./sections/providerConfig.ts";
import { ptyConfigSchema } from "./sections/ptyConfig.ts";
import { LOG_LEVELS } from "../log/index.ts";
import { watchdogConfigSchema } from "./sections/watchdogConfig.ts";
import { hopsConfigSchema } from "./sections/hopConfig.ts";
import { agentConfigSchema } from "./sections/agentConfig.ts";
import { approvalsConfigSchema } from "./sections/approvalsConfig.ts";
import { servicesConfigSchema } from "./sections/servicesConfig.ts";
import { alertsConfigSchema } from "./sections/alertsConfig.ts";
import { telemetryConfigSchema } from "./sections/telemetryConfig.ts";

export const DEFAULT_PORT = 7070;
export const DEFAULT_BIND = "127.0.0.1";

const serverSchema = () =>
  z
    .strictObject({
      bind: z.string().min(1).default(DEFAULT_BIND),
      port: z.number().int().min(0).max(65535).default(DEFAULT_PORT),
      body_limit_bytes: z
        .number()
        .int()
        .min(1024)
        .default(10 * 1024 * 1024),
      drain_timeout_ms: z.number().int().min(0).default(10_000),
      /** Require the bearer token on a loopback bind too (beyond loopback it always is). */
      require_token: z.boolean().default(false),
      /** Seconds a connection may stay idle between requests; open streams and running requests are exempt. */
      idle_timeout_s: z.number().int().min(1).max(255).default(30),
      /** Open connections one client address may hold; requests beyond get 503 (the token's holder never). */
      max_connections_per_client: z.number().int().min(1).default(512),
    })
    .prefault({});

const logSchema = () =>
  z
    .strictObject({
      level: z.enum(LOG_LEVELS as [string, ...string[]]).default("info"),
      file_max_bytes: z
        .number()
        .int()
        .min(4096)
        .default(10 * 1024 * 1024),
      file_keep: z.number().int().min(0).max(100).default(5),
    })
    .prefault({});

const supervisorSchema = () =>
  z
    .strictObject({
      restart_max: z.number().int().min(1).default(5),
      restart_window_s: z.number().int().min(1).default(600),
      backoff_initial_ms: z.number().int().min(0).default(500),
      backoff_max_ms: z.number().int().min(1).default(30_000),
      healthy_reset_s: z.number().int().min(1).default(600),
      stop_grace_ms: z.number().int().min(0).default(15_000),
      /**
       * Started as root, the worker (HTTP, the model, the store) runs as this service user and the
       * supervisor stays a small privileged monitor; created when it is the default and missing.
       */
      worker_user: z.string().min(1).default("agentd"),
    })
    .prefault({});

/**
 * The whole config's schema, built anew for each parse (as is every section's: each is a function).
 * Held at module level, the schemas and the parsers zod compiles for them stayed in the worker's
 * heap for its whole life (~0.9 MB of heap, 12,500 objects, ~1.2 MB of anonymous RSS); a
 * parse now costs ~5 ms more, at start and on reload.
 */
export const configSchema = () =>
  z.strictObject({
    $schema: z.string().optional(),
    data_dir: z.string().min(1).optional(),
    server: serverSchema(),
    log: logSchema(),
    supervisor: supervisorSchema(),
    providers: z.array(providerConfigSchema()).default([]),
    proxy: proxyConfigSchema(),
    pty: ptyConfigSchema(),
    agent: agentConfigSchema(),
    approvals: approvalsConfigSchema(),
    services: servicesConfigSchema(),
    watchdog: watchdogConfigSchema(),
    hops: hopsConfigSchema(),
    alerts: alertsConfigSchema(),
    telemetry: telemetryConfigSchema(),
  });

export type AgentdConfig = z.infer<ReturnType<typeof configSchema>>;
