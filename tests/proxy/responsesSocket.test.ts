import { afterEach, describe, expect, test } from "bun:test";
import { type ClientPath, startPath, WIRES } from "./clientPaths.ts";

/**
 * GET /v1/responses upgraded to the Responses WebSocket, driven by a plain WebSocket client:
 * frames in, SSE events out as frames, HTTP errors as error events, hostile frames refused.
 */

let path: ClientPath | undefined;
let socket: WebSocket | undefined;

afterEach(async () => {
  socket?.close();
  socket = undefined;
  await path?.close();
  path = undefined;
});

type Frame = Record<string, any>;

/** A socket whose frames are queued as they arrive; `next` takes the first one, waiting if none. */
async function connect(baseURL: string): Promise<{ send(frame: unknown): void; next(): Promise<Frame>; closed: Promise<void> }> {
  const ws = new WebSocket(`${baseURL.replace("http", "ws")}/responses`, { headers: { authorization: "Bearer client-key" } } as never);
  socket = ws;
  const frames: Frame[] = [];
  const waiting: ((frame: Frame) => void)[] = [];
  ws.onmessage = (event) => {
    const frame = JSON.parse(String(event.data)) as Frame;
    const waiter = waiting.shift();
    if (waiter) waiter(frame);
    else frames.push(frame);
  };
  const closed = new Promise<void>((resolve) => (ws.onclose = () => resolve()));
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error("the WebSocket did not open"));
  });
  return {
    send: (frame) => ws.send(typeof frame === "string" ? frame : JSON.stringify(frame)),
    next: () => (frames.length > 0 ? Promise.resolve(frames.shift()!) : new Promise((resolve) => waiting.push(resolve))),
    closed,
  };
}

async function untilTerminal(conn: { next(): Promise<Frame> }): Promise<Frame[]> {
  const seen: Frame[] = [];
  for (;;) {
    const frame = await conn.next();
    seen.push(frame);
    if (["response.completed", "response.failed", "response.incomplete", "error"].includes(frame.type)) return seen;
  }
}

const create = (fields: Record<string, unknown>) => ({ type: "response.create", model: "gpt-x", stream: true, ...fields });

for (const wire of WIRES) {
  describe(`Responses WebSocket, ${wire} upstream`, () => {
    test("each response.create is streamed back as the Responses events, one frame each, and recorded", async () => {
      path = startPath(wire);
      path.up.enqueue({ kind: "text", chunks: ["Hel", "lo."] }, { kind: "text", text: "Again." });
      const conn = await connect(path.baseURL);
      conn.send(create({ input: "hi", store: false }));
      const first = await untilTerminal(conn);
      expect(first[0]!.type).toBe("response.created");
      expect(
        first
          .filter((f) => f.type === "response.output_text.delta")
          .map((f) => f.delta)
          .join(""),
      ).toBe("Hello.");
      const completed = first.at(-1)!;
      expect(completed.type).toBe("response.completed");
      expect(completed.response.output.at(-1).content[0].text).toBe("Hello.");
      // The same connection goes on from that response with only the new input, store off.
      conn.send(create({ input: [{ role: "user", content: "more" }], store: false, previous_response_id: completed.response.id }));
      expect((await untilTerminal(conn)).at(-1)!.type).toBe("response.completed");
      const second = JSON.stringify(path.up.completionRequests()[1]!.body);
      expect(second).toContain('"hi"');
      expect(second).toContain("Hello.");
      expect(second).toContain('"more"');
      expect(path.h.events("proxy.request").filter((r) => r.outcome === "ok")).toHaveLength(2);
    });
  });
}

describe("Responses WebSocket: errors and hostile clients", () => {
  test("an upstream rate limit is an error event with the status and Retry-After, as Codex reads an HTTP error", async () => {
    path = startPath("chat");
    path.up.setDefault({ kind: "http_error", status: 429, headers: { "retry-after": "1" }, message: "slow down" });
    const conn = await connect(path.baseURL);
    conn.send(create({ input: "hi" }));
    const error = await conn.next();
    expect(error).toMatchObject({ type: "error", status: 429, error: { code: "rate_limit_exceeded" } });
    expect(error.headers["retry-after"]).toBeDefined();
    expect(error.headers["x-request-id"]).toMatch(/^req_/);
  });

  test("bad frames get a 400 error event and the connection goes on", async () => {
    path = startPath("chat");
    const conn = await connect(path.baseURL);
    conn.send("{not json");
    expect(await conn.next()).toMatchObject({ type: "error", status: 400, error: { code: "invalid_request" } });
    conn.send({ type: "session.update" });
    expect(await conn.next()).toMatchObject({ type: "error", status: 400, error: { message: expect.stringContaining("session.update") } });
    conn.send(create({ input: "hi", previous_response_id: "resp_nowhere" }));
    expect(await conn.next()).toMatchObject({ type: "error", status: 404, error: { code: "previous_response_not_found" } });
    conn.send(create({ input: "hi" }));
    expect((await untilTerminal(conn)).at(-1)!.type).toBe("response.completed");
    expect(path.up.completionRequests()).toHaveLength(1);
  });

  test("a frame over the body limit is refused with 413, before any upstream call", async () => {
    path = startPath("chat", { max_body_bytes: 4096 });
    const conn = await connect(path.baseURL);
    conn.send(create({ input: "x".repeat(8192) }));
    expect(await conn.next()).toMatchObject({ type: "error", status: 413, error: { code: "body_too_large" } });
    expect(path.up.completionRequests()).toHaveLength(0);
  });

  test("a client that closes mid-answer has its upstream request cancelled", async () => {
    path = startPath("chat");
    path.up.enqueue({ kind: "stall_mid_stream", afterEvents: 1, reply: { kind: "text", chunks: ["a", "b", "c"] } });
    const conn = await connect(path.baseURL);
    conn.send(create({ input: "hi" }));
    expect((await conn.next()).type).toBe("response.created");
    socket!.close();
    await conn.closed;
    await path.up.waitForDisconnect(0);
  });

  test("GET /v1/responses without an upgrade is a clear 404, not a crash", async () => {
    path = startPath("chat");
    const response = await fetch(`${path.baseURL}/responses`);
    expect(response.status).toBe(404);
    expect(((await response.json()) as Frame).error.message).toContain("Upgrade: websocket");
  });
});
