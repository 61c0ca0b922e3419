import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { readProcStat } from "../core/process/index.ts";
import { addressBytes, parseProcNetTcp, sameAddress, socketInode } from "./procNet.ts";

export interface PeerVerdict {
  /** True when the connection's client process is agentd or was started by it (or cannot be told apart). */
  agent: boolean;
  /** Why, for the log line. */
  why: string;
  pid?: number;
  comm?: string;
}

export interface PeerLookupOptions {
  /** The worker and supervisor pids: a process whose parent chain reaches one of them is agentd's. */
  roots: readonly number[];
  procRoot?: string;
  /** This host's own addresses (default: every interface's); loopback is always one of them. */
  hostAddresses?: readonly string[];
}

const MAX_ANCESTORS = 256;

/**
 * Who is on the other end of a loopback TCP connection: the client socket is the row of
 * /proc/net/tcp{,6} whose local end is the peer's address and port; the processes holding
 * its inode are found in /proc/<pid>/fd. A holder descended from agentd (the worker, PTY
 * children and theirs, the supervisor's children) is the agent. A socket of our own user whose
 * holder cannot be found is treated as the agent. (no_new_privs is no sign of the agent: browsers
 * set it on their own sandboxed network process.)
 */
export function lookupPeer(peer: { address: string; port: number; serverPort?: number }, options: PeerLookupOptions): PeerVerdict {
  const proc = options.procRoot ?? "/proc";
  const wanted = addressBytes(peer.address);
  if (!wanted) return { agent: true, why: `unreadable peer address ${peer.address}` };
  // The client's end of this very connection: a live socket (inode 0 is a closed one in TIME_WAIT
  // that may have used the same port) whose remote end is our listening port.
  const row = ["tcp", "tcp6"]
    .flatMap((file) => parseProcNetTcp(readText(`${proc}/net/${file}`) ?? ""))
    .find(
      (r) =>
        r.inode !== 0 &&
        r.local.port === peer.port &&
        sameAddress(r.local.address, wanted) &&
        (peer.serverPort === undefined || r.remote.port === peer.serverPort),
    );
  if (!row) {
    // No local socket is this connection's other end: a client on another host (a browser reaching a
    // non-loopback bind, Docker's gateway) is a person. An address of this host with no socket stays
    // the agent: the lookup failed, and failing closed refuses a decision rather than allowing one.
    if (!isHostAddress(wanted, options.hostAddresses ?? interfaceAddresses())) {
      return { agent: false, why: `a client on another host (${peer.address})` };
    }
    return { agent: true, why: "the connection is not in /proc/net/tcp" };
  }
  let found = false;
  for (const pid of processIds(proc)) {
    if (!holdsInode(proc, pid, row.inode)) continue;
    found = true;
    const comm = readProcStat(pid, proc)?.comm;
    if (descendsFrom(pid, options.roots, proc)) return { agent: true, why: "descends from agentd", pid, comm };
  }
  if (found) return { agent: false, why: "not started by agentd" };
  // Another user's process is hidden from us: it is not ours unless a sudo-approved command made it.
  if (row.uid !== process.getuid?.()) return { agent: false, why: `held by another user (uid ${row.uid})` };
  return { agent: true, why: "the connection's process could not be found" };
}

function descendsFrom(pid: number, roots: readonly number[], proc: string): boolean {
  let current = pid;
  for (let i = 0; i < MAX_ANCESTORS && current > 1; i++) {
    if (roots.includes(current)) return true;
    const stat = readProcStat(current, proc);
    if (!stat) return false;
    current = stat.ppid;
  }
  return false;
}

function holdsInode(proc: string, pid: number, inode: number): boolean {
  let fds: string[];
  try {
    fds = readdirSync(`${proc}/${pid}/fd`);
  } catch {
    return false;
  }
  for (const fd of fds) {
    try {
      if (socketInode(readlinkSync(`${proc}/${pid}/fd/${fd}`)) === inode) return true;
    } catch {
      // The fd closed while we looked.
    }
  }
  return false;
}

function processIds(proc: string): number[] {
  try {
    return readdirSync(proc)
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return [];
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).map((entry) => entry.address));
}

function isHostAddress(address: Uint8Array, host: readonly string[]): boolean {
  const mapped = address.length === 16 && address.subarray(0, 10).every((b) => b === 0) && address[10] === 0xff && address[11] === 0xff;
  const v4 = address.length === 4 ? address : mapped ? address.subarray(12) : undefined;
  if (v4?.[0] === 127) return true;
  if (address.length === 16 && address.every((b, i) => b === (i === 15 ? 1 : 0))) return true;
  return host.some((text) => {
    const bytes = addressBytes(text);
    return bytes !== undefined && sameAddress(bytes, address);
  });
}
