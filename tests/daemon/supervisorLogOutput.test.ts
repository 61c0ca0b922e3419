import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatForOutput, RotatingFile } from "../../src/core/log/index.ts";
import type { LogFormat } from "../../src/core/log/index.ts";
import { SupervisorLogOutput } from "../../src/daemon/supervisorLogOutput.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const line = (event: string, extra = "") =>
  `{"ts":"2026-11-27T12:00:00.000Z","level":"info","component":"proxy","event":"${event}"${extra}}`;

/** An output over a fresh log file, with what it wrote to stdout. */
function output(format: LogFormat, maxBytes = 1 << 20): { out: SupervisorLogOutput; path: string; stdout: () => string } {
  const dir = mkdtempSync(join(tmpdir(), "agentd-logout-"));
  dirs.push(dir);
  const path = join(dir, "agentd.log");
  const out = new SupervisorLogOutput(new RotatingFile({ path, maxBytes, keep: 1 }), path, format);
  let written = "";
  const stdout = () => written;
  const realWrite = process.stdout.write.bind(process.stdout);
  // Only the flush writes: the capture is put back right after it.
  const flush = out.flush;
  Object.defineProperty(out, "flush", {
    value: () => {
      process.stdout.write = ((chunk: string | Uint8Array) => {
        written += typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk);
        return true;
      }) as typeof process.stdout.write;
      try {
        flush();
      } finally {
        process.stdout.write = realWrite;
      }
    },
  });
  return { out, path, stdout };
}

describe("SupervisorLogOutput", () => {
  test("the supervisor's own lines and the worker's blocks go out in the order they came, as the bytes they came in", () => {
    const { out, path, stdout } = output("json");
    out.write(line("supervisor.start"));
    const block = Buffer.from(`${line("proxy.request", ',"model":"é→"')}\n${line("proxy.request")}\n`);
    out.writeBlock(block);
    out.write(line("worker.restart"));
    out.flush();
    const expected = `${line("supervisor.start")}\n${block.toString()}${line("worker.restart")}\n`;
    expect(readFileSync(path, "utf8")).toBe(expected);
    expect(stdout()).toBe(expected);
    // Nothing held is written twice.
    out.flush();
    expect(readFileSync(path, "utf8")).toBe(expected);
  });

  test("human output formats each line for stdout; the file keeps the JSON", () => {
    const { out, path, stdout } = output("human");
    out.writeBlock(Buffer.from(`${line("proxy.request", ',"status":200')}\nnot json\n`));
    out.flush();
    expect(stdout()).toBe(`${formatForOutput(line("proxy.request", ',"status":200'), "human")}\nnot json\n`);
    expect(stdout()).toContain("INFO  proxy proxy.request status=200\n");
    expect(readFileSync(path, "utf8")).toBe(`${line("proxy.request", ',"status":200')}\nnot json\n`);
  });

  test("a block that takes the file over its limit rotates it between lines, not inside one", () => {
    const { out, path } = output("json", 300);
    const lines = Array.from({ length: 5 }, (_, i) => line("proxy.request", `,"n":${i}`));
    out.writeBlock(Buffer.from(`${lines.join("\n")}\n`));
    out.flush();
    const current = readFileSync(path, "utf8");
    const rotated = readFileSync(`${path}.1`, "utf8");
    expect(rotated.endsWith("\n") && current.endsWith("\n")).toBe(true);
    expect(`${rotated}${current}`.split("\n").slice(-4, -1)).toEqual(lines.slice(2));
    for (const text of [rotated, current]) for (const l of text.trimEnd().split("\n")) expect(() => JSON.parse(l)).not.toThrow();
  });
});
