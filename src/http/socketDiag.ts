import type { Library } from "bun:ffi";
import { openLibc } from "../core/ffi/openLibc.ts";

/**
 * TCP sockets looked up through the kernel's sock_diag netlink interface: one by its four-tuple
 * (microseconds), or every one between two ports, filtered in the kernel, where reading
 * /proc/net/tcp walks the whole connection table as text (milliseconds on a host with much
 * memory). Linux only; undefined answers mean "ask /proc/net/tcp instead".
 */

const AF_INET = 2;
const AF_INET6 = 10;
const AF_NETLINK = 16;
const SOCK_DGRAM = 2;
const SOCK_CLOEXEC = 0o2000000;
const NETLINK_SOCK_DIAG = 4;
const SOCK_DIAG_BY_FAMILY = 20;
const NLM_F_REQUEST = 0x1;
const NLM_F_DUMP = 0x300;
const NLMSG_ERROR = 2;
const NLMSG_DONE = 3;
const IPPROTO_TCP = 6;
const MSG_DONTWAIT = 0x40;
const ALL_STATES = 0xffffffff;
/** 1 << TCP_ESTABLISHED. */
const ESTABLISHED_ONLY = 1 << 1;
const REQUEST_BYTES = 72;
/** nlmsghdr (16) + inet_diag_msg (72): family, state, timer, retrans, sockid (48), expires, rqueue, wqueue, uid, inode. */
const MESSAGE_BYTES = 88;
const ENOENT = 2;
/** Larger than any batch the kernel sends for a receive buffer this size: a batch never arrives truncated. */
const RECEIVE_BYTES = 32 * 1024;
/** A port-filtered dump is one batch or two; more means something else is going on. */
const MAX_BATCHES = 64;

const SYMBOLS = {
  socket: { args: ["i32", "i32", "i32"], returns: "i32" },
  sendto: { args: ["i32", "ptr", "u64", "i32", "ptr", "u32"], returns: "i64" },
  recv: { args: ["i32", "ptr", "u64", "i32"], returns: "i64" },
  close: { args: ["i32"], returns: "i32" },
} as const;

let libc: Library<typeof SYMBOLS>["symbols"] | null | undefined;

function loadLibc(): Library<typeof SYMBOLS>["symbols"] | null {
  if (libc !== undefined) return libc;
  try {
    libc = openLibc(SYMBOLS).symbols;
  } catch {
    // No libc to call: the lookup falls back to /proc/net/tcp.
    libc = null;
  }
  return libc;
}

export interface SocketEnd {
  /** 4 bytes for IPv4, 16 for IPv6 (an IPv4-mapped one for a dual-stack socket's IPv4 peer). */
  address: Uint8Array;
  port: number;
}

export interface SocketEnds {
  /** The socket's own end (for a client socket: the client's address and port). */
  local: SocketEnd;
  remote: SocketEnd;
}

export interface DiagSocket extends SocketEnds {
  /** The user whose process created the socket (idiag_uid), as /proc/net/tcp's uid column. */
  uid: number;
  /** 0 once no process holds the socket (closed by its owner, in FIN_WAIT or TIME_WAIT). */
  inode: number;
}

/** The request for one socket: nlmsghdr + inet_diag_req_v2 with its inet_diag_sockid. Pure. */
export function encodeDiagRequest(ends: SocketEnds): Uint8Array | undefined {
  const family = familyOf(ends.local.address, ends.remote.address);
  if (family === undefined) return undefined;
  const bytes = header(family, NLM_F_REQUEST, ends.local.port, ends.remote.port);
  bytes.set(unmap(ends.local.address, family), 28);
  bytes.set(unmap(ends.remote.address, family), 44);
  return bytes;
}

/**
 * The request for every socket of a family whose own port is `localPort` and remote port
 * `remotePort` (0: any), in the states of the `states` bit mask (bit n: TCP state n). Pure.
 */
export function encodePortsRequest(family: "ipv4" | "ipv6", localPort: number, remotePort: number, states = ALL_STATES): Uint8Array {
  return header(family === "ipv4" ? AF_INET : AF_INET6, NLM_F_REQUEST | NLM_F_DUMP, localPort, remotePort, states);
}

export type DiagReply = { sockets: DiagSocket[]; done: boolean } | "absent" | undefined;

/**
 * One receive's worth of replies: the sockets, and whether the answer is complete (NLMSG_DONE, or
 * the single reply to an exact lookup). "absent" for ENOENT, undefined for any other error or
 * anything unreadable. Pure.
 */
export function decodeDiagReplies(bytes: Uint8Array, length: number): DiagReply {
  const view = new DataView(bytes.buffer, bytes.byteOffset, length);
  const sockets: DiagSocket[] = [];
  for (let offset = 0; offset + 16 <= length; ) {
    const size = view.getUint32(offset, true);
    const type = view.getUint16(offset + 4, true);
    const multi = (view.getUint16(offset + 6, true) & 0x2) !== 0; // NLM_F_MULTI: part of a dump
    if (size < 16 || offset + size > length) return undefined;
    if (type === NLMSG_DONE) return { sockets, done: true };
    if (type === NLMSG_ERROR) return size >= 20 && view.getInt32(offset + 16, true) === -ENOENT ? "absent" : undefined;
    if (type !== SOCK_DIAG_BY_FAMILY || size < MESSAGE_BYTES) return undefined;
    sockets.push(decodeSocket(bytes.subarray(offset + 16, offset + size)));
    if (!multi) return { sockets, done: true };
    offset += (size + 3) & ~3;
  }
  return { sockets, done: false };
}

