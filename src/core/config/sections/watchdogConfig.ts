import { z } from "zod";

export const ACTIONS = ["restart_worker", "open_breaker", "switch_provider", "raise_timeout", "run_command", "alert", "ignore"] as const;
export type ActionName = (typeof ACTIONS)[number];

export const CATEGORIES = ["daemon", "upstream", "format", "client", "config_state"] as const;
export type SignalCategory = (typeof CATEGORIES)[number];

export const SEVERITIES = ["info", "warning", "error", "critical"] as const;
export type Severity = (typeof SEVERITIES)[number];

const positive = () => z.number().positive();
const intervalS = () => z.number().positive().default(30);

const debounce = () => ({
  interval_s: intervalS(),
  timeout_ms: z.number().int().positive().default(5000),
  failure_threshold: z.number().int().min(1).default(3),
  success_threshold: z.number().int().min(1).default(2),
  /** How bad a failure is: a failing `critical` check makes the host's verdict `fail`, any other `warn`. */
  severity: z.enum(SEVERITIES).default("error"),
});
const checkName = () => z.string().regex(/^[A-Za-z0-9_.-]+$/, "expected a name of letters, digits, '_', '.', '-'");

export const checkConfigSchema = () =>
  z.discriminatedUnion("type", [
    z.strictObject({
      type: z.literal("http"),
      name: checkName(),
      url: z.url(),
      expect_status: z.number().int().default(200),
      expect_body: z.string().optional(),
      ...debounce(),
    }),
    z.strictObject({
      type: z.literal("tcp"),
      name: checkName(),
      host: z.string().default("127.0.0.1"),
      port: z.number().int().min(1).max(65535),
      ...debounce(),
    }),
    z.strictObject({
      type: z.literal("command"),
      name: checkName(),
      argv: z.array(z.string()).min(1),
      expect_exit: z.number().int().default(0),
      ...debounce(),
    }),
    z.strictObject({
      type: z.literal("process"),
      name: checkName(),
      process_name: z.string().optional(),
      pidfile: z.string().optional(),
      ...debounce(),
    }),
    z.strictObject({
      type: z.literal("disk"),
      name: checkName(),
      path: z.string().default("."),
      min_free_percent: z.number().min(0).max(100).default(10),
      ...debounce(),
    }),
    z.strictObject({ type: z.literal("memory"), name: checkName(), max_worker_rss_mb: positive().default(1024), ...debounce() }),
  ]);
export type CheckConfig = z.infer<ReturnType<typeof checkConfigSchema>>;

const fieldValue = () => z.union([z.string(), z.number(), z.boolean()]);

export const signatureConfigSchema = () =>
  z
    .strictObject({
      id: z.string().regex(/^[a-z0-9_.:-]+$/, "expected a lower-case id of letters, digits, '_', '.', ':', '-'"),
      title: z.string().min(1),
      category: z.enum(CATEGORIES),
      severity: z.enum(SEVERITIES).default("error"),
      /** Log event name to match (exact); with `fields`, every listed field must equal (or be one of) the value(s). */
      event: z.string().optional(),
      fields: z.record(z.string(), z.union([fieldValue(), z.array(fieldValue())])).optional(),
      /** Regular expression over the raw line (JSON or plain text). */
      regex: z.string().optional(),
      /** Component the signal belongs to, for grouping; `{field}` takes a field of the line. */
      component: z.string().default("worker"),
      /** The configured check whose passing again verifies an action on this signature's incidents; without one nothing is learned. */
      verify_check: checkName().optional(),
    })
    .refine((s) => s.event !== undefined || s.regex !== undefined, { message: "a signature needs an event name or a regex" });
export type SignatureConfig = z.infer<ReturnType<typeof signatureConfigSchema>>;

export const ruleConfigSchema = () =>
  z.strictObject({
    id: z.string().optional(),
    when: z.strictObject({
      signal: z.string().min(1),
      count: z.number().int().min(1).default(1),
      window_s: positive().default(60),
    }),
    do: z.enum(ACTIONS),
    /** For run_command: the configured command's name. */
    command: z.string().optional(),
    /** Each firing of the rule waits the next cooldown; past the last one it only alerts. */
    cooldown_s: z.array(z.number().min(0)).default([30, 60, 300]),
  });
