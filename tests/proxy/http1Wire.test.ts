import { describe, expect, test } from "bun:test";
import { heapStats } from "bun:jsc";
import {
  bodyFraming,
  ChunkedDecoder,
  Http1HeaderError,
  Http1WireError,
  idleReuseMs,
  keepsAlive,
  parseResponseHead,
  requestHead,
} from "../../src/proxy/upstream/http1Wire.ts";

describe("the request head", () => {
  test("names the path and query, the host and the body's length; the caller's framing headers are left out", () => {
    const head = requestHead(
      "POST",
      new URL("http://10.0.0.2:8000/v1/chat/completions?x=1"),
      {
        "content-type": "application/json",
        Host: "evil.example",
        "Content-Length": "1",
        "transfer-encoding": "chunked",
        connection: "close",
      },
      42,
    );
    expect(head).toBe(
      "POST /v1/chat/completions?x=1 HTTP/1.1\r\nhost: 10.0.0.2:8000\r\ncontent-length: 42\r\ncontent-type: application/json\r\n\r\n",
    );
  });

  test("a client's header holding a line break or NUL is refused: it would smuggle a header or a request upstream", () => {
    const url = new URL("http://127.0.0.1:1/v1");
    for (const value of ["a\r\nx-evil: 1", "a\nb", "a\rb", "a\0b"])
      expect(() => requestHead("POST", url, { "user-agent": value }, 0)).toThrow(Http1HeaderError);
    expect(() => requestHead("POST", url, { "bad name": "x" }, 0)).toThrow(Http1HeaderError);
    expect(() => requestHead("POST", url, { "x-ok:": "x" }, 0)).toThrow(Http1HeaderError);
  });

  test("a name judged once is still refused a bad value, and past the names kept in memory each name is judged anew", () => {
    const url = new URL("http://127.0.0.1:1/v1");
    expect(requestHead("POST", url, { "x-stainless-os": "Linux" }, 0)).toContain("x-stainless-os: Linux\r\n");
    expect(() => requestHead("POST", url, { "x-stainless-os": "Linux\r\nx-evil: 1" }, 0)).toThrow(Http1HeaderError);
    // A client sending ever new names fills what is kept; names are then checked each time.
    const many: Record<string, string> = {};
    for (let i = 0; i < 600; i++) many[`x-stainless-n${i}`] = "v";
    expect(
      requestHead("POST", url, many, 0)
        .split("\r\n")
        .filter((line) => line.startsWith("x-stainless-n")),
    ).toHaveLength(600);
    expect(() => requestHead("POST", url, { "x-stainless-n599 ": "v" }, 0)).toThrow(Http1HeaderError);
    expect(() => requestHead("POST", url, { "x-after full": "v" }, 0)).toThrow(Http1HeaderError);
    // A long name (not kept) is judged every time, as any other.
    const long = `x-stainless-${"a".repeat(10_000)}`;
    expect(requestHead("POST", url, { [long]: "v" }, 0)).toContain(`${long}: v\r\n`);
    expect(() => requestHead("POST", url, { [`${long} `]: "v" }, 0)).toThrow(Http1HeaderError);
    expect(() => requestHead("POST", url, { [long]: "v\n" }, 0)).toThrow(Http1HeaderError);
    expect(requestHead("POST", url, { "Transfer-Encoding": "chunked", "x-late": "1" }, 3)).toBe(
      "POST /v1 HTTP/1.1\r\nhost: 127.0.0.1:1\r\ncontent-length: 3\r\nx-late: 1\r\n\r\n",
    );
  });
});

