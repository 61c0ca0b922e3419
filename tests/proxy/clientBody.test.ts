import { expect, test } from "bun:test";
import { readJsonObject } from "../../src/proxy/routes/requestBody.ts";

/** A request whose chunked body sends its first bytes and then nothing more. */
function trickling(): Request {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"model":'));
    },
  });
  return new Request("http://127.0.0.1/v1/chat/completions", { method: "POST", body });
}

test("a /v1 body that stops arriving is refused with 408 request_timeout, not waited for", async () => {
  const error = (await readJsonObject(trickling(), 1_000_000, 50).then(
    () => undefined,
    (e: unknown) => e,
  )) as { code?: string; status?: number } | undefined;
  expect(error?.code).toBe("request_timeout");
});

test("a whole body within the deadline is read", async () => {
  const request = new Request("http://127.0.0.1/v1/chat/completions", { method: "POST", body: '{"model":"m"}' });
  expect((await readJsonObject(request, 1000, 50)).body).toEqual({ model: "m" });
});
