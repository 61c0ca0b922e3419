import { errnoName } from "../core/process/index.ts";
import { ECHILD, EINTR, WNOHANG, libc } from "./libcBindings.ts";
import { PtyError } from "./ptyErrors.ts";
import { decodeWaitStatus, type ExitStatus } from "./waitStatus.ts";

/** Reaps a child of this process if it has ended (waitpid WNOHANG); undefined while it runs. */
export function reapChild(pid: number): ExitStatus | undefined {
  const c = libc();
  const status = new Int32Array(1);
  for (;;) {
    const result = c.waitpid(pid, status, WNOHANG);
    if (result === pid) return decodeWaitStatus(status[0]!);
    if (result === 0) return undefined;
    const errno = c.errno();
    if (errno === EINTR) continue;
    // Someone else reaped it: it has ended, but its status is lost.
    if (errno === ECHILD) return { exitCode: -1 };
    throw new PtyError("pty_io_error", `waitpid failed: ${errnoName(errno)}`);
  }
}