/** Looks the socket up; undefined when sock_diag is not available here (then read /proc/net/tcp). */
export function diagLookup(ends: SocketEnds): DiagSocket | "absent" | undefined {
  const request = encodeDiagRequest(ends);
  if (!request) return undefined;
  const reply = ask([request]);
  return reply === "absent" || reply === undefined ? reply : (reply[0] ?? "absent");
}

/** Every TCP socket, IPv4 and IPv6, from `localPort` to `remotePort`; undefined when sock_diag is not available. */
export function diagSocketsBetween(localPort: number, remotePort: number): DiagSocket[] | undefined {
  const reply = ask([encodePortsRequest("ipv4", localPort, remotePort), encodePortsRequest("ipv6", localPort, remotePort)]);
  return reply === "absent" ? undefined : reply;
}

/** Every established TCP socket, IPv4 and IPv6, whose own port is `localPort` (a server's side of its connections); undefined when sock_diag is not available. */
export function diagEstablishedOn(localPort: number): DiagSocket[] | undefined {
  const reply = ask([
    encodePortsRequest("ipv4", localPort, 0, ESTABLISHED_ONLY),
    encodePortsRequest("ipv6", localPort, 0, ESTABLISHED_ONLY),
  ]);
  return reply === "absent" ? undefined : reply;
}

/** Sends each request in turn on one netlink socket and gathers every answer; undefined on any failure. */
function ask(requests: readonly Uint8Array[]): DiagSocket[] | "absent" | undefined {
  const c = loadLibc();
  if (!c) return undefined;
  const fd = c.socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) return undefined;
  try {
    // sockaddr_nl { family = AF_NETLINK, pad, pid = 0 (the kernel), groups = 0 }
    const kernel = new Uint8Array(12);
    kernel[0] = AF_NETLINK;
    const buffer = new Uint8Array(RECEIVE_BYTES);
    const sockets: DiagSocket[] = [];
    for (const request of requests) {
      if (Number(c.sendto(fd, request, request.length, 0, kernel, kernel.length)) !== request.length) return undefined;
      // The kernel writes each batch before sendto (the first) or recv (the next) returns: a batch
      // that is not there yet is a failure, never a wait.
      for (let batch = 0; ; batch++) {
        if (batch === MAX_BATCHES) return undefined;
        const length = Number(c.recv(fd, buffer, buffer.length, MSG_DONTWAIT));
        const reply = length > 0 ? decodeDiagReplies(buffer, length) : undefined;
        if (reply === undefined || reply === "absent") return reply;
        sockets.push(...reply.sockets);
        if (reply.done) break;
      }
    }
    return sockets;
  } finally {
    c.close(fd);
  }
}

function header(family: number, flags: number, localPort: number, remotePort: number, states = ALL_STATES): Uint8Array {
  const bytes = new Uint8Array(REQUEST_BYTES);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, REQUEST_BYTES, true);
  view.setUint16(4, SOCK_DIAG_BY_FAMILY, true);
  view.setUint16(6, flags, true);
  view.setUint32(8, 1, true);
  bytes[16] = family;
  bytes[17] = IPPROTO_TCP;
  view.setUint32(20, states, true);
  view.setUint16(24, localPort, false);
  view.setUint16(26, remotePort, false);
  // The cookie: INET_DIAG_NOCOOKIE, look the socket up by its addresses alone.
  view.setUint32(64, 0xffffffff, true);
  view.setUint32(68, 0xffffffff, true);
  return bytes;
}

/** inet_diag_msg, after its nlmsghdr: the sockid's ports are in network order, its addresses 16 bytes each. */
function decodeSocket(message: Uint8Array): DiagSocket {
  const view = new DataView(message.buffer, message.byteOffset, message.length);
  const size = message[0] === AF_INET ? 4 : 16;
  return {
    local: { address: message.slice(8, 8 + size), port: view.getUint16(4, false) },
    remote: { address: message.slice(24, 24 + size), port: view.getUint16(6, false) },
    uid: view.getUint32(64, true),
    inode: view.getUint32(68, true),
  };
}

function familyOf(a: Uint8Array, b: Uint8Array): number | undefined {
  const v4 = (x: Uint8Array) => x.length === 4 || isMapped(x);
  if (v4(a) && v4(b)) return AF_INET;
  if (a.length === 16 && b.length === 16) return AF_INET6;
  return undefined;
}

function isMapped(x: Uint8Array): boolean {
  return x.length === 16 && x.subarray(0, 10).every((v) => v === 0) && x[10] === 0xff && x[11] === 0xff;
}

/** The 16 address bytes of inet_diag_sockid: IPv4 (mapped or not) in the first four. */
function unmap(address: Uint8Array, family: number): Uint8Array {
  const out = new Uint8Array(16);
  if (family === AF_INET) out.set(address.length === 4 ? address : address.subarray(12), 0);
  else out.set(address, 0);
  return out;
}
