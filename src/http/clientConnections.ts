import { readFileSync } from "node:fs";
import { type DiagSocket, diagEstablishedOn } from "./socketDiag.ts";

const ESTABLISHED = "01";
/** /proc/net/tcp is read at most this often: 4,000 sockets are 600 kB of text. */
const CACHE_MS = 250;

/**
 * Open TCP connections to the server's port, per client address, as the kernel lists them: through
 * sock_diag (filtered by port in the kernel), else in /proc/net/tcp and tcp6 (the whole table as
 * text, read and split here). Bun.serve tells no one when a connection opens or closes, and idle
 * keep-alive sockets never reach a handler; the kernel's table sees them all.
 */
export class ClientConnections {
  private counts = new Map<string, number>();
  private readAt = Number.NEGATIVE_INFINITY;
  private most = 0;

  constructor(
    private port: number,
    private readonly tables: readonly string[] = ["/proc/net/tcp", "/proc/net/tcp6"],
    /** The kernel's own list; undefined answers (no sock_diag here) fall back to the tables. */
    private readonly established: (port: number) => DiagSocket[] | undefined = diagEstablishedOn,
  ) {}

  /** The port actually bound (asked for port 0, the kernel chose). */
  listenOn(port: number): void {
    this.port = port;
    this.readAt = Number.NEGATIVE_INFINITY;
  }

  count(address: string): number {
    return this.fresh().get(normalise(address)) ?? 0;
  }

  /** The most connections any one address holds: at or under a limit, no address is over it. */
  busiest(): number {
    this.fresh();
    return this.most;
  }

  private fresh(): Map<string, number> {
    const now = performance.now();
    if (now - this.readAt > CACHE_MS) {
      this.counts = this.read();
      this.most = 0;
      for (const n of this.counts.values()) if (n > this.most) this.most = n;
      this.readAt = now;
    }
    return this.counts;
  }

  private read(): Map<string, number> {
    const counts = new Map<string, number>();
    const sockets = this.established(this.port);
    if (sockets) {
      for (const socket of sockets) {
        const address = normalise(formatAddress(socket.remote.address));
        counts.set(address, (counts.get(address) ?? 0) + 1);
      }
      return counts;
    }
    const port = this.port.toString(16).toUpperCase().padStart(4, "0");
    for (const table of this.tables) {
      let text: string;
      try {
        text = readFileSync(table, "latin1");
      } catch {
        continue; // no IPv6, or no /proc: nothing is counted, nothing refused
      }
      for (const line of text.split("\n").slice(1)) {
        const [, local, remote, state] = line.trim().split(/\s+/, 4);
        if (state !== ESTABLISHED || !local?.endsWith(`:${port}`) || !remote) continue;
        const address = normalise(decodeAddress(remote.slice(0, remote.indexOf(":"))));
        counts.set(address, (counts.get(address) ?? 0) + 1);
      }
    }
    return counts;
  }
}

/** The kernel writes addresses as 32-bit words in host (little-endian) order. */
function decodeAddress(hex: string): string {
  const bytes: number[] = [];
  for (let word = 0; word < hex.length; word += 8)
    for (let i = 6; i >= 0; i -= 2) bytes.push(Number.parseInt(hex.slice(word + i, word + i + 2), 16));
  return formatAddress(bytes);
}

/** 4 bytes as dotted IPv4, 16 as eight hex groups (normalise() gives the one spelling). */
function formatAddress(bytes: ArrayLike<number>): string {
  if (bytes.length === 4) return Array.from(bytes).join(".");
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return groups.join(":");
}

/** One spelling per address: IPv4 in IPv6 (::ffff:1.2.3.4) as IPv4, IPv6 fully expanded. */
function normalise(address: string): string {
  const mapped = /^(?:0:0:0:0:0:ffff:|::ffff:)(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!address.includes(":")) return address;
  const [head = "", tail = ""] = address.toLowerCase().split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = address.includes("::") ? [...left, ...Array(8 - left.length - right.length).fill("0"), ...right] : left;
  const expanded = groups.map((group) => Number.parseInt(group, 16).toString(16)).join(":");
  const v4 = /^0:0:0:0:0:ffff:([0-9a-f]+):([0-9a-f]+)$/.exec(expanded);
  if (!v4) return expanded;
  const hi = Number.parseInt(v4[1]!, 16);
  const lo = Number.parseInt(v4[2]!, 16);
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join(".");
}
