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

  test("a chunked body past the limit stops being read at the limit", async () => {
    const { response, pulled } = chunked(["12345", "67890", "abcde", "fghij"]);
    expect(await readBounded(response, 7)).toEqual({ text: "1234567", truncated: true });
    expect(pulled()).toBeLessThan(4);
  });
});
