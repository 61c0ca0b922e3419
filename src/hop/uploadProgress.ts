/** Pure rendering of upload progress: a redrawn bar on a terminal, a line per 10 % otherwise. */

export interface ProgressSample {
  bytes: number;
  total: number;
  /** Milliseconds since the upload started. */
  elapsedMs: number;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

function formatEta(seconds: number): string {
  if (!Number.isFinite(seconds)) return "--:--";
  const s = Math.max(0, Math.round(seconds));
  return `${String(Math.floor(s / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
}

/** One status text: `42% 12.0 MiB/28.5 MiB 6.1 MiB/s ETA 00:03`. */
export function describeProgress(sample: ProgressSample): string {
  const fraction = sample.total > 0 ? Math.min(1, sample.bytes / sample.total) : 1;
  const rate = sample.elapsedMs > 0 ? (sample.bytes * 1000) / sample.elapsedMs : 0;
  const eta = rate > 0 ? (sample.total - sample.bytes) / rate : Number.POSITIVE_INFINITY;
  return `${Math.floor(fraction * 100)}% ${formatBytes(sample.bytes)}/${formatBytes(sample.total)} ${formatBytes(Math.round(rate))}/s ETA ${formatEta(eta)}`;
}

function progressBar(sample: ProgressSample, width = 30): string {
  const fraction = sample.total > 0 ? Math.min(1, sample.bytes / sample.total) : 1;
  const filled = Math.round(fraction * width);
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${describeProgress(sample)}`;
}

/**
 * Feeds samples, returns what to print for each: on a TTY a `\r`-redrawn bar (at most every
 * `minRedrawMs`), otherwise one line each time a new 10 % step is crossed.
 */
export class ProgressRenderer {
  private lastStep = -1;
  private lastDraw = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly tty: boolean,
    private readonly minRedrawMs = 100,
  ) {}

  render(sample: ProgressSample): string {
    const done = sample.bytes >= sample.total;
    if (this.tty) {
      if (!done && sample.elapsedMs - this.lastDraw < this.minRedrawMs) return "";
      this.lastDraw = sample.elapsedMs;
      return `\r${progressBar(sample)}${done ? "\n" : ""}`;
    }
    const step = sample.total > 0 ? Math.floor((Math.min(sample.bytes, sample.total) / sample.total) * 10) : 10;
    if (step <= this.lastStep) return "";
    this.lastStep = step;
    return `upload ${describeProgress(sample)}\n`;
  }
}
