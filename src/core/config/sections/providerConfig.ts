import { z } from "zod";

const ms = z.number().int().positive();

export const providerTimeoutsSchema = z
  .strictObject({
    /** Until response headers of a streamed request (non-streamed ones have headers only when done). */
    connect_ms: ms.default(10_000),
    /** Until the first streamed event, or the whole non-streamed body. */
    first_byte_ms: ms.default(120_000),
    /** Between streamed events; re-armed on each. */
    idle_ms: ms.default(300_000),
    total_ms: ms.default(1_800_000),
  })
  .prefault({});

export const providerConfigSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9_.-]+$/, "expected a name of letters, digits, '_', '.', '-'"),
  base_url: z.url({ protocol: /^https?$/, error: "expected a URL" }),
  api_key: z.string().optional(),
  /** Model names or globs ("gpt-4o*"); "*" serves any model. */
  models: z.array(z.string().min(1)).default(["*"]),
  /** Client-side names mapped to upstream names: {"fast": "gpt-4o-mini"}. */
  aliases: z.record(z.string(), z.string()).default({}),
  priority: z.number().int().default(0),
  weight: z.number().positive().default(1),
  timeouts: providerTimeoutsSchema,
  /** The API the provider speaks: Chat Completions, Responses, or Anthropic's Messages (base_url then ends in /v1). */
  wire: z.enum(["chat", "responses", "anthropic"]).default("chat"),
  tool_call_text: z.enum(["off", "parse"]).default("off"),
});

export type ProviderConfig = z.infer<typeof providerConfigSchema>;

export const proxyConfigSchema = z
  .strictObject({
    /** Attempts at one provider before moving to the next. */
    max_attempts: z.number().int().min(1).max(10).default(4),
    /** Attempts per request across all providers. */
    max_total_attempts: z.number().int().min(1).max(30).default(8),
    retry_base_ms: ms.default(500),
    retry_max_ms: ms.default(8_000),
    retry_after_cap_ms: ms.default(30_000),
    breaker: z
      .strictObject({
        failures: z.number().int().min(1).default(5),
        window_ms: ms.default(60_000),
        cooldown_429_ms: ms.default(60_000),
        cooldown_5xx_ms: ms.default(120_000),
        cooldown_auth_ms: ms.default(300_000),
        cooldown_max_ms: ms.default(900_000),
      })
      .prefault({}),
    response_ttl_s: z.number().int().positive().default(86_400),
    /** How long a learned provider quirk (a rejected parameter) is remembered. */
    quirk_ttl_s: z
      .number()
      .int()
      .positive()
      .default(7 * 86_400),
    /** Request bodies above this are refused with 413. */
    max_body_bytes: z
      .number()
      .int()
      .positive()
      .default(10 * 1024 * 1024),
    /** The admin route may raise a provider's timeouts up to this multiple of the configured value. */
    timeout_raise_max_factor: z.number().min(1).max(100).default(4),
    /** How often rollups are written and expired responses dropped. */
    maintenance_interval_ms: ms.default(15_000),
  })
  .prefault({});

export type ProxyConfig = z.infer<typeof proxyConfigSchema>;
