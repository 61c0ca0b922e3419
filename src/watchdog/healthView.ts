/** The worker's health as the watchdog last saw it, for incidents and the tier-3 report. */
export interface HealthView {
  ok: boolean;
  detail: Record<string, unknown>;
}
