import { z } from "zod";

export const ptyConfigSchema = () =>
  z
    .strictObject({
      max_sessions: z.number().int().min(1).max(1024).default(64),
      idle_timeout_s: z.number().int().positive().default(1800),
      /** Unread output kept per session; beyond it the oldest unread bytes are dropped (and counted). */
      buffer_bytes: z.number().int().min(4096).default(1_048_576),
      /** Default shell for commands; otherwise $SHELL, then /bin/bash. */
      shell: z.string().optional(),
      /** Run commands through a login shell (`-lc`) by default; a login profile may reset PATH. */
      login_shell: z.boolean().default(false),
      /** Wait between SIGHUP, SIGTERM and SIGKILL when a session is closed. */
      close_grace_ms: z.number().int().min(0).max(60_000).default(1000),
      /** Bound of `<data_dir>/tool-output/`, where full outputs of truncated reads are kept. */
      tool_output_max_bytes: z
        .number()
        .int()
        .min(1_048_576)
        .default(256 * 1_048_576),
      tool_output_max_age_s: z.number().int().positive().default(86_400),
      /** Secret-looking variables (…_API_KEY, …_TOKEN, …) are kept from commands; names listed here pass. */
      pass_env: z.array(z.string().min(1)).default([]),
      /**
       * The user every command agentd runs for someone else runs as, when agentd starts as root: never
       * root, never agentd's own. The default system user is created at first start.
       */
      run_as: z
        .strictObject({
          user: z.string().min(1).default("agentd-cmd"),
          /** Supplementary groups by name (adm, systemd-journal: read-only diagnosis without asking). */
          groups: z.array(z.string().min(1)).default([]),
        })
        .prefault({}),
      /** Each command session's cgroup (rlimits where cgroups cannot be had): keeps agentd alive whatever a command does. */
      limits: z
        .strictObject({
          pids_max: z.number().int().min(8).max(1_000_000).default(512),
          memory_max_mb: z.number().int().min(16).default(2048),
          /** cgroup v2 cpu.weight (1–10000; 100 is a normal process): commands yield to agentd under load. */
          cpu_weight: z.number().int().min(1).max(10_000).default(50),
        })
        .prefault({}),
    })
    .prefault({});

export type PtyConfig = z.infer<ReturnType<typeof ptyConfigSchema>>;
