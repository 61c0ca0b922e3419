import { z } from "zod";

const ms = () => z.number().int().positive();

export const providerTimeoutsSchema = () =>
  z
    .strictObject({
      /** Until response headers of a streamed request (non-streamed ones have headers only when done). */
      connect_ms: ms().default(10_000),
      /** Until the first streamed event, or the whole non-streamed body. */
      first_byte_ms: ms().default(120_000),
      /** Between streamed events; re-armed on each. */
      idle_ms: ms().default(300_000),
      total_ms: ms().default(1_800_000),
    })
    .prefault({});

/** Tool-call formats a provider or model may be pinned to; "auto" detects every one by its marker. */
export const TOOL_CALL_FORMATS = [
  "auto",
  "hermes",
  "qwen3_coder",
  "glm45",
  "mistral",
  "llama3",
  "pythonic",
  "deepseek_v3",
  "deepseek_v31",
  "kimi_k2",
  "minimax_m2",
  "minimax_m1",
  "granite",
  "harmony",
  "xlam",
  "json_fence",
] as const;

const toolCallFormat = () => z.enum(TOOL_CALL_FORMATS);

export const providerConfigSchema = () =>
  z.strictObject({
    name: z.string().regex(/^[A-Za-z0-9_.-]+$/, "expected a name of letters, digits, '_', '.', '-'"),
    base_url: z.url({ protocol: /^https?$/, error: "expected a URL" }),
    api_key: z.string().optional(),
    /** Model names or globs ("gpt-4o*"); "*" serves any model. */
    models: z.array(z.string().min(1)).default(["*"]),
    /** Client-side names mapped to upstream names: {"fast": "gpt-4o-mini"}. */
    aliases: z.record(z.string(), z.string()).default({}),
    priority: z.number().int().default(0),
    weight: z.number().positive().default(1),
    timeouts: providerTimeoutsSchema(),
    /** The API the provider speaks: Chat Completions, Responses, or Anthropic's Messages (base_url then ends in /v1). */
    wire: z.enum(["chat", "responses", "anthropic"]).default("chat"),
    /** Tool calls a model wrote in its text become structured calls ("parse"), or the text is left as it came ("off"). */
    tool_call_text: z.enum(["off", "parse"]).default("parse"),
    /** The format to read: one for every model, or by model name or glob ({"glm-4.5*": "glm45"}); unset means "auto". */
    tool_call_format: z.union([toolCallFormat(), z.record(z.string(), toolCallFormat())]).optional(),
  });

export type ProviderConfig = z.infer<ReturnType<typeof providerConfigSchema>>;

export const proxyConfigSchema = () =>
  z
    .strictObject({
      /** Attempts at one provider before moving to the next. */
      max_attempts: z.number().int().min(1).max(10).default(4),
      /** Attempts per request across all providers. */
      max_total_attempts: z.number().int().min(1).max(30).default(8),
      retry_base_ms: ms().default(500),
      retry_max_ms: ms().default(8_000),
      /** The longest Retry-After the proxy waits for itself; a longer one moves on to the next provider. */
      retry_after_cap_ms: ms().default(30_000),
      /** The longest Retry-After the proxy tells a client (rate limits, open breakers); a longer wait goes without one, so clients do not sit through it. */
      client_retry_after_cap_ms: ms().default(30_000),
      breaker: z
        .strictObject({
          failures: z.number().int().min(1).default(5),
          window_ms: ms().default(60_000),
          cooldown_5xx_ms: ms().default(120_000),
          cooldown_auth_ms: ms().default(300_000),
          cooldown_max_ms: ms().default(900_000),
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
      maintenance_interval_ms: ms().default(15_000),
      /**
       * How upstream calls are made: "auto" sends http:// and https:// upstreams through agentd's own
       * HTTP/1.1 client (fetch while a proxy is set in the environment); "fetch" sends all through fetch.
       */
      upstream_client: z.enum(["auto", "fetch"]).default("auto"),
    })
    .prefault({});

export type ProxyConfig = z.infer<ReturnType<typeof proxyConfigSchema>>;
