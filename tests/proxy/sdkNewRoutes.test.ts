import { afterEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { startProxy, type ProviderInput, type ProxyHarness } from "./proxyHarness.ts";

/** The routes real clients call besides create, through the real openai SDK. */

const upstreams: ScriptedUpstream[] = [];
let harness: ProxyHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  for (const up of upstreams.splice(0)) await up.close();
});

function setup(providers: Partial<ProviderInput>[], options: { wires?: ("chat" | "responses")[]; models?: string[] }[] = []) {
  const ups = providers.map((_, i) => startScriptedUpstream(options[i] ?? {}));
  upstreams.push(...ups);
  const h = startProxy({
    providers: providers.map((p, i) => ({ name: `p${i}`, base_url: ups[i]!.url, ...p })),
    config: { max_attempts: 2 },
  });
  harness = h;
  return { ups, h };
}

describe("GET /v1/models/{id}", () => {
  test("a named or aliased model is found; a glob is checked against the upstream's list", async () => {
    const { h } = setup(
      [{ models: ["gpt-named"], aliases: { fast: "gpt-named" } }, { models: ["gpt-*"] }],
      [{}, { models: ["gpt-listed"] }],
    );
    expect(await h.client.models.retrieve("gpt-named")).toMatchObject({ id: "gpt-named", object: "model", owned_by: "p0" });
    expect(await h.client.models.retrieve("fast")).toMatchObject({ id: "fast", owned_by: "p0" });
    expect(await h.client.models.retrieve("gpt-listed")).toMatchObject({ id: "gpt-listed", owned_by: "p1" });
    const missing = await h.client.models.retrieve("gpt-unlisted").catch((e) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect(missing.code).toBe("model_not_found");
  });
});

describe("stored responses", () => {
  test("retrieve, list input items, cancel (400: not background), delete, then 404", async () => {
    const { h } = setup([{}], [{ wires: ["chat"] }]);
    const first = await h.client.responses.create({ model: "gpt-test", instructions: "Be brief.", input: "one" });
    const second = await h.client.responses.create({ model: "gpt-test", input: "two", previous_response_id: first.id });
    expect((await h.client.responses.retrieve(second.id)).output_text).toBe("ok");

    const items: any[] = [];
    for await (const item of h.client.responses.inputItems.list(second.id, { order: "asc" })) items.push(item);
    expect(items.map((item) => [item.type, item.role])).toEqual([
      ["message", "user"],
      ["message", "assistant"],
      ["message", "user"],
    ]);
    expect(items[0].content).toEqual([{ type: "input_text", text: "one" }]);
    expect(new Set(items.map((item) => item.id)).size).toBe(3);
    const page = await h.client.responses.inputItems.list(second.id, { limit: 1 });
    expect(page.data.map((item: any) => item.content[0].text)).toEqual(["two"]);
    expect(page.has_more).toBe(true);

    const cancel = await h.client.responses.cancel(second.id).catch((e) => e);
    expect(cancel).toBeInstanceOf(OpenAI.BadRequestError);
    expect(cancel.code).toBe("response_not_cancellable");

    await h.client.responses.delete(second.id);
    const gone = await h.client.responses.retrieve(second.id).catch((e) => e);
    expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
    expect(gone.code).toBe("response_not_found");
    expect(await h.client.responses.delete(second.id).catch((e) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    expect((await h.client.responses.retrieve(first.id)).id).toBe(first.id);
  });
});

describe("passthrough endpoints", () => {
  test("embeddings: sent as they came, retried and failed over like chat", async () => {
    const { ups, h } = setup([{ priority: 10 }, { wire: "responses" }]);
    ups[0]!.enqueue({ kind: "http_error", status: 500 }, { kind: "http_error", status: 503 });
    const { data, response } = await h.client.embeddings
      .create({ model: "text-embedding-3-small", input: ["a", "b"], encoding_format: "float" })
      .withResponse();
    expect(data.data.map((d) => d.embedding)).toEqual([
      [0, 0.5, -0.5],
      [1, 0.5, -0.5],
    ]);
    expect(response.headers.get("x-agentd-provider")).toBe("p1");
    expect(ups[0]!.completionRequests().map((r) => r.path)).toEqual(["/v1/embeddings", "/v1/embeddings"]);
    expect(ups[1]!.completionRequests()[0]!.body).toEqual({ model: "text-embedding-3-small", input: ["a", "b"], encoding_format: "float" });
    expect(h.events("proxy.request").at(-1)).toMatchObject({ provider: "p1", outcome: "ok", attempts: 3, tokens_in: 5 });
  });

  test("legacy completions, whole and streamed", async () => {
    const { ups, h } = setup([{}]);
    ups[0]!.enqueue({ kind: "text", text: "once upon" }, { kind: "text", chunks: ["a ", "time"] });
    const whole = await h.client.completions.create({ model: "gpt-test", prompt: "Tell" });
    expect(whole.choices[0]!.text).toBe("once upon");
    const stream = await h.client.completions.create({ model: "gpt-test", prompt: "Tell", stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? "";
    expect(text).toBe("a time");
    expect(ups[0]!.completionRequests().map((r) => r.path)).toEqual(["/v1/completions", "/v1/completions"]);
  });
});
