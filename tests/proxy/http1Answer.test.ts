import { describe, expect, test } from "bun:test";
import { type AnswerFlow, HeaderList, Http1Answer } from "../../src/proxy/upstream/http1Answer.ts";

/** A flow that records what the answer asked of the connection. */
function recordingFlow(): AnswerFlow & { calls: string[] } {
  const calls: string[] = [];
  return { calls, pause: () => calls.push("pause"), resume: () => calls.push("resume"), cancel: () => calls.push("cancel") };
}

const bytes = (text: string) => Buffer.from(text);

describe("HeaderList", () => {
  const headers = new HeaderList([
    ["x-request-id", "r1"],
    ["vary", "accept"],
    ["content-type", "text/event-stream"],
    ["vary", "origin"],
  ]);

  test("get is case-insensitive and joins a repeated header's values as Headers does", () => {
    expect(headers.get("X-Request-Id")).toBe("r1");
    expect(headers.get("vary")).toBe("accept, origin");
    expect(headers.get("retry-after")).toBeNull();
  });

  test("forEach gives each name once, in the order first seen, with its values joined", () => {
    const seen: string[] = [];
    headers.forEach((value, name) => {
      seen.push(`${name}=${value}`);
    });
    expect(seen).toEqual(["x-request-id=r1", "vary=accept, origin", "content-type=text/event-stream"]);
  });

  test("forEach without a repeated name, and past the pairwise check's bound, gives the same as Headers", () => {
    const of = (list: HeaderList) => {
      const seen: string[] = [];
      list.forEach((value, name) => {
        seen.push(`${name}=${value}`);
      });
      return seen;
    };
    const viaHeaders = (pairs: Array<[string, string]>) => {
      const seen: string[] = [];
      new Headers(pairs).forEach((value, name) => {
        seen.push(`${name}=${value}`);
      });
      return seen.sort();
    };
    const once: Array<[string, string]> = [
      ["a", "1"],
      ["b", "2"],
    ];
    expect(of(new HeaderList(once))).toEqual(["a=1", "b=2"]);
    const many: Array<[string, string]> = Array.from({ length: 30 }, (_, i) => [`x-h${i % 20}`, String(i)]);
    expect(of(new HeaderList(many)).sort()).toEqual(viaHeaders(many));
  });
});

