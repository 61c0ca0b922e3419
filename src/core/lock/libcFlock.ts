import { type FFIFunction, read, type Pointer } from "bun:ffi";
import { openLibc } from "../ffi/openLibc.ts";
import { AgentdError } from "../errors/index.ts";

/** Linux's values (x86_64 and aarch64 share them). */
export const O_RDWR = 0x2;
export const O_CREAT = 0x40;
export const O_CLOEXEC = 0x80000;
export const LOCK_EX = 2;
export const LOCK_NB = 4;
export const EINTR = 4;
export const EWOULDBLOCK = 11;

const SYMBOLS = {
  open: { args: ["ptr", "i32", "u32"], returns: "i32" },
  flock: { args: ["i32", "i32"], returns: "i32" },
  close: { args: ["i32"], returns: "i32" },
  __errno_location: { args: [], returns: "ptr" },
} as const satisfies Record<string, FFIFunction>;

export class LockError extends AgentdError {
  constructor(message: string) {
    super("lock_error", message);
  }
}

type Flock = {
  open(path: string, flags: number, mode: number): number;
  flock(fd: number, operation: number): number;
  close(fd: number): number;
  errno(): number;
};
let loaded: Flock | undefined;

/** libc's open, flock and close through bun:ffi, loaded on first use. */
export function libcFlock(): Flock {
  if (loaded) return loaded;
  if (process.platform !== "linux") throw new LockError(`The data dir lock needs Linux, not ${process.platform}`);
  let libc: ReturnType<typeof openLibc<typeof SYMBOLS>>["symbols"];
  try {
    libc = openLibc(SYMBOLS).symbols;
  } catch (error) {
    throw new LockError(`No usable libc for the data dir lock (${(error as Error).message})`);
  }
  // errno is thread-local; every FFI call runs on the JS thread, so its address never changes.
  const errnoAddress = libc.__errno_location() as Pointer;
  loaded = {
    open: (path, flags, mode) => libc.open(Buffer.from(`${path}\0`), flags, mode),
    flock: (fd, operation) => libc.flock(fd, operation),
    close: (fd) => libc.close(fd),
    errno: () => read.i32(errnoAddress, 0),
  };
  return loaded;
}
