/** The worker's health as the watchdog sees it: whether it is up and its probes pass, and what they saw. */
export interface HealthView {
  ok: boolean;
  detail: Record<string, unknown>;
}
