import { EPOLL_CLOEXEC, EPOLL_CTL_ADD, EPOLL_CTL_DEL, EPOLL_CTL_MOD, EPOLL_DATA_OFFSET, EPOLL_EVENT_SIZE, libc } from "./libcBindings.ts";
import { PtyError } from "./ptyErrors.ts";

export type ReadinessHandler = (events: number) => void;

const MAX_EVENTS = 256;
// After activity, poll on every event-loop turn for this long: an echo or a prompt usually follows within it.
const HOT_WINDOW_MS = 3;
// Then back off exponentially up to one of these: short while someone awaits output, longer when nobody does.
const ATTENTIVE_MAX_DELAY_MS = 2;
const IDLE_MAX_DELAY_MS = 50;

/**
 * One epoll set for every PTY fd, polled (never blocking) from the JS event loop.
 *
 * Bun has no way to watch an arbitrary fd from JS, and its fs/tty streams read on a thread pool
 * (one parked thread per idle terminal). A non-blocking epoll_wait costs a syscall, so the poll
 * runs on every loop turn while data flows and backs off to a few ms (or 50 ms when idle) after.
 */
export class EpollLoop {
  private readonly epfd: number;
  private readonly handlers = new Map<number, ReadinessHandler>();
  private readonly events = new Uint8Array(MAX_EVENTS * EPOLL_EVENT_SIZE);
  private readonly eventsView = new DataView(this.events.buffer);
  private readonly control = new Uint8Array(16);
  private readonly controlView = new DataView(this.control.buffer);
  private immediate: ReturnType<typeof setImmediate> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastActivity = 0;
  private backoffMs = 0;
  private attention = 0;
  private closed = false;

  constructor(private readonly onHandlerError: (error: unknown) => void) {
    this.epfd = libc().epoll_create1(EPOLL_CLOEXEC);
    if (this.epfd < 0) throw new PtyError("pty_unsupported", `epoll_create1 failed (errno ${libc().errno()})`);
  }

  add(fd: number, events: number, handler: ReadinessHandler): void {
    this.ctl(EPOLL_CTL_ADD, fd, events);
    this.handlers.set(fd, handler);
    this.kick();
  }

  modify(fd: number, events: number): void {
    if (this.handlers.has(fd)) this.ctl(EPOLL_CTL_MOD, fd, events);
  }

  /** Must run before the fd is closed, or the kernel may keep reporting it. */
  remove(fd: number): void {
    if (!this.handlers.delete(fd)) return;
    libc().epoll_ctl(this.epfd, EPOLL_CTL_DEL, fd, this.control);
    if (this.handlers.size === 0) this.stop();
  }

  /** Something just happened (a write, a spawn): poll on every turn for a moment. */
  kick(): void {
    if (this.closed || this.handlers.size === 0) return;
    this.lastActivity = performance.now();
    this.backoffMs = 0;
    if (this.immediate) return;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.immediate = setImmediate(() => this.tick());
  }

  /** While held, idle polling stays fast; release the returned function when done waiting. */
  holdAttention(): () => void {
    this.attention++;
    this.kick();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.attention--;
    };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stop();
    this.handlers.clear();
    libc().close(this.epfd);
  }

  private ctl(op: number, fd: number, events: number): void {
    this.controlView.setUint32(0, events, true);
    this.controlView.setBigUint64(EPOLL_DATA_OFFSET, BigInt(fd), true);
    if (libc().epoll_ctl(this.epfd, op, fd, this.control) !== 0) {
      throw new PtyError("pty_io_error", `epoll_ctl failed on fd ${fd} (errno ${libc().errno()})`);
    }
  }

  private stop(): void {
    if (this.immediate) clearImmediate(this.immediate);
    if (this.timer) clearTimeout(this.timer);
    this.immediate = undefined;
    this.timer = undefined;
  }

  private tick(): void {
    this.immediate = undefined;
    this.timer = undefined;
    if (this.closed) return;
    const count = libc().epoll_wait(this.epfd, this.events, MAX_EVENTS, 0);
    for (let index = 0; index < count; index++) {
      const offset = index * EPOLL_EVENT_SIZE;
      const mask = this.eventsView.getUint32(offset, true);
      const fd = Number(this.eventsView.getBigUint64(offset + EPOLL_DATA_OFFSET, true));
      const handler = this.handlers.get(fd);
      if (!handler) continue;
      try {
        handler(mask);
      } catch (error) {
        this.onHandlerError(error);
      }
    }
    if (count > 0) this.lastActivity = performance.now();
    this.schedule();
  }

  private schedule(): void {
    if (this.closed || this.handlers.size === 0 || this.immediate || this.timer) return;
    if (performance.now() - this.lastActivity < HOT_WINDOW_MS) {
      this.backoffMs = 0;
      this.immediate = setImmediate(() => this.tick());
      return;
    }
    const cap = this.attention > 0 ? ATTENTIVE_MAX_DELAY_MS : IDLE_MAX_DELAY_MS;
    this.backoffMs = Math.min(cap, Math.max(1, this.backoffMs * 2));
    this.timer = setTimeout(() => this.tick(), this.backoffMs);
  }
}
