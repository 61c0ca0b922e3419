import { afterEach, describe, expect, test } from "bun:test";
import { createLogger, eachLine, parseLogLine, readLineBlocks, readLines, setLogLevel, setLogSink } from "../../src/core/log/index.ts";

// The worker's JSON lines, and the supervisor reading them from the pipe.
const lines: string[] = [];
afterEach(() => {
  setLogSink((line) => process.stdout.write(`${line}\n`));
  setLogLevel("info");
  lines.length = 0;
});

function streamOf(chunks: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
      controller.close();
    },
  });
}

async function collect(chunks: (string | Uint8Array)[], maxLineBytes?: number): Promise<string[]> {
  const out: string[] = [];
  await readLines(streamOf(chunks), (line) => out.push(line), { maxLineBytes });
  return out;
}

describe("readLines", () => {
  test("joins lines split across chunks and splits chunks holding several lines", async () => {
    expect(await collect(['{"a":', '1}\n{"b"', ":2}\n", "c\nd\ne"])).toEqual(['{"a":1}', '{"b":2}', "c", "d", "e"]);
  });

  test("CRLF endings lose the CR; empty lines are kept", async () => {
    expect(await collect(["a\r\n\r\nb\n"])).toEqual(["a", "", "b"]);
  });

  test("a multi-byte character split between chunks is decoded whole", async () => {
    const bytes = new TextEncoder().encode("é→ok\n");
    expect(await collect([bytes.slice(0, 1), bytes.slice(1, 3), bytes.slice(3)])).toEqual(["é→ok"]);
  });

  test("a handler that throws is reported and reading goes on", async () => {
    const seen: string[] = [];
    const errors: unknown[] = [];
    const handler = (line: string) => {
      if (line === "bad") throw new Error("disk full");
      seen.push(line);
    };
    await readLines(streamOf(["a\nbad\nb\n"]), handler, { onError: (error) => errors.push(error) });
    expect(seen).toEqual(["a", "b"]);
    expect(errors).toHaveLength(1);
  });

  test("a line that never ends is cut at the limit", async () => {
    const out = await collect(["x".repeat(40), "x".repeat(40), "tail\n"], 64);
    expect(out).toEqual(["x".repeat(80), "tail"]);
  });
});

async function blocks(chunks: (string | Uint8Array)[], maxLineBytes?: number): Promise<string[]> {
  const out: string[] = [];
  await readLineBlocks(streamOf(chunks), (block) => out.push(new TextDecoder().decode(block)), { maxLineBytes });
  return out;
}

describe("readLineBlocks", () => {
  test("each read's whole lines as one block of bytes; a line begun in one read ends in a later one's block", async () => {
    expect(await blocks(['{"a":1}\n{"b"', ":2}\n{", '"c":3', "}\n"])).toEqual(['{"a":1}\n', '{"b":2}\n', '{"c":3}\n']);
  });

  test("the bytes are the read's own: a multi-byte character split between reads is whole in its block", async () => {
    const bytes = new TextEncoder().encode("é→ok\nnext\n");
    const seen: Uint8Array[] = [];
    await readLineBlocks(streamOf([bytes.slice(0, 1), bytes.slice(1, 3), bytes.slice(3)]), (block) => seen.push(block));
    expect(seen.map((b) => new TextDecoder().decode(b))).toEqual(["é→ok\nnext\n"]);
    expect(Buffer.concat(seen)).toEqual(Buffer.from(bytes));
  });

  test("a last line without its LF gets one; a line that never ends is cut at the limit", async () => {
    expect(await blocks(["a\nb"])).toEqual(["a\n", "b\n"]);
    expect(await blocks(["x".repeat(40), "x".repeat(40), "tail\n"], 64)).toEqual([`${"x".repeat(80)}\n`, "tail\n"]);
  });

  test("a line cut at the limit is cut where a character begins, never inside one", async () => {
    const e = new TextEncoder().encode("é");
    const chunks = [
      new Uint8Array([...new TextEncoder().encode("x".repeat(63)), e[0]!]),
      new Uint8Array([e[1]!, ...new TextEncoder().encode("tail\n")]),
    ];
    expect(await blocks(chunks, 60)).toEqual([`${"x".repeat(63)}\n`, "étail\n"]);
    // A line of whole characters is cut at the limit's read, as before.
    expect(await blocks([`${"é".repeat(40)}`, "!\n"], 60)).toEqual([`${"é".repeat(40)}\n`, "!\n"]);
  });

  test("a handler that throws is reported and reading goes on", async () => {
    const seen: string[] = [];
    const errors: unknown[] = [];
    await readLineBlocks(
      streamOf(["a\n", "bad\n", "b\n"]),
      (block) => {
        const text = new TextDecoder().decode(block);
        if (text === "bad\n") throw new Error("disk full");
        seen.push(text);
      },
      { onError: (error) => errors.push(error) },
    );
    expect(seen).toEqual(["a\n", "b\n"]);
    expect(errors).toHaveLength(1);
  });
});

