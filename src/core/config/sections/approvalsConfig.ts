import { z } from "zod";

export const policyValues = ["allow", "ask", "deny"] as const;
export type PolicyValue = (typeof policyValues)[number];
const policy = () => z.enum(policyValues);

const scopePolicySchema = () =>
  z
    .strictObject({
      read: policy().default("allow"),
      exec: policy().default("allow"),
      fs_write: policy().default("allow"),
      hop: policy().default("ask"),
      sudo: policy().default("ask"),
      service_control: policy().default("ask"),
    })
    .prefault({});

const commandRuleSchema = () =>
  z.strictObject({
    /** Glob on the whole command line: `*` any characters, `?` one character ("sudo *", "rm -rf /*"). */
    match: z.string().min(1),
    action: policy(),
  });

export type CommandRule = z.infer<ReturnType<typeof commandRuleSchema>>;
export type ScopePolicy = z.infer<ReturnType<typeof scopePolicySchema>>;

export const approvalsConfigSchema = () =>
  z
    .strictObject({
      policy: scopePolicySchema(),
      /** Checked in order before the scope policy; the first rule that matches decides. */
      rules: z.array(commandRuleSchema()).default([]),
      /**
       * Calls of one session waiting for a person at the same time. Past it a call that would ask
       * fails at once (too_many_pending_approvals): one model answer cannot bury the queue.
       */
      max_pending_per_session: z.number().int().min(1).default(20),
    })
    .prefault({});

export type ApprovalsConfig = z.infer<ReturnType<typeof approvalsConfigSchema>>;
