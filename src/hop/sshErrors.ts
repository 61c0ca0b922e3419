import type { EventEmitter } from "node:events";
import { createLogger, type Logger } from "../core/log/index.ts";

const defaultLog = createLogger("hop.ssh");

/**
 * ssh2 clients, channels and SFTP handles may emit `error` at any point of their life, also after
 * they closed (a reset socket, then "Connection lost before handshake" when it closes), and an
 * `error` nobody listens to ends the process. This listener stays for the emitter's whole life; it
 * only records. The caller's own listeners decide what an error means while it still matters.
 */
export function keepErrorListener(
  emitter: EventEmitter,
  what: string,
  fields: Record<string, unknown> = {},
  log: Logger = defaultLog,
): void {
  emitter.on("error", (error: unknown) => log.debug("hop.ssh_error", { what, ...fields, error }));
}
