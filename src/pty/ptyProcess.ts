import { ptr } from "bun:ffi";
import { readdirSync, readFileSync } from "node:fs";
import { errnoName, nativeSpawn, type SpawnCredentials, type SpawnLimit, type SpawnSandbox } from "../core/process/index.ts";
import {
  EAGAIN,
  ECHILD,
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
  WNOHANG,
  libc,
} from "./libcBindings.ts";
import { PtyError } from "./ptyErrors.ts";
import { decodeWaitStatus, type ExitStatus } from "./waitStatus.ts";

export interface PtySpawnSpec {
  /** The program's absolute path (commandLaunch resolves it); argv[0] is only its name. */
  path: string;
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd?: string;
  cols: number;
  rows: number;
  /** The user it runs as; absent: agentd's own. */
  credentials?: SpawnCredentials;
  noNewPrivs: boolean;
  /** The session's cgroup.procs files, joined before the command runs. */
  cgroupProcs?: readonly string[];
  limits?: readonly SpawnLimit[];
  umask?: number;
  /** Mount and PID namespaces of its own (a start as a user): see SpawnSandbox. */
  sandbox?: SpawnSandbox;
}

/** Commands are the OOM killer's first choice, before agentd's own processes. */
const COMMAND_OOM_SCORE_ADJ = 500;

export type ReadResult = number | "again" | "eof";

function winsize(cols: number, rows: number): Uint16Array {
  // struct winsize { unsigned short ws_row, ws_col, ws_xpixel, ws_ypixel; }
  return new Uint16Array([rows, cols, 0, 0]);
}

/**
 * A child process whose controlling terminal is a fresh pty, and the master side we hold.
 * Every method is a thin, synchronous syscall wrapper; scheduling lives in EpollLoop/PtySession.
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
  ) {
    this.pidFdOpen = pidFd >= 0;
  }

  static spawn(spec: PtySpawnSpec): PtyProcess {
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
      const pid = nativeSpawn({
        path: spec.path,
        argv: spec.argv,
        env: spec.env,
        ...(spec.cwd === undefined ? {} : { cwd: spec.cwd }),
        stdio: { tty: slave },
        ...(spec.credentials ? { credentials: spec.credentials } : {}),
        ...(spec.cgroupProcs ? { cgroupProcs: spec.cgroupProcs } : {}),
        ...(spec.limits ? { limits: spec.limits } : {}),
        ...(spec.umask === undefined ? {} : { umask: spec.umask }),
        ...(spec.sandbox ? { sandbox: spec.sandbox } : {}),
        noNewPrivs: spec.noNewPrivs,
        oomScoreAdj: COMMAND_OOM_SCORE_ADJ,
      });
      c.fcntl(master, F_SETFL, c.fcntl(master, F_GETFL, 0) | O_NONBLOCK);
      const pidFd = c.syscall(SYS_PIDFD_OPEN, pid, 0);
      return new PtyProcess(pid, master, Number(pidFd), ttyName);
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
  signalGroup(signal: number): boolean {
    const c = libc();
    if (c.kill(-this.pid, signal) === 0) return true;
    return c.errno() !== ESRCH;
  }

  /** Whether a live (non-zombie) process is left in the group. */
  groupAlive(): boolean {
    if (!this.signalGroup(0)) return false;
    // kill() also reaches zombies, which an init that reaps slowly leaves behind; look for a live member.
    return hasLiveMember(this.pid);
  }

  /** Reaps the child if it has ended (waitpid WNOHANG); the status is kept, so later calls are cheap. */
  tryReap(): ExitStatus | undefined {
    if (this.exit) return this.exit;
    const c = libc();
    const status = new Int32Array(1);
    for (;;) {
      const result = c.waitpid(this.pid, status, WNOHANG);
      if (result === this.pid) {
        this.exit = decodeWaitStatus(status[0]!);
        return this.exit;
      }
      if (result === 0) return undefined;
      const errno = c.errno();
      if (errno === EINTR) continue;
      if (errno === ECHILD) {
        // Someone else reaped it: it has ended, but its status is lost.
        this.exit = { exitCode: -1 };
        return this.exit;
      }
      throw new PtyError("pty_io_error", `waitpid failed: ${errnoName(errno)}`);
    }
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
