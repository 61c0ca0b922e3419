import type { Destination } from "./destination.ts";

/** Where a hop stands; `fallback` is up without a remote agentd (commands over SSH exec with a pty). */
export type HopState = "connecting" | "connected" | "reconnecting" | "fallback" | "closed";

/** Which hop to reach and how: the target behind its jump hosts, the key to offer, whether a new host key is accepted. */
export interface HopSpec {
  name: string;
  target: Destination;
  via: Destination[];
  identity?: string;
  acceptNew: boolean;
}