describe("the answer's head", () => {
  const head = (text: string) => Buffer.from(text, "latin1");

  test("is read once its blank line is in; names are lower-cased, values trimmed, repeats kept", () => {
    expect(parseResponseHead(head("HTTP/1.1 200 OK\r\nContent-Type: text/plain"), 1024)).toBeUndefined();
    const text = "HTTP/1.1 429 Too Many\r\nRetry-After:  3 \r\nSet-Cookie: a\r\nset-cookie: b\r\n\r\nbody";
    const parsed = parseResponseHead(head(text), 1024);
    expect(parsed).toEqual({
      status: 429,
      headers: [
        ["retry-after", "3"],
        ["set-cookie", "a"],
        ["set-cookie", "b"],
      ],
      length: text.length - "body".length,
      http10: false,
    });
    expect(parseResponseHead(head("HTTP/1.0 200 OK\r\n\r\n"), 1024)?.http10).toBe(true);
  });

  test("a name read before is lower-cased the same however it is spelt, and a bad value after it is still refused", () => {
    for (const spelt of ["Content-Type", "CONTENT-TYPE", "content-type", "Content-Type "])
      expect(parseResponseHead(head(`HTTP/1.1 200 OK\r\n${spelt}: text/plain\r\n\r\n`), 1024)?.headers).toEqual([
        ["content-type", "text/plain"],
      ]);
    expect(() => parseResponseHead(head("HTTP/1.1 200 OK\r\nContent-Type: a\0b\r\n\r\n"), 1024)).toThrow(Http1WireError);
    expect(() => parseResponseHead(head("HTTP/1.1 200 OK\r\nContent Type: a\r\n\r\n"), 1024)).toThrow(/invalid header line/);
  });

  test("a name kept from an answer does not keep its head: an upstream's big heads with new names each time are let go", () => {
    const pad = "a".repeat(60_000);
    Bun.gc(true);
    const before = heapStats().heapSize;
    for (let i = 0; i < 600; i++) {
      const name = `x-upstream-name-${i}`;
      expect(parseResponseHead(head(`HTTP/1.1 200 OK\r\n${name}: v\r\nx-pad: ${pad}\r\n\r\n`), 64 * 1024)?.headers[0]).toEqual([name, "v"]);
    }
    Bun.gc(true);
    // 600 heads of 60 KB held would be 36 MB; the names alone are a few KB.
    expect(heapStats().heapSize - before).toBeLessThan(8_000_000);
  });

  test("an oversized, non-HTTP or nameless head is refused", () => {
    expect(() => parseResponseHead(head(`HTTP/1.1 200 OK\r\nx: ${"a".repeat(2000)}`), 1024)).toThrow(Http1WireError);
    expect(() => parseResponseHead(head(`HTTP/1.1 200 OK\r\nx: ${"a".repeat(2000)}\r\n\r\n`), 1024)).toThrow(Http1WireError);
    expect(() => parseResponseHead(head("SSH-2.0-OpenSSH\r\n\r\n"), 1024)).toThrow(/not HTTP\/1.1/);
    expect(() => parseResponseHead(head("HTTP/1.1 200 OK\r\n: x\r\n\r\n"), 1024)).toThrow(/without a name/);
  });
});