describe("eachLine", () => {
  test("a block's lines without their LF or a CR before it; empty lines kept", () => {
    const seen: string[] = [];
    eachLine('{"a":1}\r\n\r\nb\nc\n', (line) => seen.push(line));
    expect(seen).toEqual(['{"a":1}', "", "b", "c"]);
  });

  test("a handler that throws costs its own line only: the block's later lines still come", () => {
    const seen: string[] = [];
    const errors: unknown[] = [];
    eachLine(
      "a\nbad\nb\nc\n",
      (line) => {
        if (line === "bad") throw new Error("database is locked");
        seen.push(line);
      },
      (error) => errors.push(error),
    );
    expect(seen).toEqual(["a", "b", "c"]);
    expect(errors).toHaveLength(1);
  });
});

describe("createLogger", () => {
  test("one JSON line per event with ts, level, component, event and the fields", () => {
    setLogSink((line) => lines.push(line));
    const log = createLogger("supervisor");
    log.info("worker.spawned", { pid: 42, restarts: 0 });
    log.child("probe").warn("probe.failed", { error: Object.assign(new Error("refused"), { code: "ECONNREFUSED" }) });
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).not.toContain("\n");
    const first = JSON.parse(lines[0]!);
    expect(Object.keys(first).slice(0, 4)).toEqual(["ts", "level", "component", "event"]);
    expect(first).toMatchObject({ level: "info", component: "supervisor", event: "worker.spawned", pid: 42, restarts: 0 });
    expect(new Date(first.ts).toISOString()).toBe(first.ts);
    expect(JSON.parse(lines[1]!)).toMatchObject({
      level: "warn",
      component: "supervisor.probe",
      event: "probe.failed",
      error: { name: "Error", message: "refused", code: "ECONNREFUSED" },
    });
  });

  test("each line's ts is the time it was written, also when a timestamp is reused within a millisecond", async () => {
    setLogSink((line) => lines.push(line));
    const log = createLogger("supervisor");
    const before = Date.now();
    log.info("a.one");
    log.info("a.two");
    await Bun.sleep(5);
    const middle = Date.now();
    log.info("a.three");
    const ts = lines.map((line) => Date.parse(JSON.parse(line).ts));
    expect(ts[0]).toBeGreaterThanOrEqual(before);
    expect(ts[1]).toBeGreaterThanOrEqual(ts[0]!);
    // Written at least 5 ms later: a stale reused stamp would be older than `middle`.
    expect(ts[2]).toBeGreaterThanOrEqual(middle);
  });

  test("a field named like a fixed key does not rewrite it", () => {
    setLogSink((line) => lines.push(line));
    createLogger("supervisor.watchdog").warn("watchdog.incident_opened", {
      component: "worker",
      event: "other",
      level: "debug",
      incident_id: 3,
    });
    expect(JSON.parse(lines[0]!)).toMatchObject({
      component: "supervisor.watchdog",
      event: "watchdog.incident_opened",
      level: "warn",
      incident_id: 3,
    });
  });

  test("events below the level are dropped", () => {
    setLogSink((line) => lines.push(line));
    setLogLevel("warn");
    const log = createLogger("x");
    log.debug("a");
    log.info("b");
    log.warn("c");
    log.error("d");
    expect(lines.map((line) => JSON.parse(line).event)).toEqual(["c", "d"]);
  });

  test("parseLogLine reads logger lines back and ignores anything else", () => {
    setLogSink((line) => lines.push(line));
    createLogger("w").error("http.listen_failed", { port: 1 });
    expect(parseLogLine(lines[0]!)).toMatchObject({ component: "w", event: "http.listen_failed", level: "error", port: 1 });
    expect(parseLogLine("Segmentation fault")).toBeUndefined();
    expect(parseLogLine("{not json")).toBeUndefined();
    expect(parseLogLine('{"event":"x"}')).toBeUndefined();
  });
});
