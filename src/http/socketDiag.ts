import type { Library } from "bun:ffi";
import { openLibc } from "../core/ffi/openLibc.ts";

/**
 * One TCP socket looked up by its four-tuple through the kernel's sock_diag netlink interface:
 * an exact lookup costs microseconds, where reading /proc/net/tcp walks the whole connection hash
 * table (milliseconds on a host with much memory). Linux only; undefined answers mean "ask
 * /proc/net/tcp instead".
 */

const AF_INET = 2;
const AF_INET6 = 10;
const AF_NETLINK = 16;
const SOCK_DGRAM = 2;
const SOCK_CLOEXEC = 0o2000000;
const NETLINK_SOCK_DIAG = 4;
const SOCK_DIAG_BY_FAMILY = 20;
const NLM_F_REQUEST = 1;
const NLMSG_ERROR = 2;
const IPPROTO_TCP = 6;
const MSG_DONTWAIT = 0x40;
const REQUEST_BYTES = 72;
const ENOENT = 2;

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

export interface DiagSocket {
  uid: number;
  /** 0 once no process holds the socket (closed by its owner, in FIN_WAIT or TIME_WAIT). */
  inode: number;
}

export interface SocketEnds {
  /** The socket's own end (for a client socket: the client's address and port). */
  local: { address: Uint8Array; port: number };
  remote: { address: Uint8Array; port: number };
}

/** The request for one socket: nlmsghdr + inet_diag_req_v2 with its inet_diag_sockid. Pure. */
export function encodeDiagRequest(ends: SocketEnds): Uint8Array | undefined {
  const family = familyOf(ends.local.address, ends.remote.address);
  if (family === undefined) return undefined;
  const bytes = new Uint8Array(REQUEST_BYTES);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, REQUEST_BYTES, true);
  view.setUint16(4, SOCK_DIAG_BY_FAMILY, true);
  view.setUint16(6, NLM_F_REQUEST, true);
  view.setUint32(8, 1, true);
  bytes[16] = family;
  bytes[17] = IPPROTO_TCP;
  view.setUint32(20, 0xffffffff, true); // every state
  view.setUint16(24, ends.local.port, false);
  view.setUint16(26, ends.remote.port, false);
  bytes.set(unmap(ends.local.address, family), 28);
  bytes.set(unmap(ends.remote.address, family), 44);
  // The cookie: INET_DIAG_NOCOOKIE, look the socket up by its addresses alone.
  view.setUint32(64, 0xffffffff, true);
  view.setUint32(68, 0xffffffff, true);
  return bytes;
}

/** The answer: the socket's owner and inode, "absent" for ENOENT, undefined when unreadable. Pure. */
export function decodeDiagReply(bytes: Uint8Array, length: number): DiagSocket | "absent" | undefined {
  if (length < 16) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, length);
  const type = view.getUint16(4, true);
  if (type === NLMSG_ERROR) return length >= 20 && view.getInt32(16, true) === -ENOENT ? "absent" : undefined;
  if (type !== SOCK_DIAG_BY_FAMILY || length < 88) return undefined;
  return { uid: view.getUint32(80, true), inode: view.getUint32(84, true) };
}

/** Looks the socket up; undefined when sock_diag is not available here (then read /proc/net/tcp). */
export function diagLookup(ends: SocketEnds): DiagSocket | "absent" | undefined {
  const request = encodeDiagRequest(ends);
  const c = loadLibc();
  if (!request || !c) return undefined;
  const fd = c.socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) return undefined;
  try {
    // sockaddr_nl { family = AF_NETLINK, pad, pid = 0 (the kernel), groups = 0 }
    const kernel = new Uint8Array(12);
    kernel[0] = AF_NETLINK;
    if (Number(c.sendto(fd, request, request.length, 0, kernel, kernel.length)) !== request.length) return undefined;
    const reply = new Uint8Array(1024);
    // The kernel answers before sendto returns: a reply that is not there yet is a failure, never a wait.
    const length = Number(c.recv(fd, reply, reply.length, MSG_DONTWAIT));
    return length > 0 ? decodeDiagReply(reply, length) : undefined;
  } finally {
    c.close(fd);
  }
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
