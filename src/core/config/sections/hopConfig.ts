import { z } from "zod";

export const hopsConfigSchema = () =>
  z
    .strictObject({
      /** Verified and appended to (`--accept-new`); `~` is the local home. */
      known_hosts: z.string().min(1).default("~/.ssh/known_hosts"),
      /** Tried in order when no `--identity` is given; missing files are skipped. */
      identity_files: z.array(z.string().min(1)).default(["~/.ssh/id_ed25519", "~/.ssh/id_ecdsa", "~/.ssh/id_rsa"]),
      /** Also offer the keys of the agent at SSH_AUTH_SOCK. */
      use_agent: z.boolean().default(true),
      connect_timeout_ms: z.number().int().min(1000).default(20_000),
      keepalive_interval_ms: z.number().int().min(0).default(15_000),
      keepalive_count_max: z.number().int().min(1).default(3),
      reconnect_initial_ms: z.number().int().min(10).default(1000),
      reconnect_max_ms: z.number().int().min(100).default(30_000),
      /** A hop still unreachable after this long is marked closed. */
      reconnect_give_up_s: z.number().int().min(1).default(1800),
      /** Seconds a hop that failed (to open, or gave up reconnecting) stays listed; 0 keeps it. */
      failed_expiry_s: z.number().int().min(0).default(600),
      /** The remote agentd's home: its binary lands in `<remote_dir>/bin/agentd`; `~` is the remote $HOME. */
      remote_dir: z.string().min(1).default("~/.agentd"),
      /** How long the remote agentd may take to write its ready file. */
      remote_ready_timeout_ms: z.number().int().min(1000).default(30_000),
      /** Added to a call's own wait (yield_time_ms) before a remote call counts as hung. */
      call_timeout_margin_ms: z.number().int().min(1000).default(30_000),
    })
    .prefault({});

export type HopsConfig = z.infer<ReturnType<typeof hopsConfigSchema>>;
