import { describe, expect, test } from "bun:test";
import type { Committed } from "../../src/proxy/upstream/dispatcher.ts";
import type { ProviderRuntime } from "../../src/proxy/upstream/providerRuntime.ts";
import { relayStream, type RelayShape } from "../../src/proxy/upstream/relayStream.ts";
import { UpstreamAttempt } from "../../src/proxy/upstream/upstreamAttempt.ts";
import type { UpstreamFailure } from "../../src/proxy/upstream/upstreamFailure.ts";

const encoder = new TextEncoder();
const timeouts = { connect_ms: 60_000, first_byte_ms: 60_000, idle_ms: 60_000, total_ms: 60_000 };

/** An upstream body made of exactly these reads (no socket: a local Response over a stream). */
function upstreamReads(reads: string[]): Response {
  let i = 0;
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(controller) {
        if (i < reads.length) controller.enqueue(encoder.encode(reads[i++]!));
        else controller.close();
      },
    }),
  );
}

/** Relays through a shape that frames each event's data as `[data]`; returns what each pull sent. */
async function relayed(reads: string[]): Promise<{ writes: string[]; outcome: string | undefined; failure: UpstreamFailure | undefined }> {
  const response = upstreamReads(reads);
  const attempt = new UpstreamAttempt(new AbortController().signal, timeouts);
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
  } as Extract<Committed, { kind: "stream" }>;
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
});
