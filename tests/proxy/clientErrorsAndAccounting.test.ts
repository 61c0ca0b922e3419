import { afterEach, describe, expect, test } from "bun:test";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { startProxy, type ProxyHarness } from "./proxyHarness.ts";
import { renderPrometheus } from "../../src/core/metrics/index.ts";

let upstreams: ScriptedUpstream[] = [];
let harness: ProxyHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  for (const upstream of upstreams) await upstream.close();
  upstreams = [];
});

function setup(count: number, config: Record<string, unknown> = {}): { ups: ScriptedUpstream[]; h: ProxyHarness } {
  const ups = Array.from({ length: count }, () => startScriptedUpstream());
  upstreams.push(...ups);
  const h = startProxy({ providers: ups.map((up, i) => ({ name: `p${i}`, base_url: up.url, priority: 10 - i })), config });
  harness = h;
  return { ups, h };
}

const metricLine = (text: string, prefix: string) => text.split("\n").find((line) => line.startsWith(prefix));

describe("a request no provider answered is counted under the provider that failed it", () => {
  test("the last provider tried and the real attempt count reach the log line, /metrics and the rollups", async () => {
    const { ups, h } = setup(2, { max_attempts: 2 });
    for (const up of ups) up.setDefault({ kind: "http_error", status: 503 });
    const error = await h.client.chat.completions
      .create({ model: "gpt-test", messages: [{ role: "user", content: "hi" }] })
      .catch((e) => e);
    expect(error.status).toBe(502);
    expect(ups[0]!.completionRequests()).toHaveLength(2);
    expect(ups[1]!.completionRequests()).toHaveLength(2);
    expect(h.events("proxy.request")).toHaveLength(1);
    expect(h.events("proxy.request")[0]).toMatchObject({ provider: "p1", outcome: "error", status: 502, attempts: 4 });
    const metrics = renderPrometheus(h.proxy.metricFamilies());
    expect(metricLine(metrics, 'agentd_proxy_requests_total{provider="p1",model="gpt-test",outcome="error"}')).toEndWith(" 1");
    expect(metrics).not.toContain('provider="none"');
    await h.proxy.close();
    const rows = h.db.query("SELECT provider, requests, errors FROM proxy_rollups").all();
    expect(rows).toEqual([{ provider: "p1", requests: 1, errors: 1 }]);
  });

  test("an upstream's 400 is counted under that provider with one attempt; all breakers open is still 'none'", async () => {
    const { ups, h } = setup(1, { breaker: { failures: 1 } });
    ups[0]!.enqueue({ kind: "http_error", status: 400, message: "messages must not be empty" }, { kind: "http_error", status: 500 });
    await h.client.chat.completions.create({ model: "gpt-test", messages: [] }).catch((e) => e);
    expect(h.events("proxy.request")[0]).toMatchObject({ provider: "p0", outcome: "error", status: 400, attempts: 1 });
    await h.client.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "hi" }] }).catch((e) => e);
    const refused = await h.client.chat.completions
      .create({ model: "gpt-test", messages: [{ role: "user", content: "hi" }] })
      .catch((e) => e);
    expect(refused.status).toBe(503);
    expect(h.events("proxy.request")[2]).toMatchObject({ provider: "none", outcome: "error", status: 503, attempts: 0 });
  });
});

describe("tool names are checked before anything is sent", () => {
  test("chat: an empty function name is a 400 invalid_request_error naming the tool index", async () => {
    const { ups, h } = setup(1);
    const error = await h.client.chat.completions
      .create({
        model: "gpt-test",
        messages: [{ role: "user", content: "hi" }],
        tools: [
          { type: "function", function: { name: "fine", parameters: { type: "object" } } },
          { type: "function", function: { name: "", parameters: { type: "object" } } },
        ],
      })
      .catch((e) => e);
    expect(error.status).toBe(400);
    expect(error.type).toBe("invalid_request_error");
    expect(error.code).toBe("invalid_request");
    expect(error.param).toBe("tools[1].function.name");
    expect(error.message).toContain("tools[1]");
    expect(ups[0]!.completionRequests()).toHaveLength(0);
  });

  test("responses: a name with a character outside [A-Za-z0-9_-] is refused the same way", async () => {
    const { ups, h } = setup(1);
    const error = await h.client.responses
      .create({
        model: "gpt-test",
        input: "hi",
        tools: [{ type: "function", name: "read file", parameters: { type: "object" }, strict: false }],
      })
      .catch((e) => e);
    expect(error.status).toBe(400);
    expect(error.type).toBe("invalid_request_error");
    expect(error.param).toBe("tools[0].name");
    expect(error.message).toContain('"read file"');
    expect(ups[0]!.completionRequests()).toHaveLength(0);
  });
});
