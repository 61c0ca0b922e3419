import { FFIType, read, type FFIFunction, type Library, type Pointer } from "bun:ffi";
import { LIBC_CANDIDATES, openLibc } from "../core/ffi/openLibc.ts";
import { PtyError } from "./ptyErrors.ts";

/**
 * The libc functions the PTY layer calls through bun:ffi, loaded once per process.
 * Constants are Linux's (x86_64 and aarch64 share them); other platforms are refused at load.
 */

// glibc before 2.34 keeps openpty in libutil; musl and newer glibc have it in libc.
const OPENPTY_CANDIDATES = [...LIBC_CANDIDATES, "libutil.so.1"];

const LIBC_SYMBOLS = {
  ptsname_r: { args: ["i32", "ptr", "u64"], returns: "i32" },
  posix_spawn_file_actions_adddup2: { args: ["ptr", "i32", "i32"], returns: "i32" },
  waitpid: { args: ["i32", "ptr", "i32"], returns: "i32" },
  kill: { args: ["i32", "i32"], returns: "i32" },
  close: { args: ["i32"], returns: "i32" },
  read: { args: ["i32", "ptr", "u64"], returns: FFIType.i64_fast },
  write: { args: ["i32", "ptr", "u64"], returns: FFIType.i64_fast },
  fcntl: { args: ["i32", "i32", "i32"], returns: "i32" },
  ioctl: { args: ["i32", "u64", "ptr"], returns: "i32" },
  syscall: { args: ["i64", "i64", "i64"], returns: FFIType.i64_fast },
  epoll_create1: { args: ["i32"], returns: "i32" },
  epoll_ctl: { args: ["i32", "i32", "i32", "ptr"], returns: "i32" },
  epoll_wait: { args: ["i32", "ptr", "i32", "i32"], returns: "i32" },
  __errno_location: { args: [], returns: "ptr" },
} as const satisfies Record<string, FFIFunction>;

const OPENPTY_SYMBOLS = {
  openpty: { args: ["ptr", "ptr", "ptr", "ptr", "ptr"], returns: "i32" },
} as const satisfies Record<string, FFIFunction>;

export const O_NONBLOCK = 0x800;
export const F_SETFD = 2;
export const F_GETFL = 3;
export const F_SETFL = 4;
export const FD_CLOEXEC = 1;
export const WNOHANG = 1;
export const TIOCSWINSZ = 0x5414;
export const SYS_PIDFD_OPEN = 434;

export const EINTR = 4;
export const EIO = 5;
export const ESRCH = 3;
export const ECHILD = 10;
export const EAGAIN = 11;

export const SIGHUP = 1;
export const SIGKILL = 9;
export const SIGTERM = 15;

export const EPOLLIN = 0x1;
export const EPOLLOUT = 0x4;
export const EPOLLERR = 0x8;
export const EPOLLHUP = 0x10;
export const EPOLL_CTL_ADD = 1;
export const EPOLL_CTL_DEL = 2;
export const EPOLL_CTL_MOD = 3;
export const EPOLL_CLOEXEC = 0x80000;
// struct epoll_event is packed (12 bytes) on x86_64 only; elsewhere the u64 is aligned (16 bytes).
export const EPOLL_EVENT_SIZE = process.arch === "x64" ? 12 : 16;
export const EPOLL_DATA_OFFSET = process.arch === "x64" ? 4 : 8;

function openFirst<T extends Record<string, FFIFunction>>(candidates: readonly string[], symbols: T): Library<T> {
  try {
    return openLibc(symbols, candidates);
  } catch (error) {
    throw new PtyError("pty_unsupported", `No usable libc for PTY sessions (${(error as Error).message})`);
  }
}

function loadLibc() {
  if (process.platform !== "linux" || (process.arch !== "x64" && process.arch !== "arm64")) {
    throw new PtyError("pty_unsupported", `PTY sessions need Linux on x64 or arm64, not ${process.platform}/${process.arch}`);
  }
  const libc = openFirst(LIBC_CANDIDATES, LIBC_SYMBOLS).symbols;
  const { openpty } = openFirst(OPENPTY_CANDIDATES, OPENPTY_SYMBOLS).symbols;
  // errno is thread-local; every FFI call runs on the JS thread, so its address never changes.
  const errnoAddress = libc.__errno_location() as Pointer;
  return { ...libc, openpty, errno: (): number => read.i32(errnoAddress, 0) };
}

export type Libc = ReturnType<typeof loadLibc>;

let cached: Libc | undefined;

/** Loads libc on first use, so importing the module costs nothing on hosts that never open a PTY. */
export function libc(): Libc {
  cached ??= loadLibc();
  return cached;
}
