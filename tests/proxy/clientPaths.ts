/**
 * The two paths every real client is tried on: agentd in front of a chat-only scripted upstream,
 * and in front of one that speaks only the Responses API. Each test starts one and closes it.
 */
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { startProxy, type ProxyHarness } from "./proxyHarness.ts";

export type Wire = "chat" | "responses";
export const WIRES: readonly Wire[] = ["chat", "responses"];

export interface ClientPath {
  up: ScriptedUpstream;
  h: ProxyHarness;
  /** agentd's OpenAI-compatible base URL, e.g. http://127.0.0.1:PORT/v1 */
  baseURL: string;
  close(): Promise<void>;
}

export function startPath(wire: Wire, config: Record<string, unknown> = {}): ClientPath {
  const up = startScriptedUpstream({ wires: [wire] });
  const h = startProxy({ providers: [{ name: wire, base_url: up.url, wire }], config: { max_attempts: 2, ...config } });
  return {
    up,
    h,
    baseURL: `${h.url}/v1`,
    close: async () => {
      await h.close();
      await up.close();
    },
  };
}
