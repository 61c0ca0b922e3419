import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { restrictDataDir } from "../../src/daemon/dataDirAccess.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

afterEach(() => removeTempDirs());

describe("the data dir's mode", () => {
  test("a new data dir is made 0700", () => {
    const dir = join(makeTempDir(), "fresh", ".agentd");
    expect(restrictDataDir(dir)).toBeUndefined();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  test("agentd's own data dir opened by an older version is closed to others", () => {
    const dir = makeTempDir();
    writeFileSync(join(dir, "agentd.db"), "");
    chmodSync(dir, 0o755);
    expect(restrictDataDir(dir)).toBeUndefined();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  test("a shared directory given as the data dir is left as it is, with a warning", () => {
    const dir = join(makeTempDir(), "shared");
    mkdirSync(dir);
    chmodSync(dir, 0o1777);
    expect(restrictDataDir(dir)).toContain("is not agentd's own");
    expect(statSync(dir).mode & 0o7777).toBe(0o1777);
  });
});
