import { z } from "zod";

export const ptyConfigSchema = z
  .strictObject({
    max_sessions: z.number().int().min(1).max(1024).default(64),
    idle_timeout_s: z.number().int().positive().default(1800),
    buffer_bytes: z.number().int().min(4096).default(1_048_576),
    shell: z.string().optional(),
  })
  .prefault({});

export type PtyConfig = z.infer<typeof ptyConfigSchema>;
