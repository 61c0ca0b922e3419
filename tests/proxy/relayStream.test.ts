import { describe, expect, test } from "bun:test";
import { connect } from "node:net";
import type { Committed } from "../../src/proxy/upstream/dispatcher.ts";
import type { ProviderRuntime } from "../../src/proxy/upstream/providerRuntime.ts";
import { whenStreamEnds } from "../../src/http/streamEnd.ts";
import { relayStream, type RelayShape } from "../../src/proxy/upstream/relayStream.ts";
import { UpstreamAttempt } from "../../src/proxy/upstream/upstreamAttempt.ts";
import type { UpstreamFailure } from "../../src/proxy/upstream/upstreamFailure.ts";

const encoder = new TextEncoder();
const timeouts = { connect_ms: 60_000, first_byte_ms: 60_000, idle_ms: 60_000, total_ms: 60_000 };

/** An upstream body made of exactly these reads (no socket: a local Response over a stream). */
function upstreamReads(reads: string[], then: "close" | "hang" = "close"): Response {
  let i = 0;
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(controller) {
        if (i < reads.length) controller.enqueue(encoder.encode(reads[i++]!));
        else if (then === "close") controller.close();
        else return new Promise(() => {});
      },
    }),
  );
}

function committedOver(reads: string[], then: "close" | "hang" = "close"): Promise<Extract<Committed, { kind: "stream" }>> {
  return committedFrom(upstreamReads(reads, then));
}

/** The upstream answer committed as the dispatcher commits a stream: its first event read. */
async function committedFrom(response: Response): Promise<Extract<Committed, { kind: "stream" }>> {
  const attempt = new UpstreamAttempt(new AbortController(), timeouts);
  const first = (await attempt.nextEvent(response))!;
  const firstData = first.data === "[DONE]" ? "[DONE]" : (JSON.parse(first.data) as Record<string, unknown>);
  const committed = {
    kind: "stream",
    attempt,
    response,
    first,
    firstData,
    provider: {} as ProviderRuntime,
    wire: "chat",
    upstreamModel: "m",
    sentAt: 0,
    attempts: 1,
    dropped: [],
  } as Extract<Committed, { kind: "stream" }>;
  return committed;
}

/** Relays through a shape that frames each event's data as `[data]`; returns what each pull sent. */
async function relayed(reads: string[]): Promise<{ writes: string[]; outcome: string | undefined; failure: UpstreamFailure | undefined }> {
  const committed = await committedOver(reads);
  let outcome: string | undefined;
  let failure: UpstreamFailure | undefined;
  const shape: RelayShape = {
    opening: () => "[open]",
    event: (event) => ({ frames: `[${event.data}]`, end: event.data === "[DONE]" }),
    endedEarly: () => "[ended]",
    failed: (f) => `[failed ${f.kind}]`,
    done: (o) => {
      outcome = o;
    },
  };
  const writes: string[] = [];
  const decoder = new TextDecoder();
  for await (const chunk of relayStream(committed, shape, (f) => {
    failure = f;
  }))
    writes.push(decoder.decode(chunk));
  return { writes, outcome, failure };
}

