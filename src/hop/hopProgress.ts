import { type Destination, formatDestination } from "./destination.ts";

export type HopStep = "connect" | "probe" | "upload" | "start" | "tunnel" | "ready";

/** One step of opening a hop, as the CLI and the tool executor show it. */
export interface HopProgress {
  step: HopStep;
  message: string;
  bytes?: number;
  total?: number;
  elapsed_ms?: number;
}

/** The first step's message: the whole chain, jump hosts first. */
export function connectingMessage(chain: readonly Destination[]): string {
  return `connecting to ${chain.map(formatDestination).join(" → ")}`;
}

/** The last step's message: the remote agentd's version, or why the hop runs in fallback mode. */
export function readyMessage(hop: string, mode: "agentd" | "fallback" | null, version: string | null, fallbackReason?: string): string {
  return mode === "agentd" ? `hop ${hop} is up (agentd ${version})` : `hop ${hop} is up in fallback mode: ${fallbackReason}`;
}
