import { z } from "zod";

const DEFAULT_SYSTEM_PROMPT = [
  "You are agentd, an operator's assistant running on this host.",
  "You act through the tools you are given; prefer reading and checking before changing anything.",
  "Keep answers short and say what you did and what you found.",
].join(" ");

const sidecarLevels = ["off", "info", "full"] as const;
export type SidecarLevel = (typeof sidecarLevels)[number];

export const agentConfigSchema = () =>
  z
    .strictObject({
      /** Model name sent to the proxy; a session may choose another. */
      model: z.string().min(1).default("gpt-4o-mini"),
      max_steps: z.number().int().min(1).max(500).default(25),
      /** A turn stops when the model makes the same call (same arguments, same result) this many times in a row. */
      max_repeated_calls: z.number().int().min(2).max(500).default(3),
      system_prompt: z.string().default(DEFAULT_SYSTEM_PROMPT),
      temperature: z.number().min(0).max(2).optional(),
      /** A running tool call emits tool.progress at least this often. */
      progress_interval_ms: z.number().int().min(10).max(60_000).default(5000),
      /** Tool results longer than this reach the model cut in the middle (head and tail kept). */
      tool_result_max_bytes: z
        .number()
        .int()
        .min(1024)
        .default(64 * 1024),
      read_file_max_bytes: z
        .number()
        .int()
        .min(1024)
        .default(8 * 1024 * 1024),
      debug: z
        .strictObject({
          /** off: no sidecar; info: requests, gathered responses, tool calls; full: adds whole bodies and results. */
          level: z.enum(sidecarLevels).default("info"),
          max_bytes: z
            .number()
            .int()
            .min(4096)
            .default(20 * 1024 * 1024),
          keep: z.number().int().min(0).max(20).default(2),
        })
        .prefault({}),
    })
    .prefault({});

export type AgentConfig = z.infer<ReturnType<typeof agentConfigSchema>>;
