import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readSessionOutput } from "../../src/pty/sessionOutputRead.ts";
import { ToolOutputStore } from "../../src/pty/toolOutputStore.ts";
import { recordingLogger } from "../support/recordingLogger.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

afterAll(removeTempDirs);

const bounds = { maxBytes: 10 * 1024 * 1024, maxAgeMs: 60_000 };

function sessionWriting(text: string) {
  const bytes = new TextEncoder().encode(text);
  return { id: "abc", takeOutput: () => ({ bytes, droppedBytes: 0 }) };
}

describe("readSessionOutput", () => {
  test("a read within the budget is answered whole, with no file", async () => {
    const store = new ToolOutputStore(join(makeTempDir(), "tool-output"), bounds);
    const read = await readSessionOutput(sessionWriting("\x1b[31mred\x1b[0m\n"), {}, store, recordingLogger());
    expect(read.rendered).toEqual({ output: "\x1b[31mred\x1b[0m\n", truncated: false, originalBytes: 13 });
    expect(read.outputFile).toBeUndefined();
    expect(read.saveWarning).toBeUndefined();
    const stripped = await readSessionOutput(sessionWriting("\x1b[31mred\x1b[0m\n"), { strip_ansi: true }, store, recordingLogger());
    expect(stripped.rendered.output).toBe("red\n");
  });

  test("a truncated read keeps the full output in a file the answer names", async () => {
    const store = new ToolOutputStore(join(makeTempDir(), "tool-output"), bounds);
    const text = "line of output\n".repeat(2000);
    const read = await readSessionOutput(sessionWriting(text), { max_output_tokens: 100 }, store, recordingLogger());
    expect(read.rendered.truncated).toBe(true);
    expect(read.rendered.output.length).toBeLessThan(text.length);
    expect(read.outputFile).toStartWith(store.directory);
    expect(readFileSync(read.outputFile!, "utf8")).toBe(text);
  });

  test("when the full copy cannot be written, the read is still answered, with a warning and a log line", async () => {
    const root = makeTempDir();
    // A file where the directory should be: mkdir fails with ENOTDIR, whoever runs the test.
    writeFileSync(join(root, "blocked"), "");
    const store = new ToolOutputStore(join(root, "blocked", "tool-output"), bounds);
    const log = recordingLogger();
    const read = await readSessionOutput(sessionWriting("x".repeat(100_000)), { max_output_tokens: 100 }, store, log);
    expect(read.rendered.truncated).toBe(true);
    expect(read.outputFile).toBeUndefined();
    expect(read.saveWarning).toStartWith("The full output could not be saved: ");
    expect(log.lines.map((line) => [line.level, line.event, line.fields.op, line.fields.session_id])).toEqual([
      ["warn", "pty.error", "save_output", "abc"],
    ]);
  });
});