describe("how the body ends", () => {
  test("chunked outranks a length; no framing means at close; 204 and 304 have none", () => {
    expect(
      bodyFraming(200, [
        ["content-length", "5"],
        ["transfer-encoding", "chunked"],
      ]),
    ).toEqual({ kind: "chunked" });
    expect(bodyFraming(200, [["transfer-encoding", "gzip"]])).toEqual({ kind: "close" });
    expect(bodyFraming(200, [["content-length", "12"]])).toEqual({ kind: "length", bytes: 12 });
    expect(bodyFraming(200, [])).toEqual({ kind: "close" });
    expect(bodyFraming(204, [["content-length", "12"]])).toEqual({ kind: "none" });
    expect(bodyFraming(304, [])).toEqual({ kind: "none" });
  });

  test("conflicting or malformed lengths are refused", () => {
    expect(() =>
      bodyFraming(200, [
        ["content-length", "5"],
        ["content-length", "6"],
      ]),
    ).toThrow(Http1WireError);
    expect(() => bodyFraming(200, [["content-length", "-1"]])).toThrow(Http1WireError);
    expect(() => bodyFraming(200, [["content-length", "1e3"]])).toThrow(Http1WireError);
  });

  test("the connection is kept unless the answer says close or ends at close", () => {
    expect(keepsAlive([], { kind: "length", bytes: 1 })).toBe(true);
    expect(keepsAlive([["connection", "Close"]], { kind: "length", bytes: 1 })).toBe(false);
    expect(keepsAlive([], { kind: "close" })).toBe(false);
    // HTTP/1.0 closes unless it says otherwise.
    expect(keepsAlive([], { kind: "length", bytes: 1 }, true)).toBe(false);
    expect(keepsAlive([["connection", "Keep-Alive"]], { kind: "length", bytes: 1 }, true)).toBe(true);
  });

  test("an idle connection is reused for the server's Keep-Alive timeout less a second, capped; without one, briefly over HTTP and long over TLS", () => {
    expect(idleReuseMs([["keep-alive", "timeout=5, max=100"]], false)).toBe(4_000);
    expect(idleReuseMs([["keep-alive", 'max=100; Timeout = "30"']], true)).toBe(29_000);
    expect(idleReuseMs([["keep-alive", "timeout=1"]], true)).toBe(0);
    expect(idleReuseMs([["keep-alive", "timeout=0"]], false)).toBe(0);
    expect(idleReuseMs([["keep-alive", "timeout=3600"]], false)).toBe(60_000);
    expect(idleReuseMs([["keep-alive", "max=5"]], false)).toBe(4_000);
    expect(idleReuseMs([], false)).toBe(4_000);
    expect(idleReuseMs([], true)).toBe(60_000);
  });

  test("the last transfer coding decides; chunked with a length too is not reused (RFC 9112 §6.3: it may be a smuggling attempt)", () => {
    const both: Array<[string, string]> = [
      ["transfer-encoding", "chunked"],
      ["transfer-encoding", "gzip"],
    ];
    expect(bodyFraming(200, both)).toEqual({ kind: "close" });
    const smuggled: Array<[string, string]> = [
      ["content-length", "5"],
      ["transfer-encoding", "chunked"],
    ];
    expect(bodyFraming(200, smuggled)).toEqual({ kind: "chunked" });
    expect(keepsAlive(smuggled, { kind: "chunked" })).toBe(false);
  });
});

describe("chunked bodies", () => {
  const events = ["data: one\n\n", "data: two, with ünïcödé\n\n", "x".repeat(300)];
  const wire = Buffer.from(
    `${events.map((e, i) => `${Buffer.byteLength(e).toString(16)}${i === 1 ? ";name=value" : ""}\r\n${e}\r\n`).join("")}0\r\nx-trailer: t\r\n\r\nNEXT`,
  );
  const original = Buffer.from(events.join(""));

  function decodeIn(pieces: Buffer[]): { body: Buffer; rest: Buffer | undefined; done: boolean } {
    const decoder = new ChunkedDecoder();
    const body: Buffer[] = [];
    let rest: Buffer | undefined;
    for (const piece of pieces) {
      const out = decoder.push(piece);
      body.push(...out.body);
      rest = out.rest ?? rest;
    }
    return { body: Buffer.concat(body), rest, done: decoder.done };
  }

  test("decode to the same bytes however the wire is split, extensions and trailers skipped, what follows kept", () => {
    for (let cut = 1; cut < wire.length; cut++) {
      const out = decodeIn([wire.subarray(0, cut), wire.subarray(cut)]);
      expect(out.body.equals(original)).toBe(true);
      expect(out.done).toBe(true);
      expect(String(out.rest)).toBe(cut <= wire.length - 4 ? "NEXT" : wire.subarray(cut).toString());
    }
    const byteByByte = decodeIn([...wire].map((byte) => Buffer.from([byte])));
    expect(byteByByte.body.equals(original)).toBe(true);
  });

  test("broken framing is refused: a size that is not hex or too long, data longer than its size, an endless extension", () => {
    expect(() => new ChunkedDecoder().push(Buffer.from("zz\r\n"))).toThrow(Http1WireError);
    expect(() => new ChunkedDecoder().push(Buffer.from("\r\n"))).toThrow(Http1WireError);
    expect(() => new ChunkedDecoder().push(Buffer.from("1234567890abc\r\n"))).toThrow(/12 hex digits/);
    expect(() => new ChunkedDecoder().push(Buffer.from("2\r\nabc\r\n"))).toThrow(/CRLF/);
    expect(() => new ChunkedDecoder().push(Buffer.from(`1;${"e".repeat(5000)}`))).toThrow(/too long/);
  });
});
