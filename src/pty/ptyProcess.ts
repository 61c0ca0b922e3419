import { ptr } from "bun:ffi";
import { readdirSync, readFileSync } from "node:fs";
import { errnoName } from "../core/process/index.ts";
import type { CommandLauncher, LaunchRequest } from "./commandLauncher.ts";
import {
  EAGAIN,
  EINTR,
  EIO,
  ESRCH,
  FD_CLOEXEC,
  F_GETFL,
  F_SETFD,
  F_SETFL,
  O_NONBLOCK,
  SYS_PIDFD_OPEN,
  TIOCSWINSZ,
  libc,
} from "./libcBindings.ts";
import { PtyError } from "./ptyErrors.ts";
import type { ExitStatus } from "./waitStatus.ts";

/** A session's command and its terminal's size; the launcher decides who runs it and how. */
export interface PtySpawnSpec extends Omit<LaunchRequest, "tty"> {
  cols: number;
  rows: number;
}

export type ReadResult = number | "again" | "eof";

function winsize(cols: number, rows: number): Uint16Array {
  // struct winsize { unsigned short ws_row, ws_col, ws_xpixel, ws_ypixel; }
  return new Uint16Array([rows, cols, 0, 0]);
}

/**
 * A child process whose controlling terminal is a fresh pty, and the master side we hold.
 * The terminal's methods are thin, synchronous syscall wrappers; its process is started, signalled
 * and reaped by a CommandLauncher; scheduling lives in EpollLoop/PtySession.
 */
export class PtyProcess {
  private masterOpen = true;
  private pidFdOpen: boolean;
  private exit: ExitStatus | undefined;

  private constructor(
    readonly pid: number,
    readonly masterFd: number,
    /** -1 when the kernel has no pidfd_open (before 5.3); exits are then found by polling. */
    readonly pidFd: number,
    readonly ttyName: string,
    private readonly launcher: CommandLauncher,
  ) {
    this.pidFdOpen = pidFd >= 0;
  }

  static async spawn(spec: PtySpawnSpec, launcher: CommandLauncher): Promise<PtyProcess> {
    const c = libc();
    const fds = new Int32Array(2);
    if (c.openpty(ptr(fds), ptr(fds, 4), null, null, winsize(spec.cols, spec.rows)) !== 0) {
      throw new PtyError("pty_spawn_failed", `openpty failed: ${errnoName(c.errno())}`);
    }
    const master = fds[0]!;
    const slave = fds[1]!;
    // Other children the daemon spawns must not inherit our terminals.
    c.fcntl(master, F_SETFD, FD_CLOEXEC);
    c.fcntl(slave, F_SETFD, FD_CLOEXEC);
    try {
      const nameBuffer = new Uint8Array(256);
      if (c.ptsname_r(master, nameBuffer, nameBuffer.length) !== 0) {
        throw new PtyError("pty_spawn_failed", `ptsname_r failed: ${errnoName(c.errno())}`);
      }
      const ttyName = Buffer.from(nameBuffer.subarray(0, nameBuffer.indexOf(0))).toString("utf8");
      const { cols: _cols, rows: _rows, ...request } = spec;
      const pid = await launcher.start({ ...request, tty: { fd: slave, path: ttyName } });
      c.fcntl(master, F_SETFL, c.fcntl(master, F_GETFL, 0) | O_NONBLOCK);
      // Also for another uid's process (the monitor started it): pidfd_open checks no permission.
      const pidFd = c.syscall(SYS_PIDFD_OPEN, pid, 0);
      return new PtyProcess(pid, master, Number(pidFd), ttyName, launcher);
    } catch (error) {
      c.close(master);
      throw error;
    } finally {
      c.close(slave);
    }
  }

  /** Reads what the master has without blocking; EIO (no process holds the slave any more) is end of output. */
  read(buffer: Uint8Array): ReadResult {
    const c = libc();
    for (;;) {
      const n = Number(c.read(this.masterFd, buffer, buffer.length));
      if (n > 0) return n;
      if (n === 0) return "eof";
      const errno = c.errno();
      if (errno === EINTR) continue;
      if (errno === EAGAIN) return "again";
      if (errno === EIO) return "eof";
      throw new PtyError("pty_io_error", `read from the terminal failed: ${errnoName(errno)}`);
    }
  }

  /** Writes as much of `bytes` as the terminal takes now; returns how many bytes it took. */
  write(bytes: Uint8Array): number {
    const c = libc();
    for (;;) {
      const n = Number(c.write(this.masterFd, bytes, bytes.length));
      if (n >= 0) return n;
      const errno = c.errno();
      if (errno === EINTR) continue;
      if (errno === EAGAIN) return 0;
      throw new PtyError("pty_io_error", `write to the terminal failed: ${errnoName(errno)}`);
    }
  }

  resize(cols: number, rows: number): void {
    if (libc().ioctl(this.masterFd, TIOCSWINSZ, winsize(cols, rows)) !== 0) {
      throw new PtyError("pty_io_error", `resizing the terminal failed: ${errnoName(libc().errno())}`);
    }
  }

  /** Signals the whole process group the child leads; false once no process is left in it. */
  signalGroup(signal: number): Promise<boolean> {
    return this.launcher.signalGroup(this.pid, signal);
  }

  /** Whether a live (non-zombie) process is left in the group. */
  groupAlive(): boolean {
    // Signal 0 only asks: EPERM (another uid's group) still says it exists.
    const c = libc();
    if (c.kill(-this.pid, 0) !== 0 && c.errno() === ESRCH) return false;
    // kill() also reaches zombies, which an init that reaps slowly leaves behind; look for a live member.
    return hasLiveMember(this.pid);
  }

  /** The exit status once the child has ended; kept, so later calls are cheap. */
  tryReap(): ExitStatus | undefined {
    this.exit ??= this.launcher.reap(this.pid);
    return this.exit;
  }

  get exitStatus(): ExitStatus | undefined {
    return this.exit;
  }

  closeMaster(): void {
    if (!this.masterOpen) return;
    this.masterOpen = false;
    libc().close(this.masterFd);
  }

  closePidFd(): void {
    if (!this.pidFdOpen) return;
    this.pidFdOpen = false;
    libc().close(this.pidFd);
  }
}

function hasLiveMember(processGroup: number): boolean {
  for (const name of readdirSync("/proc")) {
    if (name.charCodeAt(0) > 57) continue; // not a pid
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "latin1");
    } catch {
      continue; // exited meanwhile
    }
    // Fields after the command name (which may hold spaces): state, ppid, pgrp, …
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ", 3);
    if (Number(pgrp) === processGroup && state !== "Z" && state !== "X") return true;
  }
  return false;
}