describe("Http1Answer", () => {
  test("status and ok as a Response has them", () => {
    expect(new Http1Answer(204, [], recordingFlow()).ok).toBe(true);
    expect(new Http1Answer(429, [], recordingFlow()).ok).toBe(false);
    expect(new Http1Answer(301, [], recordingFlow()).ok).toBe(false);
  });

  test("a read takes every piece that came since the last one, as one; a waiting read gets the next piece", async () => {
    const flow = recordingFlow();
    const answer = new Http1Answer(200, [], flow).handOver();
    const reader = answer.reader();
    answer.push(bytes("ab"));
    answer.push(bytes("cd"));
    expect(Buffer.from((await reader.read()).value!).toString()).toBe("abcd");
    const waiting = reader.read();
    answer.push(bytes("ef"));
    expect(Buffer.from((await waiting).value!).toString()).toBe("ef");
    const last = reader.read();
    answer.end();
    expect((await last).done).toBe(true);
    expect((await reader.read()).done).toBe(true);
  });

  test("a failure after the answer began rejects the waiting read and every later one; after the end it changes nothing", async () => {
    const answer = new Http1Answer(200, [], recordingFlow()).handOver();
    const reader = answer.reader();
    const waiting = reader.read();
    answer.fail(new Error("reset"));
    await expect(waiting).rejects.toThrow("reset");
    await expect(reader.read()).rejects.toThrow("reset");

    const ended = new Http1Answer(200, [], recordingFlow()).handOver();
    ended.push(bytes("x"));
    ended.end();
    ended.fail(new Error("late"));
    expect(await ended.text()).toBe("x");
  });

  test("a reader that falls behind pauses the socket once the answer is handed over, and a read resumes it", async () => {
    const flow = recordingFlow();
    const answer = new Http1Answer(200, [], flow);
    // Held by the client (a non-streamed answer read whole): never paused, whatever its size.
    answer.push(Buffer.alloc(1 << 20));
    answer.push(Buffer.alloc(1));
    expect(flow.calls).toEqual([]);
    answer.handOver();
    expect(flow.calls).toEqual(["pause"]);
    expect((await answer.reader().read()).value!.length).toBe((1 << 20) + 1);
    expect(flow.calls).toEqual(["pause", "resume"]);
  });

  test("text() decodes UTF-8 split across pieces and drops a leading BOM, as Response.text() does", async () => {
    const answer = new Http1Answer(200, [], recordingFlow()).handOver();
    const whole = Buffer.from("\uFEFFünïcödé ✓");
    const text = answer.text();
    for (let i = 0; i < whole.length; i += 3) answer.push(whole.subarray(i, i + 3));
    answer.end();
    expect(await text).toBe("ünïcödé ✓");
    expect(await text).toBe(await new Response(whole).text());
  });

  test("text() of an answer that came whole before it was read decodes as Response.text() does, and empties it", async () => {
    const whole = Buffer.concat([Buffer.from("\uFEFFünïcödé ✓ "), Buffer.from([0xff]), Buffer.from(" end")]);
    const answer = new Http1Answer(200, [], recordingFlow());
    for (let i = 0; i < whole.length; i += 3) answer.push(whole.subarray(i, i + 3));
    answer.end();
    expect(answer.queuedBytes).toBe(whole.length);
    expect(await answer.text()).toBe(await new Response(whole).text());
    expect(answer.queuedBytes).toBe(0);
    const empty = new Http1Answer(204, [], recordingFlow());
    empty.end();
    expect(await empty.text()).toBe("");
    const failed = new Http1Answer(200, [], recordingFlow());
    failed.push(bytes("partial"));
    failed.fail(new Error("reset"));
    await expect(failed.text()).rejects.toThrow("reset");
  });

  test("takeWholeText gives the text at once only for a body that ended within the limit and was not taken", async () => {
    const whole = Buffer.from('\uFEFF{"choices":[]} ✓');
    const answer = new Http1Answer(200, [], recordingFlow());
    answer.push(whole.subarray(0, 5));
    expect(answer.takeWholeText(1024)).toBeUndefined();
    answer.push(whole.subarray(5));
    answer.end();
    expect(answer.takeWholeText(whole.length - 1)).toBeUndefined();
    expect(answer.takeWholeText(whole.length)).toBe(await new Response(whole).text());
    await expect(answer.text()).rejects.toThrow("text() already took it");

    const failed = new Http1Answer(200, [], recordingFlow());
    failed.push(bytes("partial"));
    failed.fail(new Error("reset"));
    expect(failed.takeWholeText(1024)).toBeUndefined();
    const read = new Http1Answer(200, [], recordingFlow());
    read.end();
    read.reader();
    expect(read.takeWholeText(1024)).toBeUndefined();
  });

  test("its reader says drained only once the body ended and every piece was read", async () => {
    const answer = new Http1Answer(200, [], recordingFlow()).handOver();
    const reader = answer.reader();
    answer.push(bytes("data: [DONE]\n\n"));
    expect(reader.drained).toBe(false);
    answer.end();
    expect(reader.drained).toBe(false);
    expect((await reader.read()).done).toBe(false);
    expect(reader.drained).toBe(true);
    expect((await reader.read()).done).toBe(true);
  });

  test("body is a stream of the same pieces, made once; cancelling it gives up the exchange", async () => {
    const flow = recordingFlow();
    const answer = new Http1Answer(200, [], flow).handOver();
    expect(answer.body).toBe(answer.body);
    answer.push(bytes("data: 1\n\n"));
    answer.end();
    expect(await new Response(answer.body).text()).toBe("data: 1\n\n");

    const cancelled = new Http1Answer(200, [], flow).handOver();
    await cancelled.body.cancel();
    expect(flow.calls.at(-1)).toBe("cancel");
  });
  test("the body has one taker, as a Response's has: a second is refused, and so is a read while one waits", async () => {
    const answer = new Http1Answer(200, [], recordingFlow()).handOver();
    const reader = answer.reader();
    expect(() => answer.reader()).toThrow("reader() already took it");
    expect(() => answer.body).toThrow("reader() already took it");
    await expect(answer.text()).rejects.toThrow("reader() already took it");
    const waiting = reader.read();
    await expect(reader.read()).rejects.toThrow("a read is already waiting");
    answer.push(bytes("x"));
    expect(Buffer.from((await waiting).value!).toString()).toBe("x");

    const read = new Http1Answer(200, [], recordingFlow()).handOver();
    read.end();
    expect(await read.text()).toBe("");
    await expect(read.text()).rejects.toThrow("text() already took it");
  });
});
