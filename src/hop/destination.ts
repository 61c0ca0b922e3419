import { HopError } from "./hopErrors.ts";

/** One SSH endpoint: the target or a jump host. */
export interface Destination {
  user: string;
  host: string;
  port: number;
}

const HOST = /^[A-Za-z0-9._-]+$/;

/**
 * Reads `user@host`, `user@host:port`, `host` or `user@[v6addr]:port`. A missing user is the
 * local one (as ssh does).
 */
export function parseDestination(text: string, defaultUser: string): Destination {
  const trimmed = text.trim();
  const at = trimmed.lastIndexOf("@");
  const user = at >= 0 ? trimmed.slice(0, at) : defaultUser;
  const rest = at >= 0 ? trimmed.slice(at + 1) : trimmed;
  let host: string;
  let portText: string | undefined;
  const bracketed = /^\[([0-9A-Fa-f:.]+)\](?::(\d+))?$/.exec(rest);
  if (bracketed) {
    host = bracketed[1]!;
    portText = bracketed[2];
  } else {
    const parts = rest.split(":");
    if (parts.length > 2) throw bad(text, "write an IPv6 address in brackets: user@[::1]:22");
    host = parts[0]!;
    portText = parts[1];
  }
  if (!user || /[\s@:/]/.test(user)) throw bad(text, "the user name is empty or has a space, @, : or /");
  if (!host || (!bracketed && !HOST.test(host))) throw bad(text, "expected user@host[:port]");
  const port = portText === undefined ? 22 : Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw bad(text, "the port must be a number from 1 to 65535");
  return { user, host, port };
}

function bad(text: string, why: string): HopError {
  return new HopError("hop_bad_destination", `Cannot read "${text}" as a destination: ${why}`);
}

export function formatDestination(destination: Destination): string {
  const host = destination.host.includes(":") ? `[${destination.host}]` : destination.host;
  return `${destination.user}@${host}${destination.port === 22 ? "" : `:${destination.port}`}`;
}

/** The name known_hosts uses for a host: `host` on port 22, `[host]:port` otherwise. */
export function knownHostsName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}
