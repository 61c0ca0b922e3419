import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  readReadyFile,
  readyFilePath,
  removeReadyFile,
  removeStaleReadyFile,
  removeSupervisorReadyFile,
  writeReadyFile,
  type ReadyInfo,
} from "../../src/daemon/readyFile.ts";
import { raceTimeout } from "../../src/core/process/raceTimeout.ts";
import { serveArgs } from "../../src/daemon/serveOptions.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

afterAll(removeTempDirs);

const info = (pid: number): ReadyInfo => ({
  pid,
  supervisor_pid: 1,
  bind: "127.0.0.1",
  port: 4321,
  url: "http://127.0.0.1:4321",
  version: "0.0.0",
  started_at: new Date(0).toISOString(),
});

describe("ready.json", () => {
  test("written whole (no temp file left), mode 0600, read back", () => {
    const dir = makeTempDir();
    writeReadyFile(dir, info(10));
    expect(readdirSync(dir)).toEqual(["ready.json"]);
    expect(statSync(readyFilePath(dir)).mode & 0o777).toBe(0o600);
    expect(readReadyFile(dir)).toEqual(info(10));
  });

  test("removed only by the worker that wrote it", () => {
    const dir = makeTempDir();
    writeReadyFile(dir, info(11));
    removeReadyFile(dir, 12);
    expect(readReadyFile(dir)?.pid).toBe(11);
    removeReadyFile(dir, 11);
    expect(existsSync(join(dir, "ready.json"))).toBe(false);
    expect(readReadyFile(dir)).toBeUndefined();
  });

  test("removed by the supervisor whose worker wrote it, left for another supervisor's", () => {
    const dir = makeTempDir();
    writeReadyFile(dir, info(13));
    removeSupervisorReadyFile(dir, 2);
    expect(readReadyFile(dir)?.pid).toBe(13);
    removeSupervisorReadyFile(dir, 1);
    expect(existsSync(readyFilePath(dir))).toBe(false);
    removeSupervisorReadyFile(dir, 1);
  });

  test("a stale one is removed whoever wrote it, and a missing one is no error", () => {
    const dir = makeTempDir();
    writeReadyFile(dir, info(14));
    removeStaleReadyFile(dir);
    expect(existsSync(readyFilePath(dir))).toBe(false);
    removeStaleReadyFile(dir);
  });
});

describe("raceTimeout", () => {
  test("the promise's value when it settles first, 'timeout' otherwise", async () => {
    expect(await raceTimeout(Promise.resolve(7), 10_000)).toBe(7);
    expect(await raceTimeout(new Promise(() => {}), 1)).toBe("timeout");
  });
});

describe("serveArgs: the supervisor passes its options on to the worker", () => {
  test("every option given, none invented", () => {
    expect(serveArgs({})).toEqual([]);
    expect(serveArgs({ configPath: "/c.jsonc", dataDir: "/d", bind: "::1", port: 0, logLevel: "debug" })).toEqual([
      "--config",
      "/c.jsonc",
      "--data-dir",
      "/d",
      "--bind",
      "::1",
      "--port",
      "0",
      "--log-level",
      "debug",
    ]);
  });
});