describe("relayStream", () => {
  test("the events of one upstream read go to the client in one write", async () => {
    const { writes, outcome } = await relayed([
      'data: {"n":1}\n\n',
      'data: {"n":2}\n\ndata: {"n":3}\n\ndata: {"n":4}\n\n',
      "data: [DONE]\n\n",
    ]);
    expect(writes).toEqual(['[open][{"n":1}]', '[{"n":2}][{"n":3}][{"n":4}]', "[[DONE]]"]);
    expect(outcome).toBe("ok");
  });

  test("a bad event in the middle of a read: the events before it still reach the client, then the error", async () => {
    const { writes, outcome, failure } = await relayed(['data: {"n":1}\n\n', 'data: {"n":2}\n\ndata: {nope\n\ndata: {"n":3}\n\n']);
    expect(writes).toEqual(['[open][{"n":1}]', '[{"n":2}][failed malformed]']);
    expect(outcome).toBe("error");
    expect(failure?.kind).toBe("malformed");
  });

  test("the stream reports its end to the server, whether it closed or the client cancelled it", async () => {
    const shape: RelayShape = {
      opening: () => "",
      event: (event) => ({ frames: `[${event.data}]`, end: event.data === "[DONE]" }),
      endedEarly: () => "",
      failed: () => "",
      done: () => {},
    };
    const closing = relayStream(await committedOver(['data: {"n":1}\n\n', "data: [DONE]\n\n"]), shape, () => {});
    let closedEnds = 0;
    expect(whenStreamEnds(closing, () => closedEnds++)).toBe(true);
    expect(closedEnds).toBe(0);
    for await (const _ of closing);
    expect(closedEnds).toBe(1);
    // A watcher that comes after the end runs at once.
    whenStreamEnds(closing, () => closedEnds++);
    expect(closedEnds).toBe(2);

    // An upstream that goes silent: only the client's cancel ends this one.
    const cancelled = relayStream(await committedOver(['data: {"n":1}\n\n'], "hang"), shape, () => {});
    let cancelledEnds = 0;
    whenStreamEnds(cancelled, () => cancelledEnds++);
    const reader = cancelled.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('[{"n":1}]');
    expect(cancelledEnds).toBe(0);
    await reader.cancel();
    expect(cancelledEnds).toBe(1);
  });

  test("a shape's passthrough relays events as text: only the ones it declines are parsed, in order and batched per read", async () => {
    const committed = await committedOver([
      'data: {"n":1}\n\n',
      'data: {"skip":2}\n\ndata: {"n":3}\n\ndata: {"skip":4}\n\n',
      'data: {"skip":5}\n\ndata: [DONE]\n\n',
    ]);
    const parsed: unknown[] = [];
    const shape: RelayShape = {
      opening: () => "",
      event: (event, data) => {
        parsed.push(data);
        return { frames: `[${event.data}]`, end: data === "[DONE]" };
      },
      passthrough: (event) => (event.data.includes("skip") ? `<${event.data}>` : undefined),
      endedEarly: () => "",
      failed: () => "",
      done: () => {},
    };
    const writes: string[] = [];
    for await (const chunk of relayStream(committed, shape, () => {})) writes.push(new TextDecoder().decode(chunk));
    expect(writes).toEqual(['[{"n":1}]', '<{"skip":2}>[{"n":3}]<{"skip":4}>', '<{"skip":5}>[[DONE]]']);
    expect(parsed).toEqual([{ n: 1 }, { n: 3 }, "[DONE]"]);
  });

  test("an event the passthrough declines is still checked: a bad one after relayed ones fails the stream", async () => {
    const committed = await committedOver(['data: {"n":1}\n\n', 'data: {"skip":2}\n\ndata: {nope\n\n']);
    let outcome: string | undefined;
    const shape: RelayShape = {
      opening: () => "",
      event: (event) => ({ frames: `[${event.data}]`, end: false }),
      passthrough: (event) => (event.data.includes("skip") ? `<${event.data}>` : undefined),
      endedEarly: () => "[ended]",
      failed: (f) => `[failed ${f.kind}]`,
      done: (o) => {
        outcome = o;
      },
    };
    const writes: string[] = [];
    for await (const chunk of relayStream(committed, shape, () => {})) writes.push(new TextDecoder().decode(chunk));
    expect(writes).toEqual(['[{"n":1}]', '<{"skip":2}>[failed malformed]']);
    expect(outcome).toBe("error");
  });

  test("a stream nobody reports on is left to the caller", () => {
    expect(whenStreamEnds(new ReadableStream(), () => {})).toBe(false);
  });
  test("a reader that reads slowly holds the upstream back too (the Responses WebSocket reads the stream so)", async () => {
    // 10 MB on offer in events of 1 KB.
    const pad = "x".repeat(1000);
    let reads = 0;
    const upstream = new Response(
      new ReadableStream<Uint8Array>({
        pull(controller) {
          if (reads++ < 10_000) controller.enqueue(encoder.encode(`data: {"pad":"${pad}"}\n\n`));
          else controller.close();
        },
      }),
    );
    const shape: RelayShape = {
      opening: () => "",
      event: (e) => ({ frames: `data: ${e.data}\n\n`, end: false }),
      endedEarly: () => "",
      failed: () => "",
      done: () => {},
    };
    const reader = relayStream(await committedFrom(upstream), shape, () => {}).getReader();
    for (let i = 0; i < 10; i++) {
      await reader.read();
      await Bun.sleep(5);
    }
    // Bun lets a direct stream run about 640 KB ahead of a reader: bounded, not the whole upstream.
    expect(reads).toBeLessThan(2_000);
    await reader.cancel();
  });

  test("a client that does not read holds the upstream back: the relay stops reading it until the client takes more", async () => {
    // 64 MB of events on offer, 64 KB a read; a client that reads nothing must not make agentd hold them all.
    const event = `data: {"pad":"${"x".repeat(65_000)}"}\n\n`;
    let reads = 0;
    const upstream = new Response(
      new ReadableStream<Uint8Array>({
        pull(controller) {
          if (reads++ < 1000) controller.enqueue(encoder.encode(event));
          else controller.close();
        },
      }),
    );
    const committed = await committedFrom(upstream);
    let outcome: string | undefined;
    const shape: RelayShape = {
      opening: () => "",
      event: (e) => ({ frames: `data: ${e.data}\n\n`, end: false }),
      endedEarly: () => "",
      failed: () => "",
      done: (o) => {
        outcome = o;
      },
    };
    const stream = relayStream(committed, shape, () => {});
    using server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(stream) });
    const socket = connect(server.port!, "127.0.0.1");
    socket.on("error", () => {});
    socket.pause();
    socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await Bun.sleep(500);
    const heldBack = reads;
    // Bun's own buffer and the kernel's take a few MB; the rest waits for the client.
    expect(heldBack).toBeLessThan(300);
    socket.resume();
    await waitUntil(() => outcome !== undefined);
    expect(reads).toBe(1001);
    expect(outcome).toBe("ok");
    socket.destroy();
  });
});

async function waitUntil(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await Bun.sleep(10);
}
