import { networkInterfaces } from "node:os";
import { addressBytes, sameAddress } from "./procNet.ts";

/**
 * Whether a client address is one of this host's: loopback (all of 127/8, ::1) or an address of
 * one of its interfaces, read at each call since interfaces come and go. Asked only when no socket
 * of this host is the connection's client end; an address that cannot be parsed counts as this
 * host's, so that its request is the agent's.
 */
export function isThisHost(address: string, hostAddresses: readonly string[] = interfaceAddresses()): boolean {
  const bytes = addressBytes(address);
  if (!bytes) return true;
  const v4 = bytes.length === 4 ? bytes : isMapped(bytes) ? bytes.subarray(12) : undefined;
  if (v4?.[0] === 127) return true;
  if (bytes.length === 16 && bytes.every((b, i) => b === (i === 15 ? 1 : 0))) return true;
  return hostAddresses.some((text) => {
    const own = addressBytes(text);
    return own !== undefined && sameAddress(own, bytes);
  });
}

function isMapped(bytes: Uint8Array): boolean {
  return bytes.length === 16 && bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
}

function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).map((entry) => entry.address));
}
