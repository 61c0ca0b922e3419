import { z } from "zod";

/** Incidents as alerts in Prometheus Alertmanager (v2 API), sent by the supervisor's watchdog. */
export const alertsConfigSchema = () =>
  z
    .strictObject({
      /** Alertmanager base URLs (`http://alertmanager:9093`); each gets every alert. */
      alertmanager: z.array(z.url()).default([]),
      /** Firing alerts are sent again this often; Alertmanager ends an alert not re-sent before its endsAt. */
      resend_interval_s: z.number().positive().default(60),
      timeout_ms: z.number().int().positive().default(5000),
      /** The status page as the people paged reach it; the worker's own URL when unset. */
      status_url: z.url().optional(),
      /** Extra labels on every alert (`{"team": "infra"}`). */
      labels: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).default({}),
    })
    .prefault({});

export type AlertsConfig = z.infer<ReturnType<typeof alertsConfigSchema>>;
