import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RotatingFile } from "../../src/core/log/index.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

// The supervisor's <data_dir>/logs/agentd.log.
afterAll(removeTempDirs);

const line = (n: number) => `line-${String(n).padStart(4, "0")} ${"x".repeat(89)}`; // 100 bytes with the newline
/** Whole lines as the supervisor hands them over: bytes, each line ended by LF. */
const bytesOf = (...lines: string[]) => Buffer.from(lines.map((l) => `${l}\n`).join(""));

describe("RotatingFile", () => {
  test("rotates by size and keeps N old files, newest in .1", () => {
    const dir = makeTempDir();
    const path = join(dir, "logs", "agentd.log");
    const file = new RotatingFile({ path, maxBytes: 1000, keep: 3 });
    for (let i = 0; i < 55; i++) file.append(bytesOf(line(i)));
    expect(readdirSync(join(dir, "logs")).sort()).toEqual(["agentd.log", "agentd.log.1", "agentd.log.2", "agentd.log.3"]);
    const lines = (name: string) =>
      readFileSync(join(dir, "logs", name), "utf8")
        .trimEnd()
        .split("\n");
    expect(lines("agentd.log")).toEqual([50, 51, 52, 53, 54].map(line));
    expect(lines("agentd.log.1")).toEqual(Array.from({ length: 10 }, (_, i) => line(40 + i)));
    expect(lines("agentd.log.2")[0]).toBe(line(30));
    expect(lines("agentd.log.3")[0]).toBe(line(20));
    for (const name of readdirSync(join(dir, "logs"))) expect(statSync(join(dir, "logs", name)).size).toBeLessThanOrEqual(1000);
  });

  test("keep 0 keeps no old file", () => {
    const dir = makeTempDir();
    const file = new RotatingFile({ path: join(dir, "a.log"), maxBytes: 250, keep: 0 });
    for (let i = 0; i < 7; i++) file.append(bytesOf(line(i)));
    expect(readdirSync(dir)).toEqual(["a.log"]);
    expect(readFileSync(join(dir, "a.log"), "utf8")).toBe(`${line(6)}\n`);
  });

  test("counts an existing file's size after a restart", () => {
    const dir = makeTempDir();
    const path = join(dir, "a.log");
    writeFileSync(path, `${line(0)}\n`.repeat(9));
    new RotatingFile({ path, maxBytes: 1000, keep: 2 }).append(bytesOf(line(9)));
    expect(readdirSync(dir).sort()).toEqual(["a.log"]);
    new RotatingFile({ path, maxBytes: 1000, keep: 2 }).append(bytesOf(line(10)));
    expect(readdirSync(dir).sort()).toEqual(["a.log", "a.log.1"]);
    expect(readFileSync(path, "utf8")).toBe(`${line(10)}\n`);
  });

  test("a line longer than the limit is still written, alone", () => {
    const dir = makeTempDir();
    const path = join(dir, "a.log");
    const file = new RotatingFile({ path, maxBytes: 100, keep: 1 });
    file.append(bytesOf("short"));
    file.append(bytesOf("y".repeat(500)));
    expect(readFileSync(path, "utf8")).toBe(`${"y".repeat(500)}\n`);
    expect(readFileSync(`${path}.1`, "utf8")).toBe("short\n");
  });

  test("a torn last line (no newline) is cut back when the file is opened; whole lines stay", () => {
    const dir = makeTempDir();
    const path = join(dir, "agentd.log");
    writeFileSync(path, `${line(1)}\n${line(2)}\n{"ts":"2025-01-01T00:00:00Z","lev`);
    const file = new RotatingFile({ path, maxBytes: 1_000_000, keep: 1 });
    file.append(bytesOf(line(3)));
    expect(readFileSync(path, "utf8")).toBe(`${line(1)}\n${line(2)}\n${line(3)}\n`);
  });

  test("a file that is one torn line longer than the scan window is emptied; a whole file is left as it is", () => {
    const dir = makeTempDir();
    const torn = join(dir, "torn.log");
    writeFileSync(torn, "y".repeat(200_000));
    new RotatingFile({ path: torn, maxBytes: 1_000_000, keep: 1 });
    expect(statSync(torn).size).toBe(0);
    const whole = join(dir, "whole.log");
    writeFileSync(whole, `${line(1)}\n`);
    new RotatingFile({ path: whole, maxBytes: 1_000_000, keep: 1 });
    expect(readFileSync(whole, "utf8")).toBe(`${line(1)}\n`);
  });
});

describe("RotatingFile.append", () => {
  test("many lines at once rotate exactly where one at a time would", () => {
    const dir = makeTempDir();
    const one = new RotatingFile({ path: join(dir, "one", "a.log"), maxBytes: 1000, keep: 3 });
    const many = new RotatingFile({ path: join(dir, "many", "a.log"), maxBytes: 1000, keep: 3 });
    const lines = Array.from({ length: 55 }, (_, i) => line(i));
    for (const l of lines) one.append(bytesOf(l));
    many.append(bytesOf(...lines.slice(0, 7)));
    many.append(bytesOf(...lines.slice(7, 31)));
    many.append(bytesOf());
    many.append(bytesOf(...lines.slice(31)));
    for (const name of ["a.log", "a.log.1", "a.log.2", "a.log.3"])
      expect(readFileSync(join(dir, "many", name), "utf8")).toBe(readFileSync(join(dir, "one", name), "utf8"));
  });
});
