/** 850 ms, 1.2 s, 3 m 4 s, 2 h 5 m: what a person reads at a glance. */
export function humanDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "-";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(Math.round(ms / 100) / 10).toFixed(1)} s`;
  const totalS = Math.round(ms / 1000);
  if (totalS < 3600) return `${Math.floor(totalS / 60)} m ${totalS % 60} s`;
  const totalM = Math.floor(totalS / 60);
  return `${Math.floor(totalM / 60)} h ${totalM % 60} m`;
}