export type RuleConfig = z.infer<ReturnType<typeof ruleConfigSchema>>;

const tier3Schema = () =>
  z
    .strictObject({
      enabled: z.boolean().default(false),
      model: z.string().optional(),
      base_url: z.url().optional(),
      api_key: z.string().optional(),
      min_confidence: z.number().min(0).max(1).default(0.6),
      calls_per_minute: z.number().int().min(0).default(1),
      calls_per_day: z.number().int().min(0).default(10),
      monthly_token_budget: z.number().int().min(0).default(200_000),
      price_per_1k_tokens: z.number().min(0).default(0),
      cache_ttl_s: z.number().int().min(0).default(3600),
      timeout_ms: z.number().int().positive().default(30_000),
      max_log_lines: z.number().int().min(0).max(500).default(40),
      allowed_actions: z
        .array(z.enum(ACTIONS))
        .default(["restart_worker", "open_breaker", "switch_provider", "raise_timeout", "alert", "ignore"]),
      /** Read-only diagnostics the model may run (as the command user) before it proposes; 0 calls turns them off. */
      investigate: z
        .strictObject({
          max_calls: z.number().int().min(0).max(20).default(3),
          max_seconds: z.number().positive().max(300).default(20),
        })
        .prefault({}),
    })
    .prefault({});

export const watchdogConfigSchema = () =>
  z
    .strictObject({
      enabled: z.boolean().default(true),
      probe: z
        .strictObject({
          interval_ms: z.number().int().min(50).default(5000),
          timeout_ms: z.number().int().min(50).default(2000),
          failure_threshold: z.number().int().min(1).default(3),
        })
        .prefault({}),
      /** How often open incidents are re-evaluated (verification, auto-resolve). */
      tick_ms: z.number().int().min(50).default(1000),
      verify_window_s: positive().default(30),
      /** An incident whose signals stayed away this long (with health passing) resolves itself. */
      resolve_after_s: positive().default(120),
      /** Signals of one component within this window join one incident. */
      group_window_s: positive().default(300),
      restart_grace_ms: z.number().int().min(0).default(5000),
      max_incidents: z.number().int().min(10).default(1000),
      flapping: z.strictObject({ changes: z.number().int().min(2).default(4), window_s: positive().default(600) }).prefault({}),
      log_files: z.array(z.strictObject({ path: z.string().min(1), poll_ms: z.number().int().min(50).default(1000) })).default([]),
      checks: z.array(checkConfigSchema()).default([]),
      signatures: z.array(signatureConfigSchema()).default([]),
      rules: z.array(ruleConfigSchema()).default([]),
      default_rules: z.boolean().default(true),
      rule_reset_s: positive().default(3600),
      /** A run_command waiting for approval expires after this long without a decision. */
      approval_timeout_s: positive().default(3600),
      commands: z
        .record(
          z.string(),
          z.strictObject({
            argv: z.array(z.string()).min(1),
            pre_approved: z.boolean().default(false),
            timeout_ms: z.number().int().positive().default(30_000),
          }),
        )
        .default({}),
      tier2: z
        .strictObject({ min_tries: z.number().int().min(1).default(3), min_success_rate: z.number().min(0).max(1).default(0.7) })
        .prefault({}),
      tier3: tier3Schema(),
      limits: z
        .strictObject({
          breaker_open_ms: z.number().int().positive().default(300_000),
          raise_timeout_factor: z.number().min(1).max(10).default(2),
          raise_timeout_max_ms: z.number().int().positive().default(900_000),
        })
        .prefault({}),
      webhook: z
        .strictObject({
          url: z.url(),
          headers: z.record(z.string(), z.string()).default({}),
          retries: z.number().int().min(0).max(10).default(3),
          timeout_ms: z.number().int().positive().default(5000),
        })
        .optional(),
    })
    .superRefine((config, ctx) => {
      const checks = new Set(config.checks.map((c) => c.name));
      for (const [i, signature] of config.signatures.entries())
        if (signature.verify_check !== undefined && !checks.has(signature.verify_check))
          ctx.addIssue({
            code: "custom",
            path: ["signatures", i, "verify_check"],
            message: `names no configured check (${signature.verify_check})`,
          });
    })
    .prefault({});

export type WatchdogConfig = z.infer<ReturnType<typeof watchdogConfigSchema>>;
