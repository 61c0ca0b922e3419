/**
 * Which client carries an upstream call (proxy.upstream_client): agentd's own HTTP/1.1 client for a
 * plain-HTTP upstream by default, Bun's fetch when set to "fetch". Told apart on the upstream's side:
 * fetch offers compressed answers (Accept-Encoding) and names itself; agentd's client does neither.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { startProxy, type ProxyHarness } from "./proxyHarness.ts";

let upstream: ScriptedUpstream;
let harness: ProxyHarness;

afterEach(async () => {
  await harness?.close();
  await upstream?.close();
});

async function callThrough(config: Record<string, unknown>, stream: boolean) {
  upstream = startScriptedUpstream({ wires: ["chat"] });
  harness = startProxy({ providers: [{ name: "up", base_url: upstream.url }], config });
  upstream.enqueue({ kind: "text", text: "hello there" });
  const response = await fetch(`${harness.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-test", stream, messages: [{ role: "user", content: "hi" }] }),
  });
  const text = await response.text();
  return { status: response.status, text, seen: upstream.requests.at(-1)!.headers };
}

describe("the upstream client", () => {
  for (const stream of [false, true])
    test(`a plain-HTTP upstream is called by agentd's own client, and "fetch" switches back (${stream ? "streamed" : "whole"})`, async () => {
      const own = await callThrough({}, stream);
      expect(own.status).toBe(200);
      expect(own.text).toContain("hello there");
      expect(own.seen["accept-encoding"]).toBeUndefined();
      await harness.close();
      await upstream.close();
      const viaFetch = await callThrough({ upstream_client: "fetch" }, stream);
      expect(viaFetch.status).toBe(200);
      expect(viaFetch.text).toContain("hello there");
      expect(viaFetch.seen["accept-encoding"]).toBeDefined();
    });
});
