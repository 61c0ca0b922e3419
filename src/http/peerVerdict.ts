/** What is known of a request's client, gathered by peerFacts.ts. */
export type PeerFacts =
  /** Served through app.fetch without a socket: the worker's own tools (the agent). */
  | { kind: "in_process" }
  /**
   * A TCP connection. `socket` is the client's own end as this host's kernel lists it, and
   * `thisHost` whether the client's address is one of this host's; both left out when not looked up.
   */
  | { kind: "connection"; address: string; socket?: ClientSocket; thisHost?: boolean };

/**
 * The client's socket as the kernel lists it. "absent": no socket of this host is the connection's
 * client end; "ambiguous": several sockets could be, and they do not agree (only a lookup that
 * cannot see the address the client reached can say so).
 */
export type ClientSocket = { uid: number; inode: number } | "absent" | "ambiguous";

export interface PeerVerdict {
  /** The agent: a command agentd runs, or agentd serving its own tools. */
  agent: boolean;
  /** Why, for the log line and the error message. */
  why: string;
  uid?: number;
}

/**
 * Whether a request comes from the agent. The kernel sets a socket's uid from its creator, and a
 * command cannot make a socket as another user: a socket of the command user is the agent, any
 * other user's is not. Whatever cannot be told on this host fails closed. Pure.
 */
export function peerVerdict(facts: PeerFacts, commandUid: number | undefined): PeerVerdict {
  if (facts.kind === "in_process") return { agent: true, why: "served in-process, without a connection" };
  // Without a command user of its own, commands run as agentd's user and their sockets look like a person's.
  if (commandUid === undefined) return { agent: false, why: "no separate command user: the peer's uid tells nothing" };
  const socket = facts.socket ?? "absent";
  if (socket === "absent") {
    // No socket here: a client on another host (a browser reaching a non-loopback bind), unless
    // the address is this host's, where the lookup must have failed.
    if (facts.thisHost === false) return { agent: false, why: `a client on another host (${facts.address})` };
    return { agent: true, why: "the connection is not in the kernel's socket table" };
  }
  if (socket === "ambiguous") return { agent: true, why: "sockets of different users, or a closed one, could be the connection" };
  // A socket no process holds any more reports no owner to trust: TIME_WAIT ones say uid 0.
  if (socket.inode === 0) return { agent: true, why: "the client closed its end before it could be seen", uid: socket.uid };
  if (socket.uid === commandUid)
    return { agent: true, why: `the client's socket is the command user's (uid ${socket.uid})`, uid: socket.uid };
  return { agent: false, why: `the client's socket is uid ${socket.uid}'s, not the command user's`, uid: socket.uid };
}
