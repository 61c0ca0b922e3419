import { afterEach, describe, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LogFileTailer } from "../../src/watchdog/checks/logFileTailer.ts";
import { createHarness, type Harness } from "./watchdogHarness.ts";

const dirs: string[] = [];
let harness: Harness | undefined;
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  harness?.close();
  harness = undefined;
});

function tempLog(): string {
  const dir = mkdtempSync(join(tmpdir(), "agentd-tail-"));
  dirs.push(dir);
  const path = join(dir, "app.log");
  writeFileSync(path, "old line before we started\n");
  return path;
}

describe("tailing a log file", () => {
  test("starts at the end, follows appends, partial lines wait for their newline", () => {
    const path = tempLog();
    const lines: string[] = [];
    const tailer = new LogFileTailer(path, (line) => lines.push(line));
    tailer.start(60_000);
    appendFileSync(path, "one\ntw");
    tailer.poll();
    appendFileSync(path, "o\n");
    tailer.poll();
    tailer.stop();
    expect(lines).toEqual(["one", "two"]);
  });

  test("follows rotation: the old file is read to its end, then the new one from its start", () => {
    const path = tempLog();
    const lines: string[] = [];
    const tailer = new LogFileTailer(path, (line) => lines.push(line));
    tailer.start(60_000);
    appendFileSync(path, "before rotation\n");
    tailer.poll();
    appendFileSync(path, "last words of the old file\n");
    renameSync(path, `${path}.1`);
    writeFileSync(path, "first line of the new file\n");
    tailer.poll();
    appendFileSync(path, "second line of the new file\n");
    tailer.poll();
    tailer.stop();
    expect(lines).toEqual(["before rotation", "last words of the old file", "first line of the new file", "second line of the new file"]);
  });

  test("follows truncation (copytruncate): reads again from the start", () => {
    const path = tempLog();
    const lines: string[] = [];
    const tailer = new LogFileTailer(path, (line) => lines.push(line));
    tailer.start(60_000);
    appendFileSync(path, "a fairly long line before truncation\n");
    tailer.poll();
    writeFileSync(path, "after\n");
    tailer.poll();
    tailer.stop();
    expect(lines).toEqual(["a fairly long line before truncation", "after"]);
  });

  test("a file that appears later is picked up from its start", () => {
    const path = join(mkdtempSync(join(tmpdir(), "agentd-tail-")), "late.log");
    dirs.push(join(path, ".."));
    const lines: string[] = [];
    const tailer = new LogFileTailer(path, (line) => lines.push(line));
    tailer.start(60_000);
    tailer.poll();
    writeFileSync(path, "hello\n");
    tailer.poll();
    tailer.stop();
    expect(lines).toEqual(["hello"]);
  });

  test("lines of a tailed file raise signals, across a rotation", async () => {
    const path = tempLog();
    harness = createHarness({
      signatures: [
        {
          id: "nginx.upstream_timeout",
          title: "nginx upstream timed out",
          category: "upstream",
          severity: "error",
          regex: "upstream timed out",
          component: "nginx",
        },
      ],
      rules: [{ when: { signal: "nginx.upstream_timeout", count: 2 }, do: "alert" }],
    });
    const h = harness;
    const pending: Array<Promise<void> | undefined> = [];
    const tailer = new LogFileTailer(path, (line) => pending.push(h.watchdog.ingestLine(line)));
    tailer.start(60_000);
    appendFileSync(path, "[error] upstream timed out (110) while reading\n");
    renameSync(path, `${path}.1`);
    writeFileSync(path, "[error] upstream timed out (110) while connecting\n");
    tailer.poll();
    tailer.stop();
    await Promise.all(pending);
    expect(h.events("watchdog.alert")).toHaveLength(1);
    expect(h.events("watchdog.incident_opened")[0]).toMatchObject({ incident_component: "nginx", signal: "nginx.upstream_timeout" });
  });
});
