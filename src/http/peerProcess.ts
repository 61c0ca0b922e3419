import { readdirSync, readFileSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { readProcStat } from "../core/process/index.ts";
import { holderAmongDescendants } from "./agentDescendants.ts";
import { processFdLinks } from "./processFds.ts";
import { addressBytes, parseProcNetTcp, sameAddress, socketInode } from "./procNet.ts";
import { diagLookup } from "./socketDiag.ts";

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
  /**
   * Take "no command agentd runs holds any socket" as a person without scanning every process: for
   * frequent routes (opening a terminal), not for decisions. A socket passed between two of agentd's
   * commands is always held or queued by one of them, so it is never quiet.
   */
  quietTreeIsPerson?: boolean;
  procRoot?: string;
  /** This host's own addresses (default: every interface's); loopback is always one of them. */
  hostAddresses?: readonly string[];
}

export interface Peer {
  address: string;
  port: number;
  /** The port the client connected to: with it, the client's socket is looked up exactly. */
  serverPort?: number;
}

interface ClientSocket {
  uid: number;
  /** 0 when no process holds it any more. */
  inode: number;
}

const MAX_ANCESTORS = 256;
const CHAIN_ATTEMPTS = 5;

/**
 * Who is on the other end of a loopback TCP connection. The client's socket is found by its
 * four-tuple (sock_diag, else /proc/net/tcp{,6}); a socket its client has already closed, whose
 * holder cannot be seen, counts as the agent. The holder is looked for first among the processes
 * below agentd (the worker, PTY children and theirs, what the supervisor adopted), then among every
 * process, by its parent chain: a person is a holder found outside agentd's tree, and a socket no
 * process holds (in flight between two of agentd's commands) is the agent. (no_new_privs is no sign of the
 * agent: browsers set it on their own sandboxed network process.)
 */
export function lookupPeer(peer: Peer, options: PeerLookupOptions): PeerVerdict {
  const proc = options.procRoot ?? "/proc";
  const wanted = addressBytes(peer.address);
  if (!wanted) return { agent: true, why: `unreadable peer address ${peer.address}` };
  const socket = clientSocket(peer, wanted, proc);
  if (!socket) {
    // No local socket is this connection's other end: a client on another host (a browser reaching a
    // non-loopback bind, Docker's gateway) is a person. An address of this host with no socket stays
    // the agent: the lookup failed, and failing closed refuses a decision rather than allowing one.
    if (!isHostAddress(wanted, options.hostAddresses ?? interfaceAddresses())) {
      return { agent: false, why: `a client on another host (${peer.address})` };
    }
    return { agent: true, why: "the connection is not in the kernel's socket table" };
  }
  if (socket.inode === 0) return { agent: true, why: "the client closed its end before it could be seen" };
  // Another user's process is not ours unless a sudo-approved command made it.
  if (socket.uid !== process.getuid?.()) return { agent: false, why: `held by another user (uid ${socket.uid})` };
  const below = holderAmongDescendants(socket.inode, options.roots, proc);
  if (typeof below === "object" && "holder" in below)
    return { agent: true, why: "descends from agentd", pid: below.holder, comm: below.comm };
  if (options.quietTreeIsPerson && typeof below === "object" && below.quiet)
    return { agent: false, why: "no command agentd runs holds a socket" };
  // A person only when a process outside agentd's tree is found holding the socket.
  return scanEveryProcess(socket.inode, options.roots, proc);
}

function clientSocket(peer: Peer, wanted: Uint8Array, proc: string): ClientSocket | undefined {
  if (peer.serverPort !== undefined && proc === "/proc") {
    // The address the client reached is not known here: its own address (the usual loopback case) first.
    for (const server of [wanted, addressBytes("127.0.0.1")!, addressBytes("::1")!]) {
      const found = diagLookup({ local: { address: wanted, port: peer.port }, remote: { address: server, port: peer.serverPort } });
      if (found && found !== "absent") return found;
    }
  }
  // The client's end of this very connection: a live socket (inode 0 is a closed one in TIME_WAIT
  // that may have used the same port) whose remote end is our listening port.
  return ["tcp", "tcp6"]
    .flatMap((file) => parseProcNetTcp(readText(`${proc}/net/${file}`) ?? ""))
    .find(
      (r) =>
        r.inode !== 0 &&
        r.local.port === peer.port &&
        sameAddress(r.local.address, wanted) &&
        (peer.serverPort === undefined || r.remote.port === peer.serverPort),
    );
}

/** Every process holding the socket, judged by its parent chain; none found counts as the agent. */
function scanEveryProcess(inode: number, roots: readonly number[], proc: string): PeerVerdict {
  let found = false;
  for (const pid of processIds(proc)) {
    if (!holdsInode(proc, pid, inode)) continue;
    found = true;
    if (descendsFrom(pid, roots, proc)) return { agent: true, why: "descends from agentd", pid, comm: readProcStat(pid, proc)?.comm };
  }
  if (found) return { agent: false, why: "not started by agentd" };
  return { agent: true, why: "the connection's process could not be found" };
}

/**
 * Whether `pid`'s parent chain reaches a root. A parent that exits while we walk re-parents `pid`
 * (to the supervisor, a subreaper, when it is agentd's): the walk starts again. A chain that keeps
 * breaking, or is deeper than MAX_ANCESTORS, counts as agentd's — failing closed refuses, never
 * allows; only a chain that ends at init (or pid 0) without meeting a root is someone else's.
 */
function descendsFrom(pid: number, roots: readonly number[], proc: string): boolean {
  for (let attempt = 0; attempt < CHAIN_ATTEMPTS; attempt++) {
    let current = pid;
    let broken = false;
    for (let i = 0; i < MAX_ANCESTORS; i++) {
      if (roots.includes(current)) return true;
      if (current <= 1) return false;
      const stat = readProcStat(current, proc);
      if (!stat) {
        broken = true;
        break;
      }
      current = stat.ppid;
    }
    if (!broken) return true;
  }
  return true;
}

function holdsInode(proc: string, pid: number, inode: number): boolean {
  return processFdLinks(proc, pid)?.some((link) => socketInode(link) === inode) ?? false;
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
