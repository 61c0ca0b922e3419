import type { EpollLoop } from "./epollLoop.ts";
import { EPOLLERR, EPOLLHUP, EPOLLIN, EPOLLOUT, SIGHUP, SIGKILL, SIGTERM } from "./libcBindings.ts";
import { OutputBuffer, type TakenOutput } from "./outputBuffer.ts";
import { PtyError } from "./ptyErrors.ts";
import type { PtyProcess } from "./ptyProcess.ts";
import type { ExitStatus } from "./waitStatus.ts";

export interface PtySessionOptions {
  id: string;
  cmd: string;
  /** Started without no_new_privs: what is typed into it runs with raised privileges. */
  privileged?: boolean;
  /** Its process, started on its terminal (PtyProcess.spawn). */
  process: PtyProcess;
  bufferBytes: number;
  loop: EpollLoop;
  /** Called once, when the process has been reaped. */
  onExit?: (session: PtySession, status: ExitStatus) => void;
}

// One read buffer for every session: reads happen synchronously on the JS thread and are copied out at once.
const READ_CHUNK = new Uint8Array(64 * 1024);
// Per readiness event, so one flooding session cannot starve the others on the same tick.
const MAX_BYTES_PER_EVENT = 1024 * 1024;
// Input the terminal has not taken yet (a program not reading); beyond this, writes are refused.
const MAX_PENDING_INPUT = 1024 * 1024;
// Leaving grandchildren are not announced by any fd, so their group is re-checked this often.
const GROUP_POLL_MS = 10;

/** One program on its own pty: its process, its unread output, and the input it has not taken yet. */
export class PtySession {
  readonly id: string;
  readonly cmd: string;
  readonly privileged: boolean;
  readonly startedAt = new Date();
  lastUsedAt = Date.now();
  /** When the program last wrote to its terminal (undefined until it does); API calls leave it alone. */
  lastOutputAt: number | undefined;
  private readonly process: PtyProcess;
  private readonly output: OutputBuffer;
  private readonly loop: EpollLoop;
  private readonly onExit?: PtySessionOptions["onExit"];
  private pendingInput: Uint8Array[] = [];
  private pendingBytes = 0;
  private waiters = new Set<() => void>();
  private waitingCalls = 0;
  private masterWatched = true;
  private pidFdWatched: boolean;
  private ended = false;
  private disposed = false;

  constructor(options: PtySessionOptions) {
    this.id = options.id;
    this.cmd = options.cmd;
    this.privileged = options.privileged ?? false;
    this.loop = options.loop;
    this.onExit = options.onExit;
    this.output = new OutputBuffer(options.bufferBytes);
    this.process = options.process;
    this.loop.add(this.process.masterFd, EPOLLIN, (events) => this.onMasterReady(events));
    this.pidFdWatched = this.process.pidFd >= 0;
    if (this.pidFdWatched) this.loop.add(this.process.pidFd, EPOLLIN, () => this.onPidFdReady());
  }

  get pid(): number {
    return this.process.pid;
  }

  get ttyName(): string {
    return this.process.ttyName;
  }

  get running(): boolean {
    return this.process.exitStatus === undefined;
  }

  get exitStatus(): ExitStatus | undefined {
    return this.process.exitStatus;
  }

  /** True once no process holds the terminal any more (EIO on read): nothing more will come. */
  get outputEnded(): boolean {
    return this.ended;
  }

  get bytesOut(): number {
    return this.output.totalBytes;
  }

  get unreadBytes(): number {
    return this.output.unreadBytes;
  }

  /** True while a call waits on this session's output: it is in use, however old lastUsedAt is. */
  get waiting(): boolean {
    return this.waitingCalls > 0;
  }

  touch(): void {
    this.lastUsedAt = Date.now();
  }

  /** Queues `bytes` for the terminal and writes what it takes now; the rest follows as it drains. */
  write(bytes: Uint8Array): void {
    if (this.disposed) throw new PtyError("pty_session_exited", `Session ${this.id} is closed`);
    if (this.pendingBytes + bytes.length > MAX_PENDING_INPUT) {
      throw new PtyError("pty_input_too_large", `Session ${this.id} has ${this.pendingBytes} bytes of input the program has not read yet`);
    }
    if (bytes.length === 0) return;
    this.pendingInput.push(bytes);
    this.pendingBytes += bytes.length;
    this.flushInput();
    this.loop.kick();
  }

