import { describe, expect, test } from "bun:test";
import { readBounded } from "../../src/proxy/upstream/boundedBody.ts";

function chunked(parts: string[]): { response: Response; pulled: () => number } {
  let index = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (index < parts.length) controller.enqueue(new TextEncoder().encode(parts[index++]!));
      else controller.close();
    },
  });
  return { response: new Response(body), pulled: () => index };
}

describe("reading an upstream body within a limit", () => {
  test("a body under the limit is read whole", async () => {
    expect(await readBounded(chunked(["ab", "cd"]).response, 10)).toEqual({ text: "abcd", truncated: false });
  });

  test("a chunked body is decoded as Response.text() decodes one: a leading byte order mark dropped, a character split across reads kept", async () => {
    const bytes = Buffer.from('\uFEFF{"text":"ünïcödé"}');
    let at = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= bytes.length) return controller.close();
        controller.enqueue(bytes.subarray(at, at + 3));
        at += 3;
      },
    });
    const read = await readBounded(new Response(body), 1024);
    expect(read).toEqual({ text: '{"text":"ünïcödé"}', truncated: false });
    expect(JSON.parse(read.text)).toEqual({ text: "ünïcödé" });
  });

  test("a chunked body past the limit stops being read at the limit", async () => {
    const { response, pulled } = chunked(["12345", "67890", "abcde", "fghij"]);
    expect(await readBounded(response, 7)).toEqual({ text: "1234567", truncated: true });
    expect(pulled()).toBeLessThan(4);
  });
});

describe("a body with a declared length", () => {
  // Asking a fetch answer for its body makes a stream of it, and its text is then read through that
  // stream: about 1 µs more a request (1–3 % of agentd's CPU in bench/compare.ts).
  test("is read as text without its body being asked for", async () => {
    const response = new Response('{"ok":true}', { headers: { "content-length": "11" } });
    let asked = 0;
    const watched = new Proxy(response, {
      get(target, key) {
        if (key === "body") asked++;
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    expect(await readBounded(watched, 1024)).toEqual({ text: '{"ok":true}', truncated: false });
    expect(asked).toBe(0);
  });

  test("over the limit is read chunk by chunk and cut at the limit", async () => {
    const response = new Response("x".repeat(100), { headers: { "content-length": "100" } });
    expect(await readBounded(response, 10)).toEqual({ text: "x".repeat(10), truncated: true });
  });
});
