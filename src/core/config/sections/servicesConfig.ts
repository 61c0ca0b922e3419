import { z } from "zod";

const serviceConfigSchema = () =>
  z.strictObject({
    name: z.string().regex(/^[A-Za-z0-9_.@-]+$/, "expected a name of letters, digits, '_', '.', '@', '-'"),
    /** Shell command whose exit code and output tell the service's state (e.g. "systemctl is-active nginx"). */
    status: z.string().min(1),
    /** Shell command that restarts it (e.g. "sudo systemctl restart nginx"). */
    restart: z.string().min(1),
    timeout_s: z.number().int().min(1).max(3600).default(60),
  });

export const servicesConfigSchema = () => z.array(serviceConfigSchema()).default([]);

export type ServiceConfig = z.infer<ReturnType<typeof serviceConfigSchema>>;