  resize(cols: number, rows: number): void {
    if (this.disposed) throw new PtyError("pty_session_exited", `Session ${this.id} is closed`);
    this.process.resize(cols, rows);
  }

  takeOutput(): TakenOutput {
    return this.output.take(!this.ended && this.running);
  }

  /** Reaps the process if it has ended: found by its pidfd, or by the manager's periodic sweep. */
  pollExit(): void {
    if (!this.running) return;
    const status = this.process.tryReap();
    if (!status) return;
    this.unwatchPidFd();
    // Output written before the exit is already in the terminal: take it now, before anyone reads the result.
    this.drainMaster();
    this.onExit?.(this, status);
    this.notify();
  }

  /**
   * The process has ended. A launcher that learns its status later (the monitor's reply) calls
   * pollExit again then; the pidfd, readable from now on, is no longer watched meanwhile.
   */
  private onPidFdReady(): void {
    this.pollExit();
    if (this.running) this.unwatchPidFd();
  }

  /**
   * Resolves when `done()` holds, at `deadline` (ms epoch), or when `signal` aborts, whichever is
   * first. `done` is re-checked on every output or exit, and every `pollMs` when given.
   */
  async waitUntil(done: () => boolean, deadline: number, signal?: AbortSignal, pollMs?: number): Promise<void> {
    const release = this.loop.holdAttention();
    this.waitingCalls++;
    try {
      while (!done() && !signal?.aborted) {
        const remaining = deadline - Date.now();
        if (remaining <= 0) return;
        await this.nextChange(Math.min(remaining, pollMs ?? remaining), signal);
      }
    } finally {
      this.waitingCalls--;
      release();
    }
  }

  /**
   * Ends the process group: SIGHUP, then SIGTERM, then SIGKILL, each after `graceMs` without the
   * group gone (`force` goes straight to SIGKILL). Returns the leader's exit status once reaped.
   */
  async terminate(graceMs: number, force = false): Promise<ExitStatus | undefined> {
    const groupGone = () => {
      this.pollExit();
      return !this.running && !this.process.groupAlive();
    };
    for (const signal of force ? [SIGKILL] : [SIGHUP, SIGTERM, SIGKILL]) {
      if (groupGone()) break;
      await this.process.signalGroup(signal);
      this.loop.kick();
      await this.waitUntil(groupGone, Date.now() + graceMs, undefined, GROUP_POLL_MS);
    }
    this.pollExit();
    return this.exitStatus;
  }

  /** Stops watching and closes both fds; a program still holding the terminal sees it hang up. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.unwatchMaster();
    this.unwatchPidFd();
    this.process.closeMaster();
    this.notify();
  }

  private onMasterReady(events: number): void {
    if (events & EPOLLOUT) this.flushInput();
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) this.drainMaster();
  }

  private drainMaster(): void {
    if (this.ended || this.disposed) return;
    let taken = 0;
    let appended = false;
    while (taken < MAX_BYTES_PER_EVENT) {
      const result = this.process.read(READ_CHUNK);
      if (result === "again") break;
      if (result === "eof") {
        this.ended = true;
        this.unwatchMaster();
        break;
      }
      this.output.append(READ_CHUNK.subarray(0, result));
      taken += result;
      appended = true;
    }
    if (appended) this.lastOutputAt = Date.now();
    if (appended || this.ended) this.notify();
  }

  private flushInput(): void {
    while (this.pendingInput.length > 0 && !this.ended) {
      const next = this.pendingInput[0]!;
      const written = this.process.write(next);
      this.pendingBytes -= written;
      if (written < next.length) {
        this.pendingInput[0] = next.subarray(written);
        break;
      }
      this.pendingInput.shift();
    }
    if (this.masterWatched) this.loop.modify(this.process.masterFd, this.pendingBytes > 0 ? EPOLLIN | EPOLLOUT : EPOLLIN);
  }

  private nextChange(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", finish);
        this.waiters.delete(finish);
        resolve();
      };
      const timer = setTimeout(finish, timeoutMs);
      signal?.addEventListener("abort", finish, { once: true });
      this.waiters.add(finish);
    });
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  private unwatchMaster(): void {
    if (!this.masterWatched) return;
    this.masterWatched = false;
    this.loop.remove(this.process.masterFd);
  }

  private unwatchPidFd(): void {
    if (this.pidFdWatched) {
      this.pidFdWatched = false;
      this.loop.remove(this.process.pidFd);
    }
    this.process.closePidFd();
  }
}
