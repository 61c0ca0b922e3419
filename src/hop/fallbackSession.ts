import type { ClientChannel } from "ssh2";
import { keepErrorListener } from "./sshErrors.ts";

// Unread output kept per session; beyond it the oldest bytes are dropped (and counted).
const MAX_UNREAD = 1024 * 1024;

/** One command in an SSH exec channel with a pty: the fallback's stand-in for a remote PTY session. */
export class FallbackSession {
  readonly startedAt = new Date();
  lastUsedAt = Date.now();
  exitCode: number | null = null;
  signal: string | undefined;
  running = true;
  bytesOut = 0;
  lastOutputAt: number | undefined;
  droppedBytes = 0;
  private unread: Buffer[] = [];
  private unreadBytes = 0;
  private readonly waiters = new Set<() => void>();

  constructor(
    readonly id: string,
    readonly cmd: string,
    private readonly channel: ClientChannel,
  ) {
    // A failing channel also closes, which ends the session below.
    keepErrorListener(channel, "fallback session", { session: id });
    const take = (chunk: Buffer) => this.append(chunk);
    channel.on("data", take);
    channel.stderr.on("data", take);
    channel.on("exit", (code: number | null, signal?: string) => {
      this.exitCode = code ?? (signal ? 128 + signalNumber(signal) : null);
      this.signal = signal ? `SIG${signal}` : undefined;
    });
    channel.on("close", () => {
      this.running = false;
      this.notify();
    });
  }

  write(chars: string): void {
    if (chars) this.channel.write(chars);
  }

  resize(cols: number, rows: number): void {
    this.channel.setWindow(rows, cols, 0, 0);
  }

  /** Unread output, emptied. */
  take(): { bytes: Buffer; dropped: number } {
    const bytes = Buffer.concat(this.unread);
    const dropped = this.droppedBytes;
    this.unread = [];
    this.unreadBytes = 0;
    this.droppedBytes = 0;
    return { bytes, dropped };
  }

  /** Waits until the command ends or `deadline` (epoch ms); with `untilOutput`, also until output arrives. */
  async waitUntil(deadline: number, untilOutput: boolean, signal?: AbortSignal): Promise<void> {
    while (this.running && !signal?.aborted && Date.now() < deadline && !(untilOutput && this.unreadBytes > 0)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.waiters.delete(done);
          signal?.removeEventListener("abort", done);
          resolve();
        };
        const timer = setTimeout(done, deadline - Date.now());
        signal?.addEventListener("abort", done, { once: true });
        this.waiters.add(done);
      });
    }
  }

  close(): void {
    // Closing a pty channel makes sshd hang up the terminal: the command gets SIGHUP.
    this.channel.close();
  }

  private append(chunk: Buffer): void {
    this.bytesOut += chunk.length;
    this.lastOutputAt = Date.now();
    this.unread.push(chunk);
    this.unreadBytes += chunk.length;
    while (this.unreadBytes > MAX_UNREAD && this.unread.length > 1) {
      const dropped = this.unread.shift()!;
      this.unreadBytes -= dropped.length;
      this.droppedBytes += dropped.length;
    }
    this.notify();
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

const SIGNALS: Record<string, number> = { HUP: 1, INT: 2, QUIT: 3, KILL: 9, TERM: 15, PIPE: 13, ABRT: 6, SEGV: 11 };

function signalNumber(name: string): number {
  return SIGNALS[name] ?? 0;
}
